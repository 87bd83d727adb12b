#!/bin/bash
# The benchmark's yardstick (tests/bench/floor.c) reads what it says it reads.
# On a scene of known holders the floor counts every fd and mapping on the
# mount, --facts and --procs leave that count alone, and --procs reads the
# process facts of exactly the processes that hold something there: the
# ones shmwatch's JSON lists with segments. A yardstick that silently read
# less would make every ratio tests/bench/run.sh prints a flattering lie.
# The bench's timer (cputime.py) is checked too: how it takes a ratio.
set -u
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
[ -x "${FLOOR:-}" ] || fail "FLOOR is not set (run the test through meson test)"
# In a private pid namespace, where only its own processes are: the floor and
# the count below stat every fd of every process they see, and an fd on a
# FUSE mount whose daemon is stopped (fuse_stall.sh, run beside it) would
# make that stat wait as long as the daemon.
test_ns 64m --pid -- "$@"

scene_start --workers 3 --per-worker 4 --orphans 2 --unheld 2

# What holds the mount, counted with plain /proc reads: fd entries whose
# target is on its device, maps lines on its device, and the processes
# having either.
read -r want_fds want_maps want_procs < <(/usr/bin/python3 - <<'PY'
import os
dev = os.stat("/dev/shm").st_dev
fds = maps = procs = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    held = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.stat(f"/proc/{pid}/fd/{fd}").st_dev == dev:
                    fds += 1
                    held += 1
            except OSError:
                pass
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                maj, mnr = line.split()[3].split(":")
                if os.makedev(int(maj, 16), int(mnr, 16)) == dev:
                    maps += 1
                    held += 1
    except OSError:
        continue
    procs += held > 0
print(fds, maps, procs)
PY
)
[ "${want_procs:-0}" -ge 4 ] || fail "the scene has too few holders to check anything: ${want_procs:-none}"

counts() { # the floor's line from its mount count to its holder counts
    sed -n 's/^floor: [0-9]* processes, \(.* map holders\);.*/\1/p' <<<"$1"
}
plain=$("$FLOOR") || fail "floor failed"
facts=$("$FLOOR" --facts) || fail "floor --facts failed"
procs=$("$FLOOR" --facts --procs) || fail "floor --facts --procs failed"
case $(counts "$plain") in
    *", $want_fds fd and $want_maps map holders") ok "the floor counts every fd ($want_fds) and mapping ($want_maps) on the mount" ;;
    *) fail "floor: $plain (expected $want_fds fd and $want_maps map holders)" ;;
esac
assert_eq "$(counts "$facts")" "$(counts "$plain")" "--facts attributes the same"
assert_eq "$(counts "$procs")" "$(counts "$plain")" "--procs attributes the same"
assert_eq "$(sed -n 's/.*; \([0-9]*\) holding processes. facts read$/\1/p' <<<"$procs")" "$want_procs" \
    "--procs reads the facts of each of the $want_procs holding processes"

listed=$("$SHMWATCH" --json | /usr/bin/python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["processes"] if p["segments"] > 0))') ||
    fail "shmwatch --json failed"
assert_eq "$listed" "$want_procs" "shmwatch lists the same $want_procs processes with segments"

# The bench's timer (tests/bench/cputime.py): a pair's ratio is taken round
# by round, and a pair that names no command is refused.
CPUTIME=$(dirname "$0")/../bench/cputime.py
out=$(/usr/bin/python3 "$CPUTIME" --runs 3 --pair busy/idle \
    busy="/bin/sh -c 'i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done'" idle=/bin/true) ||
    fail "cputime.py failed: $out"
ratio=$(awk '$1 == "pair" && $2 == "busy/idle" { print $3 }' <<<"$out")
awk -v r="${ratio:-0}" 'BEGIN { exit !(r > 5) }' ||
    fail "cputime.py: a busy loop against /bin/true gave the ratio '${ratio}': $out"
ok "cputime.py gives a pair's ratio ($ratio for a busy loop against /bin/true)"
if err=$(/usr/bin/python3 "$CPUTIME" --runs 1 --pair busy/none busy=/bin/true 2>&1); then
    fail "cputime.py took a pair that names no command: $err"
fi
case $err in
    *"--pair busy/none: not two of the commands' names"*) ok "cputime.py refuses a pair that names no command" ;;
    *) fail "cputime.py: unexpected refusal: $err" ;;
esac
# An option without its value, or with a value that is no number, is one
# line on stderr and status 1, never a Python traceback.
for args in "--runs" "--runs x" "--warmup" "--pair" "--tolerate"; do
    # shellcheck disable=SC2086 # the option and its value are two words
    if err=$(/usr/bin/python3 "$CPUTIME" t=/bin/true $args 2>&1); then
        fail "cputime.py took '$args'"
    fi
    [ "$(wc -l <<<"$err")" -eq 1 ] && [[ $err == "cputime: ${args%% *}"* ]] ||
        fail "cputime.py $args: expected one line naming ${args%% *}, got: $err"
done
ok "cputime.py refuses an option without its value in one line"
