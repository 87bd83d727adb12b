#!/usr/bin/env bash
# shmwatch's benchmark: CPU cost of `shmwatch --json` against a floor program
# and `lsof -nP /dev/shm` on real scenes, instruction counts, and the
# dashboard's steady state. Run as root from the source tree:
#
#   tests/bench/run.sh [--quick] [--runs N] [--build DIR] [--scenes LIST]
#                      [--no-callgrind] [--no-dashboard] [--dashboard-seconds S]
#                      [--save-baseline]
#
# Each scene is built by tests/helpers/shmscene (s7: a real PyTorch
# DataLoader, tests/torch/workload.py) in a private mount namespace on a
# tmpfs of its own at /dev/shm (the host's /dev/shm is never touched).
# n1 is the node view's scene: 20 "containers", each a shmscene (a main and
# 8 workers) in a mount namespace of its own with its own tmpfs at /dev/shm,
# measured with `shmwatch --all` against `floor --all`. r1 (a main and 8
# workers) is the recorder's: `shmwatch record` at its default interval
# beside a `--json --interval` stream at the same interval.
# The commands run alternately, N times each after one warm-up round; CPU is
# user + system time of each run (tests/bench/cputime.py), a ratio the median
# of the rounds' ratios (both sides of each from one round). Every target of
# doc/performance.md is printed with PASS or FAIL; the exit status is 1 when
# one fails, 2 when the bench could not run. Instruction counts are shown
# next to the recorded ones in tests/bench/baseline (exact, unlike times);
# --save-baseline records this run's counts there (after showing them against the old ones).
set -euo pipefail

ARGS=("$@")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
QUICK=0
RUNS=
SCENES=
CALLGRIND=1
SAVE_BASELINE=0
DASHBOARD=1
DASH_SECONDS=

usage() {
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" # the header, whole
    exit "${1:-0}"
}

while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=1 ;;
    --runs) RUNS=$2; shift ;;
    --build) BUILD=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift ;;
    --scenes) SCENES=$2; shift ;;
    --no-callgrind) CALLGRIND=0 ;;
    --save-baseline) SAVE_BASELINE=1 ;;
    --no-dashboard) DASHBOARD=0 ;;
    --dashboard-seconds) DASH_SECONDS=$2; shift ;;
    -h | --help) usage 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage 2 ;;
    esac
    shift
done

die() {
    echo "run.sh: $*" >&2
    exit 2
}

if [ -z "${SHMWATCH_BENCH_NS:-}" ]; then
    [ "$(id -u)" -eq 0 ] || die "needs root (it mounts a tmpfs at /dev/shm in a private mount namespace)"
    for c in unshare mount python3 ninja; do
        command -v "$c" >/dev/null || die "needs $c"
    done
    if [ ! -f "$BUILD/build.ninja" ]; then
        bash "$SRC/tests/build.sh" "$BUILD" >/dev/null || die "build failed"
    fi
    ninja -C "$BUILD" src/shmwatch tests/shmscene tests/floor >/dev/null || die "build failed"
    export SHMWATCH_BENCH_NS=1
    exec unshare -m --propagation private bash "$0" "${ARGS[@]}" --build "$BUILD"
fi

SHMWATCH=$BUILD/src/shmwatch
SHMSCENE=$BUILD/tests/shmscene
FLOOR=$BUILD/tests/floor
CPUTIME=$SRC/tests/bench/cputime.py
BASELINE=$SRC/tests/bench/baseline
TMP=$(mktemp -d /tmp/shmwatch-bench.XXXXXX)
SCENE_PID=
NODE_PIDS=()
TMUX_SOCK=shmwatch-bench-$$
# The user's configuration must not change what is measured.
export XDG_CONFIG_HOME=$TMP/config HOME=$TMP
mkdir -p "$XDG_CONFIG_HOME"

cleanup() {
    stop_scene
    tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
    umount /dev/shm >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$QUICK" = 1 ]; then
    RUNS=${RUNS:-3}
    DASH_SECONDS=${DASH_SECONDS:-10}
    # name : shmscene arguments : label
    ALL_SCENES=(
        "s1|--workers 50 --per-worker 30 --orphans 100|50 x 30 + 100 orphans"
        "s2|--workers 100 --per-worker 10|100 x 10"
        "s3|--workers 200 --per-worker 10|200 x 10"
        "s4|--workers 10 --per-worker 500|10 x 500"
        "s5|--workers 10 --per-worker 1000|10 x 1,000"
        "s6|--workers 0 --unheld 20000 --unheld-size 0|20,000 named, no holders"
        "s7|--workers 4|PyTorch DataLoader x 4"
        "n1|--containers 20 --workers 8 --per-worker 5|20 containers x (1 + 8 x 5)"
        "r1|--workers 8 --per-worker 5|DataLoader x 8 (recorder)"
    )
else
    RUNS=${RUNS:-7}
    DASH_SECONDS=${DASH_SECONDS:-60}
    ALL_SCENES=(
        "s1|--workers 200 --per-worker 30 --orphans 500|200 x 30 + 500 orphans"
        "s2|--workers 500 --per-worker 10|500 x 10"
        "s3|--workers 1000 --per-worker 10|1,000 x 10"
        "s4|--workers 20 --per-worker 2500|20 x 2,500"
        "s5|--workers 20 --per-worker 5000|20 x 5,000"
        "s6|--workers 0 --unheld 100000 --unheld-size 0|100,000 named, no holders"
        "s7|--workers 8|PyTorch DataLoader x 8"
        "n1|--containers 20 --workers 8 --per-worker 20|20 containers x (1 + 8 x 20)"
        "r1|--workers 8 --per-worker 5|DataLoader x 8 (recorder)"
    )
fi
# Segments are one page each, written (so every one is allocated), held in
# the three ways PyTorch holds them: named (fd + mapping + name), fd only
# (file_descriptor strategy), mapping only.
# shellcheck disable=SC2054 # named,fd,map is one argument
COMMON=(--size 4096 --orphan-size 4096 --modes named,fd,map)

# s7 is a real PyTorch job (python3-torch): a DataLoader whose main process
# holds 8 batches from persistent fork workers (file_descriptor strategy), so
# the processes map the few hundred libraries PyTorch loads.
TORCH_PY=/usr/bin/python3

# --- scenes -----------------------------------------------------------------

stop_scene() {
    local p
    for p in "${NODE_PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
    done
    for p in "${NODE_PIDS[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    NODE_PIDS=()
    if [ -n "$SCENE_PID" ]; then
        exec 3>&- # the torch job's stdin: EOF lets it finish
        kill -TERM "$SCENE_PID" 2>/dev/null || true
        wait "$SCENE_PID" 2>/dev/null || true
        SCENE_PID=
    fi
}

# start_torch_scene ARGS...: the DataLoader (tests/torch/workload.py ARGS) on
# a fresh tmpfs, waiting for it to hold its batches; writes a manifest with
# one "segment" line per inode of the tmpfs found without shmwatch (listed,
# or held by an fd or a mapping of some process), for check_snapshot.
start_torch_scene() {
    umount /dev/shm >/dev/null 2>&1 || true
    mount -t tmpfs -o size=1g,mode=1777 tmpfs /dev/shm
    rm -f "$TMP/hold" "$TMP/manifest"
    mkfifo "$TMP/hold"
    "$TORCH_PY" "$SRC/tests/torch/workload.py" --persistent-workers --hold-batches 8 \
        --batch-size 16 "$@" <"$TMP/hold" >"$TMP/scene.log" 2>&1 &
    SCENE_PID=$!
    exec 3>"$TMP/hold"
    local i
    for ((i = 0; i < 1200; i++)); do
        if grep -q '^READY ' "$TMP/scene.log"; then
            python3 - >"$TMP/manifest" <<'PY'
import glob, os
dev = os.stat("/dev/shm").st_dev
inodes = {e.inode() for e in os.scandir("/dev/shm")}
for fd in glob.glob("/proc/[0-9]*/fd/*"):
    try:
        st = os.stat(fd)
    except OSError:
        continue
    if st.st_dev == dev:
        inodes.add(st.st_ino)
want = "%02x:%02x" % (os.major(dev), os.minor(dev))
for maps in glob.glob("/proc/[0-9]*/maps"):
    try:
        lines = open(maps).read().splitlines()
    except OSError:
        continue
    for line in lines:
        f = line.split()
        if len(f) > 4 and f[3] == want and f[4] != "0":
            inodes.add(int(f[4]))
for ino in sorted(inodes):
    print("segment", ino)
PY
            return 0
        fi
        kill -0 "$SCENE_PID" 2>/dev/null || break
        sleep 0.1
    done
    die "the PyTorch DataLoader $* did not become ready: $(tail -c 1000 "$TMP/scene.log")"
}

# start_scene ARGS...: a fresh tmpfs at /dev/shm, shmscene ARGS on it, waits
# for its manifest (at most 300 s).
start_scene() {
    local nseg
    nseg=$(scene_segments "$@")
    umount /dev/shm >/dev/null 2>&1 || true
    mount -t tmpfs -o "size=$((nseg * 8 / 1024 + 64))m,nr_inodes=$((nseg * 2 + 10000)),mode=1777" \
        tmpfs /dev/shm
    rm -f "$TMP/manifest"
    "$SHMSCENE" "${COMMON[@]}" "$@" --manifest "$TMP/manifest" </dev/null >"$TMP/scene.log" 2>&1 &
    SCENE_PID=$!
    local i
    for ((i = 0; i < 3000; i++)); do
        if [ -f "$TMP/manifest" ] && [ "$(tail -n 1 "$TMP/manifest")" = ready ]; then
            return 0
        fi
        kill -0 "$SCENE_PID" 2>/dev/null || break
        sleep 0.1
    done
    die "shmscene $* did not become ready: $(head -c 1000 "$TMP/scene.log")"
}

# start_node_scene --containers N ARGS...: an empty fresh tmpfs at /dev/shm
# (the host's own), and N "containers": each shmscene ARGS in a mount
# namespace of its own (unshare -m) with a tmpfs of its own at /dev/shm;
# waits for every manifest (at most 300 s) and writes their sum to
# $TMP/manifest.
start_node_scene() {
    local n=$2 i nseg
    shift 2
    nseg=$(scene_segments "$@")
    umount /dev/shm >/dev/null 2>&1 || true
    mount -t tmpfs -o size=64m,mode=1777 tmpfs /dev/shm
    rm -f "$TMP"/manifest*
    for ((i = 1; i <= n; i++)); do
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        unshare -m --propagation private bash -c 'mount -t tmpfs -o "$1" tmpfs /dev/shm && shift && exec "$@"' \
            bash "size=$((nseg * 8 / 1024 + 16))m,nr_inodes=$((nseg * 2 + 1000)),mode=1777" \
            "$SHMSCENE" "${COMMON[@]}" "$@" --manifest "$TMP/manifest.$i" </dev/null >"$TMP/scene.$i.log" 2>&1 &
        NODE_PIDS+=($!)
    done
    local t ready
    for ((t = 0; t < 3000; t++)); do
        ready=0
        for ((i = 1; i <= n; i++)); do
            if [ -f "$TMP/manifest.$i" ] && [ "$(tail -n 1 "$TMP/manifest.$i")" = ready ]; then
                ready=$((ready + 1))
            elif ! kill -0 "${NODE_PIDS[$((i - 1))]}" 2>/dev/null; then
                die "container $i (shmscene $*) exited: $(head -c 1000 "$TMP/scene.$i.log")"
            fi
        done
        if [ "$ready" = "$n" ]; then
            cat "$TMP"/manifest.* >"$TMP/manifest"
            # The containers' mounts (MAJ:MIN), for check_snapshot: --all
            # also shows every other mount namespace of the machine.
            python3 -c 'import os, sys
for p in sys.argv[1:]:
    d = os.stat("/proc/%s/root/dev/shm" % p).st_dev
    print("%d:%d" % (os.major(d), os.minor(d)))' "${NODE_PIDS[@]}" >"$TMP/devices"
            return 0
        fi
        sleep 0.1
    done
    die "the node scene did not become ready"
}

# scene_segments ARGS...: how many segments the arguments make (for sizing).
scene_segments() {
    local w=0 s=0 o=0 u=0
    while [ $# -gt 0 ]; do
        case $1 in
        --workers) w=$2 ;;
        --per-worker) s=$2 ;;
        --orphans) o=$2 ;;
        --unheld) u=$2 ;;
        esac
        shift
    done
    echo $((w * s + o + u))
}

# --- measurements ---------------------------------------------------------

declare -A CPU_SW CPU_FL CPU_FF CPU_FP CPU_LSOF PAIR IR SEGS PROCS LABEL DASH_CPU DASH_HWM DASH_ERR
REC_CPU= REC_STREAM_CPU= REC_ERR= REC_BYTES=

# check_snapshot NAME [OPTION...]: the JSON (of shmwatch --json OPTION...)
# lists every segment of the manifest (with --all, on the scene's mounts).
check_snapshot() {
    "$SHMWATCH" --json "${@:2}" >"$TMP/snap.json"
    [ $# -gt 1 ] || : >"$TMP/devices"
    python3 - "$TMP/snap.json" "$TMP/manifest" "$1" "$TMP/devices" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = sum(1 for l in open(sys.argv[2]) if l.startswith("segment "))
devs = set(open(sys.argv[4]).read().split())
got = len([s for s in j["segments"] if not devs or s.get("mount_id") in devs])
if got != want:
    sys.exit(f"run.sh: {sys.argv[3]}: shmwatch lists {got} segments, the scene has {want}")
PY
}

# node_view: whether this shmwatch has --all (the node view); when it has
# not, says so in NODE_ERR.
NODE_ERR=
node_view() {
    [ -z "$NODE_ERR" ] || return 1
    if ! "$SHMWATCH" --all --json >/dev/null 2>"$TMP/all.err"; then
        NODE_ERR="shmwatch --all --json failed: $(head -n 1 "$TMP/all.err")"
        return 1
    fi
}

measure_scene() { # NAME ARGS LABEL
    local name=$1 args=$2 label=$3 out all=()
    # shellcheck disable=SC2086 # args is a word list
    if [ "$name" = s7 ]; then
        start_torch_scene $args
    elif [ "${name#n}" != "$name" ]; then
        start_node_scene $args
        all=(--all)
    else
        start_scene $args
    fi
    SEGS[$name]=$(grep -c '^segment ' "$TMP/manifest")
    local pids=(/proc/[0-9]*)
    PROCS[$name]=${#pids[@]}
    LABEL[$name]=$label
    if [ ${#all[@]} -gt 0 ] && ! node_view; then
        echo "== SKIPPED ${label}: $NODE_ERR" >&2
        return 0
    fi
    check_snapshot "$name" "${all[@]}"
    echo "== $label: ${SEGS[$name]} segments, ${PROCS[$name]} processes; $RUNS runs each" >&2
    local cmds=("shmwatch=$SHMWATCH --json ${all[*]}" "floor=$FLOOR ${all[*]}" "facts=$FLOOR --facts ${all[*]}"
        "procs=$FLOOR --facts --procs ${all[*]}")
    local pairs=(--pair shmwatch/floor --pair shmwatch/facts --pair shmwatch/procs)
    if { [ "$name" = s1 ] || [ "$name" = s7 ]; } && command -v lsof >/dev/null; then
        cmds+=("lsof=lsof -nP /dev/shm")
        pairs+=(--pair shmwatch/lsof)
    fi
    out=$(python3 "$CPUTIME" --runs "$RUNS" --tolerate lsof "${pairs[@]}" "${cmds[@]}") ||
        die "measuring $label failed"
    CPU_SW[$name]=$(awk '$1 == "shmwatch" { print $2 }' <<<"$out")
    CPU_FL[$name]=$(awk '$1 == "floor" { print $2 }' <<<"$out")
    CPU_FF[$name]=$(awk '$1 == "facts" { print $2 }' <<<"$out")
    CPU_FP[$name]=$(awk '$1 == "procs" { print $2 }' <<<"$out")
    CPU_LSOF[$name]=$(awk '$1 == "lsof" { print $2 }' <<<"$out")
    local p
    for p in floor facts procs lsof; do
        PAIR["$name/$p"]=$(awk -v p="shmwatch/$p" '$1 == "pair" && $2 == p { print $3 }' <<<"$out")
    done
    if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
        # Tried twice: on a loaded machine a run under valgrind has been
        # seen to end with a failure status and no message. The mappings
        # are read one fixed way (PROCMAP_QUERY, as when the baseline was
        # recorded), whatever SHMWATCH_MAPS the bench was run with: the
        # counts must be comparable exactly.
        local try
        for try in 1 2; do
            SHMWATCH_MAPS=query valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$name" "$SHMWATCH" --json \
                "${all[@]}" >/dev/null 2>"$TMP/cg.$name.log" && break
            [ "$try" = 1 ] || die "callgrind run failed (status $?): $(grep -v -e '^==' -e '^--' \
                "$TMP/cg.$name.log" | tail -n 5)"
        done
        IR[$name]=$(awk '/^(summary|totals):/ { print $2 }' "$TMP/cg.$name" | tail -n 1)
    fi
}

# dashboard NAME SECONDS [OPTION...]: shmwatch's dashboard (shmwatch
# OPTION...) in a detached tmux for SECONDS; sets DASH_CPU[NAME] (percent of
# one core over the run) and DASH_HWM[NAME] (peak RSS, KiB), or
# DASH_ERR[NAME] when there is no dashboard to measure.
dashboard() {
    local name=$1 secs=$2 pane pid="" i opts="${*:3}"
    command -v tmux >/dev/null || { DASH_ERR[$name]="tmux is not installed"; return; }
    tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
    echo "set -g remain-on-exit on" >"$TMP/tmux.conf"
    tmux -L "$TMUX_SOCK" -f "$TMP/tmux.conf" new-session -d -x 160 -y 48 -s bench "exec $SHMWATCH $opts" ||
        { DASH_ERR[$name]="tmux could not start"; return; }
    pane=$(tmux -L "$TMUX_SOCK" list-panes -t bench -F '#{pane_pid}')
    local t0
    t0=$(date +%s.%N)
    sleep 3
    if [ "$(tmux -L "$TMUX_SOCK" list-panes -t bench -F '#{pane_dead}')" = 1 ]; then
        DASH_ERR[$name]="no dashboard: shmwatch exited at once (status $(tmux -L "$TMUX_SOCK" list-panes \
            -t bench -F '#{pane_dead_status}')) $(tmux -L "$TMUX_SOCK" capture-pane -p -t bench |
            grep -v -e '^$' -e '^Pane is dead' | head -n 3 | tr '\n' ' ' || true)"
        tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
        return
    fi
    pid=$pane
    sleep "$(awk -v s="$secs" 'BEGIN { print (s > 3 ? s - 3 : 0) }')"
    local stat ticks hz t1
    stat=$(cat "/proc/$pid/stat") || { DASH_ERR[$name]="shmwatch exited during the run"; return; }
    t1=$(date +%s.%N)
    stat=${stat##*) }
    # Fields after the comm: state is 1, utime 12, stime 13.
    ticks=$(awk '{ print $12 + $13 }' <<<"$stat")
    hz=$(getconf CLK_TCK)
    DASH_CPU[$name]=$(awk -v t="$ticks" -v hz="$hz" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", 100 * t / hz / (b - a) }')
    DASH_HWM[$name]=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
    tmux -L "$TMUX_SOCK" send-keys -t bench q
    for ((i = 0; i < 50; i++)); do
        [ -d "/proc/$pid" ] || break
        sleep 0.1
    done
    tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true
}

# cpu_percent PID T0: percent of one core PID used since T0 (date +%s.%N; the
# process started just before it).
cpu_percent() {
    local stat
    stat=$(cat "/proc/$1/stat") || return 1
    stat=${stat##*) }
    awk -v t="$(awk '{ print $12 + $13 }' <<<"$stat")" -v hz="$(getconf CLK_TCK)" -v a="$2" \
        -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", 100 * t / hz / (b - a) }'
}

# recorder SECONDS: `shmwatch record` at its default interval and, side by
# side, a `--json --interval` stream at the same interval, for SECONDS on the
# scene; sets REC_CPU and REC_STREAM_CPU (percent of one core), REC_BYTES
# (the store's size), or REC_ERR.
recorder() {
    local secs=$1 rec stream t0
    rm -rf "$TMP/store"
    t0=$(date +%s.%N)
    "$SHMWATCH" record --dir "$TMP/store" 2>"$TMP/record.err" &
    rec=$!
    "$SHMWATCH" --json --interval 10 --count 0 >/dev/null 2>&1 &
    stream=$!
    sleep "$secs"
    if ! REC_CPU=$(cpu_percent "$rec" "$t0"); then
        REC_ERR="the recorder exited: $(head -n 1 "$TMP/record.err")"
    fi
    REC_STREAM_CPU=$(cpu_percent "$stream" "$t0") || REC_STREAM_CPU="?"
    kill -TERM "$rec" "$stream" 2>/dev/null || true
    wait "$rec" "$stream" 2>/dev/null || true
    REC_BYTES=$(du -sb "$TMP/store" 2>/dev/null | cut -f1)
}

# --- report -----------------------------------------------------------------

FAILS=0
# verdict OK(0/1): sets V to PASS or FAIL and counts failures.
verdict() {
    if [ "$1" = 1 ]; then V=PASS; else V=FAIL; FAILS=$((FAILS + 1)); fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# pair NAME REF: --json's CPU time over REF's (floor, facts, procs or lsof)
# on scene NAME, the median of the rounds' ratios (cputime.py --pair).
pair() { awk -v r="${PAIR["$1/$2"]:-0}" 'BEGIN { printf "%.2f", r }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.1f", a * 1000 }'; }
commas() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"; }

wanted() { [ -z "$SCENES" ] || [[ ",$SCENES," == *",$1,"* ]]; }

echo "shmwatch benchmark: $(uname -r), $(nproc) CPUs, $([ "$QUICK" = 1 ] && echo quick || echo full) scenes, median of $RUNS runs" >&2
for entry in "${ALL_SCENES[@]}"; do
    IFS='|' read -r name args label <<<"$entry"
    wanted "$name" || continue
    if [ "$name" = s7 ] && ! "$TORCH_PY" -c 'import torch' >/dev/null 2>&1; then
        echo "== SKIPPED ${label}: $TORCH_PY cannot import torch (apt-get install python3-torch)" >&2
        continue
    fi
    measure_scene "$name" "$args" "$label"
    if [ "$DASHBOARD" = 1 ] && { [ "$name" = s1 ] || [ "$name" = s6 ]; }; then
        echo "== dashboard on $label for $DASH_SECONDS s" >&2
        dashboard "$name" "$DASH_SECONDS"
    elif [ "$DASHBOARD" = 1 ] && [ "$name" = r1 ]; then
        echo "== recorder beside a stream on $label for $DASH_SECONDS s" >&2
        recorder "$DASH_SECONDS"
    elif [ "$DASHBOARD" = 1 ] && [ "$name" = n1 ]; then
        if node_view; then
            echo "== dashboard (node view, --all) on $label for $DASH_SECONDS s" >&2
            dashboard "$name" "$DASH_SECONDS" --all
        else
            DASH_ERR[$name]=$NODE_ERR
        fi
    fi
    stop_scene
done

echo
echo "CPU time of one snapshot (user + system, median of $RUNS; ms; n1: --all)"
printf '%-32s %8s %6s %10s %8s %6s %8s %6s %6s  %-6s %8s %6s\n' scene segments procs "--json" floor ratio \
    "+facts" ratio target result "+procs" ratio
for entry in "${ALL_SCENES[@]}"; do
    IFS='|' read -r name _ label <<<"$entry"
    if [ "$name" = n1 ] && [ -n "$NODE_ERR" ] && wanted n1; then
        echo "${LABEL[$name]:-$label}: not measured: $NODE_ERR"
        FAILS=$((FAILS + 1))
        continue
    fi
    [ -n "${CPU_SW[$name]:-}" ] || continue
    r=$(pair "$name" facts)
    target=1.30
    tgt="<=$target"
    if [ "$name" = s7 ]; then
        tgt=- V=- # the targets hold for s1-s6 and n1; s7 is a yardstick
    else
        verdict "$(le "$r" "$target")"
    fi
    printf '%-32s %8s %6s %10s %8s %6s %8s %6s %6s  %-6s %8s %6s\n' "${LABEL[$name]}" "${SEGS[$name]}" \
        "${PROCS[$name]}" "$(ms "${CPU_SW[$name]}")" "$(ms "${CPU_FL[$name]}")" \
        "$(pair "$name" floor)" "$(ms "${CPU_FF[$name]}")" "$r" "$tgt" "$V" \
        "$(ms "${CPU_FP[$name]}")" "$(pair "$name" procs)"
done

echo "(+facts: the floor that also reads each unlinked fd-only inode's name and each"
echo " mapping-only inode's exact size once, the facts shmwatch reports; the target is"
echo " on the ratio to it. n1 runs shmwatch --all --json against floor --all."
echo " +procs: that floor also reading what the JSON reports of the processes (stat"
echo " for each, uid, statm, cmdline and exe for each holding one): no target; what"
echo " is left against it is shmwatch's own work. Each ratio is the median of the"
echo " rounds' ratios: the runs of one round come one after the other, so a slow"
echo " spell of the machine moves both sides of a ratio alike.)"

echo
echo "Against lsof and growth"
if [ -n "${CPU_LSOF[s1]:-}" ]; then
    r=$(pair s1 lsof)
    verdict "$(le "$r" 0.40)"
    printf '%-52s %8s ms vs %8s ms = %5s  <=0.40  %s\n' "--json / lsof -nP /dev/shm (${LABEL[s1]})" \
        "$(ms "${CPU_SW[s1]}")" "$(ms "${CPU_LSOF[s1]}")" "$r" "$V"
elif [ -n "${CPU_SW[s1]:-}" ]; then
    echo "lsof is not installed: the lsof ratio was not measured"
fi
if [ -n "${CPU_LSOF[s7]:-}" ]; then
    printf '%-52s %8s ms vs %8s ms = %5s  (no target)\n' "--json / lsof -nP /dev/shm (${LABEL[s7]})" \
        "$(ms "${CPU_SW[s7]}")" "$(ms "${CPU_LSOF[s7]}")" "$(pair s7 lsof)"
fi
growth() { # A B LABEL
    [ -n "${CPU_SW[$1]:-}" ] && [ -n "${CPU_SW[$2]:-}" ] || return 0
    local r
    r=$(ratio "${CPU_SW[$1]}" "${CPU_SW[$2]}")
    verdict "$(le "$r" 2.2)"
    printf '%-52s %8s ms vs %8s ms = %5s  <=2.20  %s\n' "$3" "$(ms "${CPU_SW[$1]}")" \
        "$(ms "${CPU_SW[$2]}")" "$r" "$V"
}
growth s3 s2 "--json (${LABEL[s3]:-}) / (${LABEL[s2]:-})"
growth s5 s4 "--json (${LABEL[s5]:-}) / (${LABEL[s4]:-})"

if [ "$CALLGRIND" = 1 ]; then
    echo
    echo "Instructions of one --json snapshot (valgrind --tool=callgrind, user space)"
    printf '%-28s %14s %14s %8s\n' scene now baseline change
    mode=$([ "$QUICK" = 1 ] && echo quick || echo full)
    for entry in "${ALL_SCENES[@]}"; do
        IFS='|' read -r name _ _ <<<"$entry"
        [ -n "${IR[$name]:-}" ] || continue
        base=$(awk -v m="$mode" -v n="$name" '$1 == m && $2 == n { print $3 }' "$BASELINE" 2>/dev/null)
        change=-
        [ -n "$base" ] && change=$(awk -v a="${IR[$name]}" -v b="$base" \
            'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }')
        printf '%-28s %14s %14s %8s\n' "${LABEL[$name]}" "$(commas "${IR[$name]}")" \
            "$([ -n "$base" ] && commas "$base" || echo -)" "$change"
        if [ "$SAVE_BASELINE" = 1 ]; then
            { grep -v "^$mode $name " "$BASELINE" 2>/dev/null || true; echo "$mode $name ${IR[$name]}"; } \
                >"$TMP/baseline" && sort "$TMP/baseline" >"$BASELINE"
        fi
    done
    [ "$SAVE_BASELINE" = 0 ] || echo "(recorded in $BASELINE)"
    command -v valgrind >/dev/null || echo "valgrind is not installed: no instruction counts"
fi

if [ "$DASHBOARD" = 1 ]; then
    echo
    echo "Dashboard in tmux, default intervals, $DASH_SECONDS s"
    for name in s1 s6 n1; do
        wanted "$name" || continue
        err=${DASH_ERR[$name]:-}
        cpu=${DASH_CPU[$name]:-}
        hwm=${DASH_HWM[$name]:-}
        if [ -n "$err" ]; then
            echo "${LABEL[$name]:-$name}: not measured: $err"
            FAILS=$((FAILS + 1))
            continue
        fi
        limit=16
        [ "$name" = s6 ] && limit=64
        if [ "$name" = s1 ] || [ "$name" = n1 ]; then
            verdict "$(le "$cpu" 3)"
            printf '%-28s average CPU %6s %% of a core  <=3%%    %s\n' "${LABEL[$name]}" "$cpu" "$V"
        else
            printf '%-28s average CPU %6s %% of a core  (no target)\n' "${LABEL[$name]}" "$cpu"
        fi
        mib=$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')
        if [ "$name" = n1 ]; then
            printf '%-28s peak RSS    %6s MiB          (no target)\n' "${LABEL[$name]}" "$mib"
            continue
        fi
        verdict "$(le "$mib" "$limit")"
        printf '%-28s peak RSS    %6s MiB          <=%dMiB  %s\n' "${LABEL[$name]}" "$mib" "$limit" "$V"
    done
fi

if [ "$DASHBOARD" = 1 ] && wanted r1; then
    echo
    echo "Recorder at its default interval (10 s), $DASH_SECONDS s"
    if [ -n "$REC_ERR" ] || [ -z "$REC_CPU" ]; then
        echo "${LABEL[r1]:-r1}: not measured: ${REC_ERR:-the scene did not run}"
        FAILS=$((FAILS + 1))
    else
        verdict "$(le "$REC_CPU" 1)"
        printf '%-28s average CPU %6s %% of a core  <=1%%    %s  (--json --interval 10: %s %%; store %s bytes)\n' \
            "${LABEL[r1]}" "$REC_CPU" "$V" "$REC_STREAM_CPU" "$REC_BYTES"
    fi
fi

echo
if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS target(s) missed"
    exit 1
fi
echo "every target holds"
