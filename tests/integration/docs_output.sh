#!/usr/bin/env bash
# The text report's section headings that doc/guide.md shows in its example
# outputs are the ones shmwatch prints: a scene with a segment in every
# section (a DataLoader group, in use and hidden outside any group, orphans,
# unheld files, a zombie) is reported with --once, and every heading-like
# line of the guide's ```text blocks must be one of its headings. The lines
# of the guide's BUDGET blocks are held to the lines of the scene's BUDGET.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"

scene_start --workers 2 --per-worker 4 --orphans 2 --unheld 1 --zombies 1
hold_new_file /dev/shm/in_use_outside
hold_new_file /dev/shm/hidden_outside
rm /dev/shm/hidden_outside
"$SHMWATCH" --once >"$SHMTEST_TMP/once.txt" || fail "--once exited $?"
heading='^[A-Z][A-Z ]{3,}( \(.*\))?$'
grep -E "$heading" "$SHMTEST_TMP/once.txt" | sort -u >"$SHMTEST_TMP/printed"
for want in 'MOUNTS' 'BUDGET' 'DATALOADER GROUPS' 'IN USE' 'HIDDEN' 'ORPHANS' 'UNHELD' 'OTHER PROCESSES'; do
    grep -q "^$want" "$SHMTEST_TMP/printed" ||
        fail "the scene does not make the text report print $want: $(cat "$SHMTEST_TMP/once.txt")"
done
ok "the scene's report has every section: $(tr '\n' ';' <"$SHMTEST_TMP/printed")"

awk '/^```text/ { t = 1; next } /^```/ { t = 0 } t' "$SRCDIR/doc/guide.md" |
    grep -E "$heading" | sort -u >"$SHMTEST_TMP/shown"
[ -s "$SHMTEST_TMP/shown" ] || fail "no heading found in the guide's examples"
stale=$(comm -23 "$SHMTEST_TMP/shown" "$SHMTEST_TMP/printed")
[ -z "$stale" ] || fail "doc/guide.md shows headings the text report does not print: $stale"
ok "every heading in doc/guide.md's examples is one the text report prints ($(wc -l <"$SHMTEST_TMP/shown"))"

# The guide's BUDGET blocks have the lines a budget has, so that one left
# from an older shmwatch shows. A line's label is its words before the first
# figure or colon ("-" for an advice); every label is one the report above
# prints in its BUDGET, in that order. A block whose limit is a cgroup's has
# the oom kills line (every budget of a memory cgroup prints it); a block
# whose DataLoader group holds segments has the loader's two lines. A block
# is checked up to its first elision ([...] or ...).
/usr/bin/python3 - "$SRCDIR/doc/guide.md" "$SHMTEST_TMP/once.txt" <<'PY' || exit 1
import re, sys

ELISION = re.compile(r"^\s*(\[\.\.\..*\]|\.\.\.)$")
GROUP = re.compile(r"^    \d+ workers?, \d+ shm managers?, (\d+) segments?")


def label(line):
    s = line.strip()
    if s.startswith("- "):
        return "-"
    m = re.match(r"([a-z][a-z ]*?)(:| \d| unknown)", s)
    return m.group(1) if m else s


def budgets(lines):
    """(line number, its lines up to an elision, elided?, the lines after it
    up to the next budget or container) of each BUDGET block in lines."""
    for i, l in enumerate(lines):
        if not re.match(r"^BUDGET( of .*)?$", l):
            continue
        shown, elided = [], False
        for b in lines[i + 1:]:
            if ELISION.match(b):
                elided = True
                break
            if not b.startswith("  ") or b.startswith("   "):
                break
            shown.append(b)
        rest = []
        for b in lines[i + 1:]:
            if b.startswith("BUDGET") or b.startswith("== "):
                break
            rest.append(b)
        yield i, shown, elided, rest


report = open(sys.argv[2]).read().split("\n")
real = [label(l) for _, shown, _, _ in budgets(report) for l in shown]
order = {}
for lab in real:
    order.setdefault(lab, len(order))
for want in ("limit", "loader", "workers that fit at that factor", "verdict"):
    if want not in order:
        sys.exit("FAIL: the scene's BUDGET has no %r line:\n%s" % (want, "\n".join(report)))
if "oom kills" not in order:
    print("# no memory cgroup here: the guide's oom kills lines are not held to a real one")

guide = open(sys.argv[1]).read().split("\n")
failures, n = [], 0
fence, block = False, []
for no, l in enumerate(guide, 1):
    if l.startswith("```"):
        if fence:
            for i, shown, elided, rest in budgets([b for _, b in block]):
                n += 1
                where = "doc/guide.md:%d" % block[i][0]
                labels = [label(b) for b in shown]
                unknown = [x for x in labels if x not in order and x != "oom kills"]
                if unknown:
                    failures.append("%s: lines a budget does not print: %s" % (where, unknown))
                    continue
                ranks = [order.get(x, order.get("limit", 0) + 0.5) for x in labels]
                if ranks != sorted(ranks):
                    failures.append("%s: the lines are not in the order a budget prints them: %s" % (where, labels))
                if elided and "verdict" not in labels:
                    continue
                need = ["limit", "verdict"]
                if shown and "(cgroup)" in shown[0]:
                    need.append("oom kills")
                if any(m and int(m.group(1)) > 0 for m in map(GROUP.match, rest)):
                    need += ["loader", "workers that fit at that factor"]
                missing = [x for x in need if x not in labels]
                if missing:
                    failures.append("%s: a budget of this kind also prints %s" % (where, missing))
        fence, block = not fence, []
    elif fence:
        block.append((no, l))
if not n:
    sys.exit("FAIL: no BUDGET block found in doc/guide.md")
if failures:
    sys.exit("FAIL: doc/guide.md's BUDGET blocks are not what shmwatch prints:\n  " + "\n  ".join(failures))
print("ok - the guide's %d BUDGET blocks have the lines a budget prints (%s)" % (n, ", ".join(order)))
PY
