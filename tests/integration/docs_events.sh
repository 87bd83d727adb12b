#!/usr/bin/env bash
# The recorder's records and doc/recording.md say the same: a recording of
# the node view (shmwatch record --all) made while a mount namespace with a
# /dev/shm of its own comes and goes, a worker is killed, a file fills the
# mount past warn_pct and is removed, holds a header and events of the kinds
# exit, segments, fill, mount and recorder. Each record's fields are the ones
# doc/recording.md lists for its kind (the header's in its Records list, an
# event's in its bullet of Events), none missing and none more, and each kind
# is an entry of shmwatch(1)'s EVENTS.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"
DOC=$SRCDIR/doc/recording.md
MANPAGE=$SRCDIR/doc/shmwatch.1
for f in "$DOC" "$MANPAGE"; do
    [ -r "$f" ] || fail "cannot read $f"
done

scene_start --workers 2 --per-worker 2
store=$SHMTEST_TMP/rec
"$SHMWATCH" record --all --dir "$store" --interval 0.2 2>"$SHMTEST_TMP/record.err" &
recorder=$!
recorded() { [ -n "$(store_records "$store" "$1")" ]; } # EXPR: a record of the store has it
on_exit "kill -TERM $recorder 2>/dev/null; wait $recorder 2>/dev/null"
wait_for "recorded 'r.get(\"schema\") == 1'" 30 ||
    fail "the recorder wrote no snapshot: $(cat "$SHMTEST_TMP/record.err")"

# A mount namespace with a /dev/shm of its own appears, then goes.
unshare -m --propagation private bash -c \
    'mount -t tmpfs -o size=8m tmpfs /dev/shm && exec sleep 300' </dev/null >/dev/null 2>&1 &
ns_proc=$!
on_exit "kill -KILL $ns_proc 2>/dev/null; wait $ns_proc 2>/dev/null"
wait_for "recorded 'r[\"event\"] == \"mount\" and r[\"change\"] == \"appeared\"'" 30 ||
    fail "no mount appeared in the recording"
kill -KILL "$ns_proc"
wait "$ns_proc" 2>/dev/null || true
# A worker killed, a fill past warn_pct (80 % of 64 MiB) and back.
worker=$(manifest_pids worker | head -n 1)
kill -KILL "$worker"
head -c 56M /dev/zero >/dev/shm/filler
wait_for "recorded 'r[\"event\"] == \"fill\" and r[\"level\"] != \"ok\"'" 30 ||
    fail "no fill event in the recording"
rm /dev/shm/filler
wait_for "recorded 'r[\"event\"] == \"fill\" and r[\"level\"] == \"ok\"'" 30 ||
    fail "no fill event back to ok in the recording"
kill -TERM "$recorder"
rc=0
wait "$recorder" || rc=$?
[ "$rc" -eq 0 ] || fail "the recorder exited $rc on SIGTERM: $(cat "$SHMTEST_TMP/record.err")"

/usr/bin/python3 - "$DOC" "$MANPAGE" "$SRCDIR/config/shmwatch.yaml" "$store" <<'PY' || exit 1
import glob, json, re, sys

doc_path, man_path, settings_path, store = sys.argv[1:5]
doc = open(doc_path).read()


# The settings a bullet names (`warn_pct`) are no fields of its records.
settings = set(re.findall(r"^([a-z_]+):", open(settings_path).read(), re.M))


def fields(text):
    """The fields a bullet names: its `name`s, not its `"value"`s."""
    return set(re.findall(r"`([a-z_]+)`", text)) - settings


# The Events section's bullets, "- `kind`: ...", each up to the next.
events = doc.split("\n## Events\n", 1)[1].split("\n## ", 1)[0]
documented = {}
for m in re.finditer(r"^- `([a-z_]+)`:(.*?)(?=^- `|\Z)", events, re.M | re.S):
    documented[m.group(1)] = fields(m.group(2)) | {"event", "time"}
# The header, as the Records list shows it: {"recording": 1, "time", ...}.
header = re.search(r"\{\"recording\": 1,[^}]*\}", doc)
if not documented or not header:
    sys.exit("FAIL: doc/recording.md has no Events bullets or no header record")
header_fields = set(re.findall(r'"([a-z_]+)"(?=[,:}])', header.group(0)))

# shmwatch(1)'s EVENTS: the kinds are its .TP tags.
man_kinds, on, tag = set(), False, False
for line in open(man_path):
    if line.startswith(".SH "):
        on = line.strip() == ".SH EVENTS"
    elif on and line.startswith(".TP"):
        tag = True
    elif on and tag:
        man_kinds.add(re.sub(r"^\.[A-Z]+ ", "", line).strip())
        tag = False

failures, seen = [], {}
for path in sorted(glob.glob(store + "/*.jsonl")):
    for n, line in enumerate(open(path)):
        r = json.loads(line)
        if n == 0:
            kind, want = "header", header_fields
        elif "schema" in r:
            continue
        else:
            kind = r["event"]
            want = documented.get(kind)
            if want is None:
                failures.append("%s: an event that doc/recording.md does not describe" % kind)
                continue
            if kind not in man_kinds:
                failures.append("%s: an event kind that shmwatch(1)'s EVENTS does not list" % kind)
        have = set(r)
        # A recorder record adds stalled_* only when it says a scan stalled.
        optional = {"stalled_s", "stalled_pid", "stalled_fd"} if kind == "recorder" else set()
        extra, missing = have - want, want - have - optional
        if extra:
            failures.append("%s: fields doc/recording.md does not list: %s" % (kind, sorted(extra)))
        if missing:
            failures.append("%s: fields doc/recording.md lists but the record lacks: %s"
                            % (kind, sorted(missing)))
        seen[kind] = seen.get(kind, 0) + 1

for kind in ("header", "exit", "segments", "fill", "mount", "recorder"):
    if kind not in seen:
        failures.append("the recording has no %s record to compare" % kind)
if failures:
    sys.exit("FAIL: the recording and doc/recording.md disagree:\n  " + "\n  ".join(sorted(set(failures))))
print("ok - every record (%s) has the fields doc/recording.md lists for its kind"
      % ", ".join("%s %d" % kv for kv in sorted(seen.items())))
PY
