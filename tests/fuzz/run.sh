#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (ASan + UBSan) in build-fuzz and
# runs each for SECONDS (default 60), one after the other:
#   tests/fuzz/run.sh [SECONDS [TARGET...]]
# Seeds: tests/fuzz/seeds/TARGET and the fixtures of tests/fixtures. The
# corpora grow in build-fuzz/corpus; crash, leak and timeout inputs land in
# build-fuzz/artifacts. Exits non-zero when any harness found one.
set -euo pipefail
cd "$(dirname "$0")/../.."

secs=${1:-60}
shift || true
dir=build-fuzz

if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" -Dfuzz=true -Dtests=false -Db_lundef=false -Dbuildtype=debugoptimized
fi
ninja -C "$dir"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    t=${f##*/fuzz_}
    targets+=("${t%.c}")
  done
fi

fx=tests/fixtures
# Fixture files that make good starting points, per target.
seed_files() {
  case $1 in
    mountinfo) echo $fx/mounts/mountinfo $fx/mounts/mountinfo-no-tmpfs $fx/cgroup/*/proc/self/mountinfo ;;
    procs_stat) echo $fx/procfiles/proc/*/stat ;;
    cgroup) echo $fx/cgroup/*/proc/self/cgroup $(find $fx/cgroup -name 'memory.*') ;;
    sysv) echo $fx/sysvipc/shm ;;
    config) echo $fx/config/good/*.yaml $fx/config/bad/*.yaml ;;
    theme) echo themes/*.yaml $(find $fx/config/themes $fx/config/themedirs -name '*.yaml') ;;
    maps) echo $fx/procfiles/proc/*/maps ;;
    container_id) echo $fx/containers/cgroup/* ;;
    docker_config) find $fx/containers -type f -name '*.json' ;; # -type f: no link to /etc/shadow
  esac
}

mkdir -p "$dir/artifacts" "$dir/tmp"
export TMPDIR=$PWD/$dir/tmp
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
for t in "${targets[@]}"; do
  exe=$dir/tests/fuzz/fuzz_$t
  [ -x "$exe" ] || { echo "no harness fuzz_$t" >&2; exit 2; }
  corpus=$dir/corpus/$t
  seeds=$dir/seeds/$t
  mkdir -p "$corpus" "$seeds"
  for f in $(seed_files "$t"); do
    cp "$f" "$seeds/$(echo "${f#$fx/}" | tr / _)"
  done
  dirs=("$corpus" "$seeds")
  [ -d tests/fuzz/seeds/$t ] && dirs+=(tests/fuzz/seeds/$t)
  echo "== fuzz_$t for ${secs}s"
  if ! "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" "${dirs[@]}" \
      >"$dir/fuzz_$t.log" 2>&1; then
    failed+=("$t")
    tail -n 40 "$dir/fuzz_$t.log"
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' \
    "$dir/fuzz_$t.log" | awk '!seen[$1]++ { printf "%s %s  ", $1, $2 } END { print "" }'
  rm -rf "$TMPDIR"/shmwatch-fuzz-*
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: found problems in: ${failed[*]} (inputs in $dir/artifacts)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} harnesses ran ${secs}s each, nothing found"
