#!/usr/bin/env bash
# The Prometheus metrics and doc/shmwatch.1's METRICS say the same: every
# metric a long-running exporter writes (a DataLoader scene, written twice by
# --prometheus-file, which adds the death counter) is named in the section,
# and every metric the section names is written, unless the section says
# right after its name when it has no sample ("NAME (no sample when ...").
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"
MANPAGE=$SRCDIR/doc/shmwatch.1
[ -r "$MANPAGE" ] || fail "cannot read $MANPAGE"

scene_start --workers 2 --per-worker 2 --orphans 1 --zombies 1
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
