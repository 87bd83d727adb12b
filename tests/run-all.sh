#!/usr/bin/env bash
# Builds shmwatch twice (plain, and with AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs the tests of each: every test in the plain build, all but
# the slow real-stack ones (plain_only_tests in tests/meson.build) in the other.
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
sanitize_args=(-Db_sanitize=address,undefined -Db_lundef=false)
sanitize_pid=
passed=0
failed=0
skipped=0
for variant in plain sanitize; do
  dir=build
  args=()
  if [ "$variant" = sanitize ]; then
    dir=build-sanitize
    args=("${sanitize_args[@]}")
  fi
  echo "== $variant build ($dir)"
  if [ "$variant" = sanitize ] && [ -n "$sanitize_pid" ]; then
    sanitize_rc=0
    wait "$sanitize_pid" || sanitize_rc=$?
    cat "$sanitize_log"
    rm -f "$sanitize_log"
    [ "$sanitize_rc" -eq 0 ] || { echo "run-all: the $variant build failed" >&2; exit 1; }
  fi
  bash tests/build.sh "$dir" "${args[@]}"
  # The sanitizer build compiles (niced, its output kept for later) while the
  # plain build's tests run: they run one at a time and mostly wait on
  # processes, not on the CPU.
  if [ "$variant" = plain ]; then
    sanitize_log=$(mktemp /tmp/shmwatch-sanitize-build.XXXXXX)
    nice -n 10 bash tests/build.sh build-sanitize "${sanitize_args[@]}" >"$sanitize_log" 2>&1 &
    sanitize_pid=$!
  fi
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
