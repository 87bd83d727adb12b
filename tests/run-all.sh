#!/usr/bin/env bash
# Builds shmwatch twice (plain, and with AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs every test, unit and integration, in both builds.
set -euo pipefail
cd "$(dirname "$0")/.."

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# The PyTorch 2.x root (tests/stack/rootfs.sh, cached outside the checkout)
# takes a few minutes to build the first time: start it now, beside the
# compilation. The NAME-2.x tests wait for it (and say why if it failed).
rootfs_pid=
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null && ! bash tests/stack/rootfs.sh --check; then
  bash tests/stack/rootfs.sh >/dev/null 2>&1 &
  rootfs_pid=$!
fi

# The same for the bare Debian 12 root the package test installs into
# (tests/stack/bookworm.sh, about a minute the first time).
bookworm_pid=
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null && ! bash tests/stack/bookworm.sh --check; then
  bash tests/stack/bookworm.sh >/dev/null 2>&1 &
  bookworm_pid=$!
fi

status=0
passed=0
failed=0
skipped=0
for variant in plain sanitize; do
  dir=build
  args=()
  if [ "$variant" = sanitize ]; then
    dir=build-sanitize
    args=(-Db_sanitize=address,undefined -Db_lundef=false)
  fi
  echo "== $variant build ($dir)"
  bash tests/build.sh "$dir" "${args[@]}"
  log=$dir/run-all.log
  if ! meson test -C "$dir" --print-errorlogs --num-processes 2 2>&1 | tee "$log"; then
    status=1
  fi
  # meson's summary: "Ok: N", "Expected Fail: N", "Fail: N", "Unexpected Pass: N",
  # "Skipped: N", "Timeout: N".
  count() { awk -v k="$1" '$0 ~ "^" k ":" { n = $NF } END { print n + 0 }' "$log"; }
  passed=$((passed + $(count Ok) + $(count "Expected Fail")))
  failed=$((failed + $(count Fail) + $(count "Unexpected Pass") + $(count Timeout)))
  skipped=$((skipped + $(count Skipped)))
done
[ -z "$rootfs_pid" ] || wait "$rootfs_pid" || true
[ -z "$bookworm_pid" ] || wait "$bookworm_pid" || true
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || status=1
exit $status
