#!/usr/bin/env bash
# Builds shmwatch twice (plain, and with AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs the tests of each: every test in the plain build; the
# unit tests, the fuzz corpora and the integration tests chosen by coverage
# (sanitize_tests in tests/meson.build, the suite 'sanitize') in the other.
#
# The tests mostly wait on processes, not on the CPU, so they run side by side,
# in three lanes at once, six tests in all on two cores: more at once costs
# more CPU in all (each shmwatch of a test reads every process of the
# machine, the other tests' too), and the run is bound by the CPU:
#   plain      the plain build's tests but the Docker ones, SHMWATCH_TEST_JOBS
#              at a time (default 3); its output is shown as it comes
#   docker     the plain build's Docker tests (the suite 'docker'), one at a
#              time: their daemons share one cached data root
#   sanitize   the sanitizer build, compiled (niced) while the plain build's
#              tests run, then its tests, SHMWATCH_SANITIZE_JOBS at a time
#              (default 2)
# The docker and sanitize lanes' output is shown when each ends; a lane's log
# is kept in DIR/run-all[-LANE].log, meson's in DIR/meson-logs.
set -euo pipefail
cd "$(dirname "$0")/.."

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
jobs=${SHMWATCH_TEST_JOBS:-3}

# A compiler cache (meson uses ccache when it finds it) outside the checkout,
# beside the test roots: a rerun, or a clone at another path (hashed relative
# to it), compiles only what changed. The package test's build uses it too.
if [ "$(id -u)" -eq 0 ]; then
  export CCACHE_DIR=${CCACHE_DIR:-/var/cache/shmwatch-tests/ccache}
fi
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
sanitize_jobs=${SHMWATCH_SANITIZE_JOBS:-2}

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

echo "== plain build (build)"
bash tests/build.sh build

# The sanitizer build compiles (niced: the plain build's tests come first)
# while the plain build's tests run, then runs its own tests. It compiles
# without optimization (-O0): the sanitizers check the same, the compile takes
# a third of the CPU of -O2's (about 50 CPU seconds against 170), and the
# tests, whose time goes to the processes they watch and drive rather than to
# shmwatch, take no longer. The plain build keeps -O2, whose warnings need
# the optimizer's analysis.
echo "== sanitize build (build-sanitize): compiling beside the plain build's tests"
mkdir -p build-sanitize
(
  if ! nice -n 10 bash tests/build.sh build-sanitize -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=0; then
    echo "run-all: the sanitize build failed"
    exit 1
  fi
  meson test -C build-sanitize --no-rebuild --print-errorlogs --num-processes "$sanitize_jobs"
) >build-sanitize/run-all.log 2>&1 &
sanitize_pid=$!

echo "== plain build's Docker tests (suite docker), one at a time, beside the others"
meson test -C build --no-rebuild --print-errorlogs --suite docker --num-processes 1 \
  --logbase testlog-docker >build/run-all-docker.log 2>&1 &
docker_pid=$!

echo "== plain build's tests but the Docker ones, $jobs at a time"
status=0
meson test -C build --no-rebuild --print-errorlogs --no-suite docker --num-processes "$jobs" 2>&1 |
  tee build/run-all.log || status=1

rc=0
wait "$docker_pid" || rc=$?
echo "== plain build's Docker tests (build/run-all-docker.log)"
cat build/run-all-docker.log
[ "$rc" -eq 0 ] || status=1

rc=0
wait "$sanitize_pid" || rc=$?
echo "== sanitize build's tests (build-sanitize/run-all.log)"
cat build-sanitize/run-all.log
[ "$rc" -eq 0 ] || status=1

[ -z "$rootfs_pid" ] || wait "$rootfs_pid" || true
[ -z "$bookworm_pid" ] || wait "$bookworm_pid" || true

# meson's summary of each lane: "Ok: N", "Expected Fail: N", "Fail: N",
# "Unexpected Pass: N", "Skipped: N", "Timeout: N".
passed=0
failed=0
skipped=0
for log in build/run-all.log build/run-all-docker.log build-sanitize/run-all.log; do
  count() { awk -v k="$1" '$0 ~ "^" k ":" { n = $NF } END { print n + 0 }' "$log"; }
  passed=$((passed + $(count Ok) + $(count "Expected Fail")))
  failed=$((failed + $(count Fail) + $(count "Unexpected Pass") + $(count Timeout)))
  skipped=$((skipped + $(count Skipped)))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
# The end of each failed test's output (meson's JSON logs keep it whole),
# then the failed tests by name, last: a log cut short keeps its end.
python3 - build/meson-logs/testlog.json build/meson-logs/testlog-docker.json \
  build-sanitize/meson-logs/testlog.json <<'PY' || true
import json, os, sys
for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    for line in open(path, errors="replace"):
        t = json.loads(line)
        if t["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
            continue
        out = ((t.get("stdout") or "") + (t.get("stderr") or "")).splitlines()
        print("--- %s: %s, the last lines of its output" % (t["name"], t["result"]))
        print("\n".join(out[-15:]))
PY
for log in build/run-all.log build/run-all-docker.log build-sanitize/run-all.log; do
  awk -v lane="$log" '$1 ~ /^[0-9]+\/[0-9]+$/ && $0 ~ / (FAIL|TIMEOUT|UNEXPECTEDPASS) / && !seen[$4]++ {
    print "failed: " $4 " (" lane ")" }' "$log"
done
[ "$failed" -eq 0 ] || status=1
exit $status
