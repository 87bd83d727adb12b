#!/usr/bin/env bash
# plan's text for each way a loader meets its limits, on one loader (32
# samples of 3x224x224 float32, 4 workers: a peak of 183.8 MiB, 276m
# recommended): an --shm-size that fits with room, one that fits without the
# 1.5 x margin, one below Docker's 64m that holds a small loader's margin, a
# -m the peak alone passes, a /dev/shm (given or recommended) not below -m,
# and --workers 0, where nothing passes through /dev/shm. Pure
# arithmetic: no privilege, no namespace.
. "$(dirname "$0")/lib.sh"

# has ARGS -- LINE...: plan ARGS exits 0 and prints each LINE, whole.
has() {
    local args=() out rc=0
    while [ "$1" != -- ]; do
        args+=("$1")
        shift
    done
    shift
    out=$("$SHMWATCH" plan -b 32 -s 3x224x224 "${args[@]}" 2>&1) || rc=$?
    [ "$rc" = 0 ] || fail "plan ${args[*]} exited $rc: $out"
    for line in "$@"; do
        grep -qxF -- "$line" <<<"$out" || fail "plan ${args[*]} does not say '$line':
$out"
    done
}

has -w 4 --shm-size 1g -- \
    "   fits: the peak (183.8 MiB) is within 1.00 GiB, with 840.2 MiB to spare." \
    "Verdict: fits."
ok "--shm-size 1g: fits, with the room to spare"

has -w 4 --shm-size 200m -- \
    "   fits, but tightly: the peak (183.8 MiB) is within 200.0 MiB with 16.2 MiB to spare, less" \
    "   than the 1.5 x margin of --shm-size=276m." \
    "Verdict: fits."
ok "--shm-size 200m: fits, but without the 1.5 x margin"

# One sample a batch (-b 1 after has's -b 32), one worker: a 2.3 MiB peak,
# whose 1.5 x margin (4m) podman's default 62.5 MiB holds with room, though
# the recommendation for a new container is Docker's 64m.
has -w 1 -b 1 --shm-size 65536000 -- \
    "   fits: the peak (2.3 MiB) is within 62.5 MiB, with 60.2 MiB to spare." \
    "Verdict: fits."
ok "--shm-size 65536000 (podman's default): fits, with room"

has -w 4 --shm-size 150m -- \
    "   does not fit: the peak (183.8 MiB) is 33.8 MiB more than 150.0 MiB; workers would die with" \
    "Verdict: does not fit."
ok "--shm-size 150m: does not fit, Bus error ahead"

has -w 4 -m 128m -- \
    "   does not fit: the peak /dev/shm use (183.8 MiB) alone reaches the 128.0 MiB limit;" \
    "   the OOM killer ends the job first." \
    "Verdict: does not fit."
ok "-m 128m: the peak alone passes the limit, the OOM killer first"

has -w 4 -m 8g --shm-size 8g -- \
    "   The /dev/shm size (8.00 GiB) is not below -m: /dev/shm can never fill, the"
has -w 4 -m 256m -- \
    "   at the peak: 256.0 MiB - 183.8 MiB of shm = 72.2 MiB left for everything else." \
    "   The recommended /dev/shm size (276.0 MiB) is not below -m: /dev/shm can never fill, the"
ok "a /dev/shm, given or recommended, not below -m is said to never fill"

has -w 4 -m 1g --shm-size 276m -- \
    "   if /dev/shm filled up to its size (276.0 MiB): 1.00 GiB - 276.0 MiB = 748.0 MiB left."
ok "-m 1g with --shm-size 276m: what is left if /dev/shm fills"

has -w 0 -- \
    "3. With --workers 0 the main process loads every batch itself: nothing" \
    "   passes through /dev/shm, and Docker's default of 64 MiB is enough."
ok "--workers 0: nothing passes through /dev/shm"

# One byte is a byte: a sample of one int8 value.
out=$("$SHMWATCH" plan -b 1 -s 1:int8 -w 1) || fail "plan of one int8 exited $?"
grep -qxF "   tensor 1: 1 value x 1 byte (int8) = 1 byte" <<<"$out" || fail "one int8: $out"
ok "one int8 value is 1 byte, not 1 bytes"
