#!/usr/bin/env bash
# A zombie whose parent is the init of its pid namespace (a container's
# first process that never waits for its children): reap sends that init
# SIGCHLD and says the truth about it: only that init can reap the zombie,
# and ending it would end every process of its namespace, not hand the
# zombie to some other init. The init lives on.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
test_ns 16m -- "$@"
unshare -p -f true 2>/dev/null || _lib_missing "a private pid namespace"
_lib_tmp

# The namespace's init: forks a child that exits, never reaps it, runs reap
# and writes its output and exit status; then reports whether it still runs.
cat >"$SHMTEST_TMP/init.py" <<'PY'
import os, subprocess, sys, time
child = os.fork()
if child == 0:
    os._exit(0)
deadline = time.monotonic() + 10
while open("/proc/%d/stat" % child).read().rsplit(")", 1)[1].split()[0] != "Z":
    if time.monotonic() > deadline:
        sys.exit("the child did not become a zombie")
    time.sleep(0.01)
r = subprocess.run([sys.argv[1], "reap", "--yes"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True)
with open(sys.argv[2], "w") as f:
    f.write(r.stdout)
print("rc=%d alive" % r.returncode)
PY
status=$(unshare -p -f --mount-proc /usr/bin/python3 "$SHMTEST_TMP/init.py" "$SHMWATCH" \
    "$SHMTEST_TMP/reap.txt" </dev/null) || fail "the namespace's init failed: $status"
cat "$SHMTEST_TMP/reap.txt"
assert_eq "$status" "rc=0 alive" "reap exits 0 and the init lives"
grep -q "^  pid 2 (python3) uid 0  zombie: already dead, waiting for its parent pid 1 (python3) to reap it$" \
    "$SHMTEST_TMP/reap.txt" || fail "the zombie is not planned"
grep -q "^zombie       pid 2 (python3)  already dead (a zombie): it holds no memory and cannot be killed. Its parent pid 1 (python3), the init of its pid namespace, was sent SIGCHLD but does not reap it; only it can, and ending it would end every process of its namespace$" \
    "$SHMTEST_TMP/reap.txt" || fail "the result does not say that the parent is its namespace's init"
grep -q "hand the zombie to init" "$SHMTEST_TMP/reap.txt" &&
    fail "reap advises ending a namespace's init to hand its zombie to init"
ok "a zombie of its namespace's init: the init is nudged, lives, and is named for what it is"
