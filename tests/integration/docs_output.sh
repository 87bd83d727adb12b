#!/usr/bin/env bash
# The text report's section headings that doc/guide.md shows in its example
# outputs are the ones shmwatch prints: a scene with a segment in every
# section (a DataLoader group, in use and hidden outside any group, orphans,
# unheld files, a zombie) is reported with --once, and every heading-like
# line of the guide's ```text blocks must be one of its headings.
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
