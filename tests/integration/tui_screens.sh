#!/usr/bin/env bash
# The dashboard's screen at 120x40, 80x24 and 40x10 on a scene of known size: the
# gauge shows the mount's exact percent, the tree shows the DataLoader group under
# its main pid with the workers beneath it, names made of escape sequences (or
# beginning with a combining mark) are shown escaped, a long name is wrapped
# between two escapes on its details page, a long command line is cut between
# two characters, every screen fits its terminal, at 40x10 a status message
# leaves the key line in place, and at 20x5 D's confirmation keeps its buttons
# inside its box.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# 2 workers x 4 segments of 1 MiB, 2 orphans of 256 KiB, 1 unheld file: 8.5 MiB.
scene_start --workers 2 --per-worker 4 --size 1M --orphans 2 --unheld 1 --evil
main=$(manifest_pids main)
workers=$(manifest_pids worker)

# The percent statvfs gives, as the dashboard prints it.
expected_pct() {
    stat -f -c '%b %f' /dev/shm | awk '{ printf "%.1f", 100 * ($1 - $2) / $1 }'
}

for size in 120x40 80x24 40x10; do
    w=${size%x*}
    h=${size#*x}
    tui_start "$w" "$h"
    pct=$(expected_pct)
    tui_wait "^/dev/shm .* ${pct//./\\.}%" 10
    ok "$size: the gauge shows ${pct}% for /dev/shm"
    tui_wait "main $main " 10
    ok "$size: the group header names the main pid $main"
    tui_sane "$size: the screen fits"
    last=$(tui_cap | tail -n 1)
    case $last in
    *Help*Quit*) ok "$size: key hints on the last line" ;;
    *) tui_dump; fail "$size: no key hints on the last line: '$last'" ;;
    esac
    if [ "$h" -ge 24 ]; then
        tui_wait "^Budget +(OK|WARN|CRITICAL)" 5
        ok "$size: the budget panel shows a verdict"
    fi
    # Each worker is a child row below the group header, before the next top-level
    # row; at 40x10 only the first fits.
    group_row=$(tui_row_of "main $main ")
    shown=0
    for wpid in $workers; do
        row=$(tui_row_of "worker $wpid([^0-9]|$)")
        if [ "$row" -lt 0 ] && [ "$h" -lt 24 ]; then
            continue
        fi
        [ "$row" -gt "$group_row" ] || { tui_dump; fail "$size: worker $wpid is not under main $main"; }
        tui_cap | sed -n "$((row + 1))p" | grep -qE "^(├─|└─).*worker $wpid([^0-9]|$)" ||
            { tui_dump; fail "$size: worker $wpid is not drawn as a child"; }
        ok "$size: worker $wpid under the group of $main"
        shown=$((shown + 1))
    done
    [ "$shown" -gt 0 ] || { tui_dump; fail "$size: no worker row under the group"; }
    tui_quit
done

# 40x10, the smallest with a key line: a status message (s says how it
# sorts) shows above the key line, which stays.
tui_start 40 10
tui_wait "main $main " 10
tui_keys s
tui_wait "^sorted by" 5
screen=$(tui_cap)
last=$(tail -n 1 <<<"$screen")
case $last in
*Help*Quit*) ;;
*) tui_dump; fail "40x10: the key line gave way to the message: '$last'" ;;
esac
tail -n 2 <<<"$screen" | head -n 1 | grep -q "^sorted by" ||
    { tui_dump; fail "40x10: the message is not right above the key line"; }
tui_sane "40x10 with a message"
tui_wait "main $main " 1
ok "40x10: a message shows above the key line, which stays"
tui_quit

# The smallest screen accepted, 20x5: D's confirmation keeps its buttons
# inside its box (18 columns from column 1: the inside from column 2).
tui_start 20 5
tui_wait "Quit|q +Quit|Help" 10
tui_wait "main [0-9]+" 10 # the group's row: the first scan is in (D needs one)
tui_keys D
tui_wait "Yes" 5
row=$(tui_cap | grep -m1 "Yes")
# Columns: the first of "[ Yes ]" and the last of "[ No ]" (one column a character here).
cols=$(python3 -c 'import sys; r = sys.argv[1]; print(r.find("[ Yes ]"), r.find("[ No ]") + 5)' "$row")
first=${cols% *}
last=${cols#* }
[ "$first" -ge 2 ] && [ "$last" -le 17 ] && [ "$last" -gt 5 ] ||
    { tui_dump; fail "20x5: D's buttons in columns $first to $last, not inside the box (2 to 17)"; }
tui_sane "20x5 with D's confirmation"
tui_keys n
tui_gone "Yes" 5
ok "20x5: D's buttons inside the box, columns $first to $last"
tui_quit

# Hostile names: shown escaped, never sent to the terminal raw.
tui_start 120 40
tui_wait "main $main " 10
tui_keys t / R E D
tui_wait 'filter "RED"' 5
tui_wait '\\e\[31mRED\\e\[0m' 5
ok "the name ESC[31mRED ESC[0m is shown as \\e[31mRED\\e[0m"
if tui capture-pane -p -e -t tui | grep -q $'\e\\[31mRED'; then
    tui_dump
    fail "a raw escape sequence from a name reached the terminal"
fi
ok "no raw escape sequence from a name reached the pane"
tui_keys Escape
tui_keys / t o r c h _ 9 _ 1 Enter
tui_wait 'torch_9_1\\nfake' 5
ok "a newline in a name is shown as \\n"
tui_sane "the screen with hostile names fits"
# A name that begins with a combining mark (U+0301), which a terminal
# draws over the cell before (the row above, from column 0): "\u0301start"
# would pass for "start". Its first character is shown escaped, here and
# on its details page.
printf x >"/dev/shm/$(printf '\xcc\x81')start"
tui_keys Escape / s t a r t Enter r
tui_wait '^\\u\{301\}start +unheld ' 10
tui_keys Enter
tui_wait '^Segment \\u\{301\}start$' 5
tui_keys Escape
ok "a name's leading combining mark is shown escaped, \\u{301}"
# A name longer than the details page is wide is wrapped between two
# escapes, never inside one (a line ending in "\", the next beginning "xff").
printf x >"/dev/shm/wrapme_$(head -c 248 /dev/zero | tr '\0' '\377')"
tui_keys Escape / w r a p m e Enter r
tui_wait '^wrapme_\\xff.* unheld ' 10
tui_keys Enter
tui_wait '^Segment$' 5
names=$(tui_cap | sed -n '/^Segment$/,/^  mount /p' | sed '1d;$d')
[ "$(wc -l <<<"$names")" -gt 2 ] || { tui_dump; fail "the long name is not wrapped"; }
grep -qvE '^  (wrapme_)?(\\xff)+$' <<<"$names" && { tui_dump; fail "a line of the name is cut inside an escape"; }
tui_keys Escape
ok "a long name is wrapped between two escapes on its details page"
tui_quit

# A command line longer than its cell's text (300 euro signs, 900 bytes) is
# cut between two characters and ends in the ellipsis: no broken character
# is drawn as "?".
cat >"$SHMTEST_TMP/holder.py" <<'PY'
import os, sys, time
fd = os.open("/dev/shm/euro_held", os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 4096)
open(sys.argv[1], "w").close()
time.sleep(300)
PY
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
bash -c 'exec -a "$0" python3 "$1" "$2"' "$(printf '€%.0s' $(seq 300))" \
    "$SHMTEST_TMP/holder.py" "$SHMTEST_TMP/euro.ready" </dev/null >/dev/null 2>&1 &
euro=$!
on_exit "kill -KILL $euro 2>/dev/null; true"
wait_for "[ -e '$SHMTEST_TMP/euro.ready' ]" 30 || fail "the holder with a long command line did not start"
tui_start 300 30
tui_wait "main $main " 10
tui_keys p
tui_wait "^ +$euro .* €+… *\$" 10
tui_cap | grep -q '€?' && { tui_dump; fail "a command line was cut inside a character"; }
tui_sane "the processes view with a long command line fits"
ok "a long command line is cut between two characters, marked by the ellipsis"
tui_quit

# A process's details page: its memory, the shared part read afresh for the page.
tui_start 120 40
tui_wait "main $main " 10
tui_select "main $main "
tui_keys Enter
tui_wait "pid +$main \\(parent" 5
tui_wait "memory +[0-9.]+ [KMG]?i?B anonymous, [0-9.]+ [KMG]?i?B shared memory resident" 5
ok "the details page of main $main shows its anonymous and shared memory"
tui_keys Escape
tui_quit
