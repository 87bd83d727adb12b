#!/usr/bin/env bash
# Chooses the integration tests that the sanitizer build runs (sanitize_tests
# in tests/meson.build), by line coverage:
#
#   bash tests/coverage-select.sh [BUILDDIR]      (default build-cov; as root)
#
# 1. Builds shmwatch with gcov's counters (BUILDDIR, -Db_coverage=true).
# 2. Runs the unit tests and the fuzz corpora (the suites unit and fuzz, which
#    the sanitizer build runs whole) and records which lines of src/ they
#    reach: the base.
# 3. Runs each integration test of shmwatch's own code (the suite integration
#    less stack: the real-stack tests run in the plain build only), alone,
#    with the counters reset, and records which lines of src/ it reaches.
# 4. Picks, by greedy set cover, the fewest of those tests that together reach
#    every line that any of them reaches beyond the base: each step takes the
#    test that reaches the most lines not yet reached (on a tie, the one that
#    took less time, then the first by name), until no line is left.
#
# It prints the chosen tests, each with the lines it adds, as the list to put
# in tests/meson.build, and keeps what it measured in BUILDDIR/coverage-select
# (NAME.lines: one "src/FILE:LINE" a line; base.lines; selection.txt).
# A test that fails or skips here reaches less than it would: the script
# names it, and its lines count as it reached them.
#
# Every process of the program writes its counters when it exits normally
# (not when a signal kills it, nor in a child that leaves by _exit), so a line
# reached only there counts as reached by no test, and no test is chosen for
# it. The counters' files are made beforehand, empty and writable by all, so
# that a copy of the program run as another user (nobody) counts too.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
dir=${1:-build-cov}
out=$dir/coverage-select

nice -n 10 bash tests/build.sh "$dir" -Db_coverage=true
rm -rf "$out"
mkdir -p "$out"

reset_counters() {
    find "$dir" -name '*.gcda' -delete
    find "$dir" -name '*.gcno' -print0 | while IFS= read -r -d '' gcno; do
        : >"${gcno%.gcno}.gcda"
        chmod 666 "${gcno%.gcno}.gcda"
    done
}

# The lines of src/ that the counters say ran, one "src/FILE:LINE" a line.
collect_lines() { # OUTFILE
    (cd "$dir" && find . -name '*.gcda' -size +0 -print0 |
        xargs -0 -r gcov --json-format --stdout 2>/dev/null) |
        python3 -c '
import json, os, sys
src = sys.argv[1]
text = sys.stdin.read()
dec = json.JSONDecoder()
pos = 0
seen = set()
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    obj, pos = dec.raw_decode(text, pos)
    cwd = obj["current_working_directory"]
    for f in obj["files"]:
        path = os.path.relpath(os.path.normpath(os.path.join(cwd, f["file"])), src)
        if not path.startswith("src/"):
            continue
        for line in f["lines"]:
            if line["count"] > 0:
                seen.add("%s:%d" % (path, line["line_number"]))
for s in sorted(seen):
    print(s)
' "$src" >"$1"
}

# Runs meson's tests NAME... (or --suite ...) and says how each ended.
run_tests() { # LOGBASE ARGS...
    local logbase=$1
    shift
    meson test -C "$dir" --no-rebuild --num-processes 1 --logbase "$logbase" "$@" \
        >"$out/$logbase.log" 2>&1 || true
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    name = t["name"].split(" / ")[-1]
    print("%s\t%s\t%.1f" % (name, t["result"], t["duration"]))
' "$dir/meson-logs/$logbase.json"
}

echo "== the base: the suites unit and fuzz"
reset_counters
run_tests base --suite unit --suite fuzz >"$out/base.results"
awk -F'\t' '$2 != "OK" { print "coverage-select: " $1 ": " $2 " (the base counts what it reached)" }' \
    "$out/base.results" >&2
collect_lines "$out/base.lines"
echo "   $(wc -l <"$out/base.lines") lines of src/"

candidates=$(meson introspect --tests "$dir" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    suites = [s.split(":")[-1] for s in t["suite"]]
    if "integration" in suites and "stack" not in suites:
        print(t["name"])
')
: >"$out/results"
for name in $candidates; do
    reset_counters
    result=$(run_tests "test-$name" "$name")
    printf '%s\n' "$result" >>"$out/results"
    collect_lines "$out/$name.lines"
    printf '== %s: %s, %s lines of src/\n' "$name" "$(cut -f2,3 <<<"$result" | tr '\t' ' ')s" \
        "$(wc -l <"$out/$name.lines")"
    case $(cut -f2 <<<"$result") in
        OK) ;;
        *) echo "coverage-select: $name: $(cut -f2 <<<"$result") (its lines count as it reached them)" >&2 ;;
    esac
done

echo "== greedy set cover of what the integration tests reach beyond the base"
python3 - "$out" <<'PY' | tee "$out/selection.txt"
import os, sys
out = sys.argv[1]
base = set(open(os.path.join(out, "base.lines")).read().split())
secs = {}
for line in open(os.path.join(out, "results")):
    name, result, duration = line.rstrip("\n").split("\t")
    secs[name] = float(duration)
extra = {}
for name in secs:
    extra[name] = set(open(os.path.join(out, name + ".lines")).read().split()) - base
target = set().union(*extra.values())
print("# base (unit + fuzz): %d lines; the integration tests reach %d more" % (len(base), len(target)))
left = set(target)
chosen = []
while left:
    name = min(extra, key=lambda n: (-len(extra[n] & left), secs[n], n))
    gain = extra[name] & left
    if not gain:
        break
    chosen.append(name)
    files = sorted({l.rsplit(":", 1)[0] for l in gain})
    print("  '%s', # +%d lines (%s)" % (name, len(gain), ", ".join(f[4:] for f in files[:4]) + (", ..." if len(files) > 4 else "")))
    left -= gain
print("# %d of %d tests, %.0f s of %.0f s alone here" %
      (len(chosen), len(secs), sum(secs[n] for n in chosen), sum(secs.values())))
PY
