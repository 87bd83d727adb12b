#!/usr/bin/env bash
# The machine-readable outputs and doc/shmwatch.1 say the same.
# JSON (tests/integration/doc_schema.py): every field that the snapshot,
# plan --json and why --json write is named in the section that documents
# it (JSON SNAPSHOT, PLAN, WHY), and every field of the section's schema
# block is there with the type or the values it is documented with
# ((int|null), (bool), "ok"|"warn", ...). The scene fills every object the
# blocks show (a DataLoader group with its holders, orphans, unheld files, a
# zombie, a budget with a loader; a worker killed while shmwatch record
# runs, for why), and a System V segment, in an IPC namespace of its own,
# fills the snapshot's sysv list. The guide's `shmwatch --json | jq '{a, b}'`
# examples show the keys of a real snapshot's a and b.
# Prometheus: every metric a long-running exporter writes (--prometheus-file
# twice, which adds the death counter) is named in METRICS, and every metric
# METRICS names is written, unless the section says right after its name
# when it has no sample ("NAME (no sample when ...").
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"
MANPAGE=$SRCDIR/doc/shmwatch.1
[ -r "$MANPAGE" ] || fail "cannot read $MANPAGE"
unshare -i true 2>/dev/null || _lib_missing "a private IPC namespace (unshare -i)"

scene_start --workers 2 --per-worker 4 --orphans 2 --unheld 1 --zombies 1
hold_new_file /dev/shm/in_use_outside
# shmwatch runs beside a System V segment of its own IPC namespace, attached
# by the process that made it, so that the namespace ends with the test.
snap=$SHMTEST_TMP/snap.json
unshare -i /usr/bin/python3 -c '
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(0x5eed, 65536, 0o1600)
if shmid < 0 or libc.shmat(shmid, None, 0) in (None, ctypes.c_void_p(-1).value):
    sys.exit("cannot make a System V segment: errno %d" % ctypes.get_errno())
with open(sys.argv[2], "w") as out:
    sys.exit(subprocess.run([sys.argv[1], "--json"], stdout=out).returncode)
' "$SHMWATCH" "$snap" || fail "shmwatch --json beside a System V segment exited $?"

schema() { # SECTION JSONFILE [--names-only]
    /usr/bin/python3 "$SRCDIR/tests/integration/doc_schema.py" "$MANPAGE" "$@" || exit 1
}
schema "JSON SNAPSHOT" "$snap"
# The guide's examples of the snapshot through jq '{a, b}' show the objects
# a and b with the keys a real snapshot's have (where both are objects).
/usr/bin/python3 - "$SRCDIR/doc/guide.md" "$snap" <<'PY' || exit 1
import json, re, sys

guide, snap = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
failures, shown = [], 0


def same_keys(doc, real, where):
    if isinstance(doc, dict) and isinstance(real, dict):
        if set(doc) != set(real):
            failures.append("%s: the guide shows %s, a snapshot has %s" % (where, sorted(doc), sorted(real)))
        for k in set(doc) & set(real):
            same_keys(doc[k], real[k], where + "." + k)


for m in re.finditer(r"^\$ shmwatch --json \| jq '\{([a-z_, ]+)\}'\n(.*?)^```", guide, re.M | re.S):
    doc = json.loads(m.group(2))
    same_keys(doc, {k.strip(): snap[k.strip()] for k in m.group(1).split(",")}, "")
    shown += 1
if not shown:
    sys.exit("FAIL: doc/guide.md has no example of shmwatch --json | jq '{...}'")
if failures:
    sys.exit("FAIL: doc/guide.md's snapshot examples and a real snapshot disagree:\n  " + "\n  ".join(failures))
print("ok - the guide's %d jq example(s) of the snapshot have its keys" % shown)
PY
"$SHMWATCH" --json --pid "$SCENE_PID" >"$SHMTEST_TMP/pid.json" || fail "shmwatch --json --pid exited $?"
schema "JSON SNAPSHOT" "$SHMTEST_TMP/pid.json"

"$SHMWATCH" plan -b 32 -s 3x224x224,1:int64 -w 4 -m 8g --shm-size 2g --json \
    >"$SHMTEST_TMP/plan.json" || fail "shmwatch plan --json exited $?"
schema PLAN "$SHMTEST_TMP/plan.json"
"$SHMWATCH" plan --observe "$SCENE_PID" --json >"$SHMTEST_TMP/observe.json" ||
    fail "shmwatch plan --observe --json exited $?"
schema PLAN "$SHMTEST_TMP/observe.json" --names-only

# why: a recording in which a worker of the scene is killed.
store=$SHMTEST_TMP/rec
"$SHMWATCH" record --dir "$store" --interval 0.2 2>"$SHMTEST_TMP/record.err" &
recorder=$!
on_exit "kill -TERM $recorder 2>/dev/null; wait $recorder 2>/dev/null"
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ -n "$(store_records "$store" "r.get(\"schema\") == 1")" ]' 30 ||
    fail "the recorder wrote no snapshot: $(cat "$SHMTEST_TMP/record.err")"
worker=$(manifest_pids worker | head -n 1)
kill -KILL "$worker"
exits() { store_records "$store" "r[\"event\"] == \"exit\" and r[\"pid\"] == $worker"; }
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ -n "$(exits)" ]' 30 || fail "the recording has no exit of worker $worker"
# and two snapshots after it, the last of which shows what it left behind
end=$(exits | /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["time"])')
after() { store_records "$store" "r.get(\"schema\") == 1 and r[\"time\"] > \"$end\""; }
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ "$(after | wc -l)" -ge 2 ]' 30 || fail "the recording has no snapshots after worker $worker's end"
kill -TERM "$recorder"
wait "$recorder" || fail "the recorder exited $? on SIGTERM: $(cat "$SHMTEST_TMP/record.err")"
rc=0
"$SHMWATCH" why --dir "$store" --json >"$SHMTEST_TMP/why.json" || rc=$?
[ "$rc" -eq 4 ] || fail "shmwatch why --json exited $rc, expected 4 (a worker was killed)"
schema WHY "$SHMTEST_TMP/why.json"

prom=$SHMTEST_TMP/shmwatch.prom
"$SHMWATCH" --prometheus-file "$prom" --interval 0.1 --count 2 ||
    fail "shmwatch --prometheus-file --count 2 exited $?"

/usr/bin/python3 - "$MANPAGE" "$prom" <<'PY' || exit 1
import re, shlex, sys

man_path, prom_path = sys.argv[1:3]
written = set()
for line in open(prom_path):
    m = re.match(r"# TYPE shmwatch_([a-z_]+) ", line)
    if m:
        written.add(m.group(1))
if not written:
    sys.exit("FAIL: %s has no TYPE line" % prom_path)

# The section as text: a macro's words run together as troff sets them
# (.BR name , is "name,"), the lines joined.
text, on = [], False
for line in open(man_path):
    line = line.rstrip("\n").replace("\\-", "-")
    if line.startswith(".SH "):
        on = line.strip() == ".SH METRICS"
        continue
    if not on:
        continue
    m = re.match(r"\.(B|I|BR|RB|IR|RI) ?(.*)", line)
    if m:
        args = shlex.split(m.group(2))
        line = " ".join(args) if len(m.group(1)) == 1 else "".join(args)
    elif line.startswith("."):
        continue
    text.append(line)
text = " ".join(text)
if not text:
    sys.exit("FAIL: doc/shmwatch.1 has no METRICS section")
# Names as the section writes them, and as its examples do (with the prefix).
named = {re.sub(r"^shmwatch_", "", w) for w in re.findall(r"[a-z][a-z0-9_]*", text)}

missing = sorted(written - named)
if missing:
    sys.exit("FAIL: shmwatch writes metrics that shmwatch(1)'s METRICS does not name: "
             + ", ".join(missing))
print("ok - the %d metrics written are named in shmwatch(1)'s METRICS" % len(written))

# The metric names of the section: its words of a metric's form (a suffix of
# a unit or a count), the labels (main_pid, mount_id, container_id) aside.
metric = re.compile(r"[a-z]+(_[a-z]+)*_(bytes|seconds|total|inodes|inodes_free|namespaces|trusted"
                    r"|verdict|warnings|processes|workers)$|(segments|groups|zombies)$")
documented = {w for w in named if metric.fullmatch(w) and "_id" not in w and w != "main_pid"}
unwritten = [w for w in sorted(documented - written)
             if not re.search(re.escape(w) + r" \(no sample", text)]
if unwritten:
    sys.exit("FAIL: shmwatch(1)'s METRICS names metrics that shmwatch does not write, "
             "without saying when they have no sample: " + ", ".join(unwritten))
print("ok - every metric of shmwatch(1)'s METRICS is written, or the section says when not")
PY
