#!/usr/bin/env bash
# Root that lacks CAP_SYS_PTRACE (a container's root, or one whose bounding
# set was cut) cannot follow another user's fd links, yet may read its maps.
# What it sees must be told as it is: the named segment that a nobody-owned
# worker maps stays in use with that worker as its holder, never an orphan;
# the warning says the fds could not be read "even as root"; and clean, run
# the same way, leaves the file where it is.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv
test_ns 16m -- "$@"
_lib_tmp

chmod 1777 "$SHMTEST_TMP" # the nobody-owned scene writes its manifest there
SCENE_PREFIX="${NOBODY[*]}" scene_start --workers 1 --per-worker 2 --modes named,fd --size 4096
worker=$(awk '$1 == "worker" { print $2 }' "$MANIFEST")
named=$(unhex "$(awk '$1 == "segment" && $2 == "named" { print $6 }' "$MANIFEST")")
[ -n "$worker" ] && [ -e "/dev/shm/$named" ] || fail "the scene holds no named segment: $(cat "$MANIFEST")"

NOPTRACE=(setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace --)
# Its fd links are closed to this root: the premise of the test.
if "${NOPTRACE[@]}" readlink "/proc/$worker/fd/0" >/dev/null 2>&1; then
    fail "root without CAP_SYS_PTRACE still reads a nobody process's fd links"
fi

snap=$SHMTEST_TMP/snap.json
"${NOPTRACE[@]}" "$SHMWATCH" --json >"$snap" 2>"$SHMTEST_TMP/err" ||
    fail "shmwatch --json without CAP_SYS_PTRACE exited $?: $(head -c 300 "$SHMTEST_TMP/err")"
export NAMED=$named WORKER=$worker
json_check "$snap" "[w for w in j['warnings'] if 'could not be read, even as root' in w]" \
    "the warning says fds or maps could not be read even as root"
# It names the first refused processes by pid, and how many more: the
# nobody-owned worker among them unless as many others come before it, and
# each named one's fds or maps refused to this root (or gone since).
"${NOPTRACE[@]}" /usr/bin/python3 - "$snap" "$worker" <<'PY' || fail "the warning names no refused process"
import json, os, re, sys
j = json.load(open(sys.argv[1]))
worker = int(sys.argv[2])
said = [w for w in j["warnings"] if "could not be read, even as root" in w]
m = re.match(r"^(\d+) process(?:'s|es') fds or maps could not be read, even as root \(permission "
             r"denied: more privileged than this shmwatch\): pids? (.*?)(?: and (\d+) more)?$", said[0])
if not m:
    sys.exit("no pids in: " + said[0])
count, pids, more = int(m[1]), [int(p) for p in re.findall(r"\d+", m[2])], int(m[3] or 0)
if len(pids) != min(count, 3) or len(pids) + more != count:
    sys.exit("%d refused, %s named and %d more: %s" % (count, pids, more, said[0]))
if worker not in pids and not more:
    sys.exit("the worker %d is not named: %s" % (worker, said[0]))
def refused(p):
    try:
        for fd in os.listdir("/proc/%d/fd" % p):
            os.readlink("/proc/%d/fd/%s" % (p, fd))
        open("/proc/%d/maps" % p).read()
        return False
    except (PermissionError, FileNotFoundError, ProcessLookupError):
        return True
for p in pids:
    if not refused(p):
        sys.exit("pid %d is named, yet its fds and maps can be read: %s" % (p, said[0]))
print("ok - the warning names %s%s" % (pids, " and %d more" % more if more else ""))
PY
json_check "$snap" "[s['state'] for s in j['segments'] if s['name'] == env['NAMED']] == ['in_use']" \
    "the named segment the worker maps is in use, not an orphan" \
    "[h['pid'] for s in j['segments'] if s['name'] == env['NAMED'] for h in s['holders'] if h['mapped']] == [int(env['WORKER'])]" \
    "its holder is the worker, seen through its maps"

# The node view: the mount namespaces it cannot read are said as root's
# limit, not with advice to run as root.
"${NOPTRACE[@]}" "$SHMWATCH" --all --json >"$snap" 2>"$SHMTEST_TMP/err" ||
    fail "shmwatch --all --json without CAP_SYS_PTRACE exited $?: $(head -c 300 "$SHMTEST_TMP/err")"
json_check "$snap" "[w for w in j['warnings'] if w.startswith('the mount namespaces of ') and 'could not be read, even as root' in w]" \
    "--all: the mount namespaces that could not be read are said to be so even as root" \
    "not [w for w in j['warnings'] if 'run as root' in w]" \
    "--all as root: no warning advises running as root"
"${NOPTRACE[@]}" "$SHMWATCH" clean --all --dry-run >"$SHMTEST_TMP/clean.out" 2>&1 || true
grep -q "^shmwatch clean: note: the mount namespaces of .* could not be read, even as root" "$SHMTEST_TMP/clean.out" ||
    fail "clean --all as root: $(head -c 400 "$SHMTEST_TMP/clean.out")"
if grep -q "run as root" "$SHMTEST_TMP/clean.out"; then fail "clean --all as root advises running as root"; fi
ok "clean --all as root says the same"

"${NOPTRACE[@]}" "$SHMWATCH" clean --all-unheld --min-age 0 --yes >"$SHMTEST_TMP/clean.out" 2>&1 || true
[ -e "/dev/shm/$named" ] || fail "clean without CAP_SYS_PTRACE removed an in-use segment: $(head -c 400 "$SHMTEST_TMP/clean.out")"
ok "clean without CAP_SYS_PTRACE leaves the in-use segment"
