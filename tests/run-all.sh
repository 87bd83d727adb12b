#!/usr/bin/env bash
# Builds shmwatch twice (plain, and with AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs every test, unit and integration, in both builds.
set -euo pipefail
cd "$(dirname "$0")/.."

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

status=0
for variant in plain sanitize; do
  dir=build
  args=()
  if [ "$variant" = sanitize ]; then
    dir=build-sanitize
    args=(-Db_sanitize=address,undefined -Db_lundef=false)
  fi
  echo "== $variant build ($dir)"
  bash tests/build.sh "$dir" "${args[@]}"
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2; then
    status=1
  fi
done
exit $status
