#!/usr/bin/env bash
# The dashboard's keys: the help page lists every key of the key table
# (src/ui/keys.c), the filter narrows the rows as it is typed (the title
# shows it whole, escaped; on a narrow screen its prompt shows the end of a
# long filter and the cursor), the sort keys
# change the order (s, < and I say it; the column sorted on carries the
# arrow), t and p switch views, Enter shows a segment's holders with their
# fd, a mark goes with its row when a rescan no longer finds it, Left and -
# go to the parent row while a filter is on and fold a branch without one,
# Right and + open it, Tab and Shift-Tab step through the views, Ctrl-L
# redraws, and a details page says when what it shows is gone.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

scene_start --workers 2 --per-worker 4 --size 1M --orphans 2 --unheld 1
main=$(manifest_pids main)
w1=$(manifest_pids worker | head -n 1)

# --- Help lists every key ------------------------------------------------------
# The labels of the key table, as the help page names them.
labels=$SHMTEST_TMP/labels
python3 - "$SRCDIR/src/ui/keys.c" >"$labels" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
table = src[src.index("static const struct key_entry keys[]"):]
table = table[:table.index("\n};")]
for m in re.finditer(r'\{\s*(K_[A-Z_| ]+?)\s*,\s*"((?:[^"\\]|\\.)*)"', table):
    print(m.group(2))
PY
[ "$(wc -l <"$labels")" -ge 30 ] || fail "only $(wc -l <"$labels") keys found in src/ui/keys.c"

tui_start 120 40
tui_wait "main $main " 10
tui_keys F1
tui_wait "^ Help: every key" 5
help=$SHMTEST_TMP/help
: >"$help"
# The page may need scrolling: a screen at a time, each waited for by its footer
# (" FIRST-LAST of N "), until its last line is shown.
for _ in $(seq 10); do
    tui_cap >"$SHMTEST_TMP/help.screen"
    cat "$SHMTEST_TMP/help.screen" >>"$help"
    range=$(sed -nE 's/^ ([0-9]+-[0-9]+ of [0-9]+)  .*/\1/p' "$SHMTEST_TMP/help.screen")
    [ -n "$range" ] || { tui_dump; fail "the help page has no footer saying which lines it shows"; }
    last=${range%% of *}
    last=${last#*-}
    [ "$last" -lt "${range##* of }" ] || break
    tui_keys NPage
    tui_gone "^ $range  " 5
done
missing=0
while IFS= read -r label; do
    if ! grep -qF -- "  $label  " "$help"; then
        echo "help does not list '$label'" >&2
        missing=$((missing + 1))
    fi
done <"$labels"
[ "$missing" -eq 0 ] || { cat "$help" >&2; fail "$missing keys missing from the help page"; }
ok "the help page lists all $(wc -l <"$labels") entries of the key table"
tui_sane "the help page fits"
tui_keys q
tui_wait "main $main " 5
ok "q closes the help page"
# tui_page_find (tui_lib.sh), which node_oom relies on, pages down to a
# line below the first screen.
# The target: the last key line of the page's last screen that its first
# screen (the first TUI_H lines kept above) does not show.
target=$(head -n "$TUI_H" "$help" | grep -vxF -f - "$SHMTEST_TMP/help.screen" | grep -E '^  [^ ]' | tail -n 1)
[ -n "$target" ] || fail "the help page has no line below its first screen"
tui_keys F1
tui_wait "^ Help: every key" 5
tui_page_find "^$(printf '%s' "$target" | sed 's/[][\.*^$+?(){}|]/\\&/g')\$"
tui_keys q
tui_wait "main $main " 5
ok "tui_page_find pages down to a line below the help page's first screen"

# --- Views ----------------------------------------------------------------------
tui_keys p
tui_wait "^ +PID +PPID S ROLE" 5
tui_wait "^ +$w1 +$main [A-Z] worker " 5
ok "p shows the processes view with worker $w1 of $main"
tui_keys p
tui_wait "main $main " 5
tui_keys t
tui_wait "│ flat " 5
tui_gone "main $main " 5
ok "t switches to the flat list"

# --- Filter ------------------------------------------------------------------------
rows() { tui_cap | grep -cE '^(torch_|unheld_)'; }
before=$(rows)
[ "$before" -eq 11 ] || { tui_dump; fail "the flat list shows $before segments, not 11"; }
tui_keys / t o r c h _ "$w1"
tui_wait "filter \"torch_$w1\"" 5
wait_for '[ "$(rows)" -eq 4 ]' 5 || { tui_dump; fail "the filter left $(rows) rows, not 4"; }
tui_cap | grep -E '^(torch_|unheld_)' | grep -vq "torch_${w1}_" &&
    { tui_dump; fail "a row that does not match the filter is shown"; }
ok "typing torch_$w1 narrows 11 rows to its 4 segments"
for _ in $(seq 20); do tui_keys BSpace; done
tui_keys Enter
wait_for '[ "$(rows)" -eq 11 ]' 5 || { tui_dump; fail "erasing the filter did not bring every row back"; }
tui_keys / u n h e l d Escape
wait_for '[ "$(rows)" -eq 11 ]' 5 || { tui_dump; fail "Esc did not clear the filter"; }
ok "Backspace and Esc widen the list again"
tui_keys / k i n d : o t h e r Enter
tui_wait "filter \"kind:other\"" 5
wait_for '[ "$(rows)" -eq 1 ]' 5 || { tui_dump; fail "kind:other left $(rows) rows, not 1"; }
tui_cap | grep -qE '^unheld_0 +unheld +other ' || { tui_dump; fail "kind:other does not show unheld_0"; }
tui_keys Escape / k i n d : t o r c h Enter
wait_for '[ "$(rows)" -eq 10 ]' 5 || { tui_dump; fail "kind:torch left $(rows) rows, not 10"; }
tui_cap | grep -qE '^unheld_0' && { tui_dump; fail "kind:torch shows unheld_0"; }
tui_keys Escape
wait_for '[ "$(rows)" -eq 11 ]' 5 || { tui_dump; fail "Esc did not clear the kind filter"; }
ok "the filter kind:NAME keeps one kind's segments (the KIND column says which)"
tui_quit

# A filter of characters shown escaped (here 20 right-to-left overrides,
# \u{202e} each) is shown whole in the title, not cut inside an escape.
tui_start 300 30
tui_wait "main $main " 10
tui_keys /
for _ in $(seq 20); do tui_keys -H e2 80 ae; done
rlo=$(printf '\\\\u\\{202e\\}%.0s' $(seq 20))
tui_wait "^Filter: $rlo"'_  Enter' 5
tui_wait "filter \"$rlo\"  " 5
ok "a filter of 20 escaped characters is shown whole in the prompt and the title"
tui_keys Escape
tui_quit

# On a narrow screen the prompt shows the end of a long filter and its
# cursor.
tui_start 80 24
tui_wait "main $main " 10
tui_keys /
tui_keys -l "$(printf 'x%.0s' $(seq 90))END"
tui_wait '^Filter: …x+END_' 5
tui_sane "a long filter's prompt fits"
ok "on a narrow screen the prompt shows the end of a long filter and its cursor"
tui_keys Escape
tui_quit
tui_start 120 40
tui_wait "main $main " 10
tui_keys t
tui_wait "│ flat " 5

# --- Sort --------------------------------------------------------------------------
first_row() { tui_cap | grep -m1 -E '^(torch_|unheld_)' | awk '{ print $1 }'; }
last_row() { tui_cap | grep -E '^(torch_|unheld_)' | tail -n 1 | awk '{ print $1 }'; }
tui_wait "sort size" 5
tui_wait "SIZE↓" 5
[ "$(last_row)" = unheld_0 ] || { tui_dump; fail "sorted by size, the 4 KiB unheld_0 is not last"; }
ok "sorted by size, the smallest segment is last"
# The arrow says the direction of the key's values: down where the larger,
# older or more urgent come first, up for pid and name (ascending).
for order in "age↓" "state↓" "pid↑" "name↑"; do # size -> age -> state -> pid -> name
    tui_keys s
    tui_wait "sort $order" 5
done
tui_wait "NAME↑" 5
tui_keys I
tui_wait "sort name↓" 5
tui_wait "NAME↓" 5
wait_for '[ "$(first_row)" = unheld_0 ]' 5 || { tui_dump; fail "sorted by name, inverted, unheld_0 is not first"; }
ok "s cycles to the name order and I inverts it: unheld_0 first"
tui_keys '<' '<'
tui_wait "sort state↑" 5
tui_keys I
tui_wait "sort state↓" 5
wait_for '[ "$(first_row)" != unheld_0 ] && tui_cap | grep -m1 -E "^(torch_|unheld_)" | grep -q " orphan "' 5 ||
    { tui_dump; fail "sorted by state, an orphan is not first"; }
ok "< goes back to the state order: orphans first"
# In the processes view: I says the order as s does; the column sorted on
# carries the arrow; age, which no column there shows, is said to be so.
tui_keys p
tui_wait "^ +PID +PPID S ROLE↓ " 5
tui_keys I
tui_wait "^sorted by state↑$" 5
tui_wait "^ +PID +PPID S ROLE↑ " 5
ok "processes view: I says 'sorted by state↑', the ROLE column carries the arrow"
tui_keys I '<'
tui_wait "^sorted by age↓ \(no column shows it here\)" 5
tui_cap | grep -E "^ +PID" | grep -q "[↓↑]" && { tui_dump; fail "a column is marked for the age order"; }
tui_keys s
tui_wait "^sorted by state↓$" 5
ok "processes view: sorted by age, no column marked, and the message says no column shows it"
tui_keys p t # back to the flat list
tui_wait "│ flat " 5

# --- Details ---------------------------------------------------------------------
tui_keys Escape / "torch_${w1}_0" Enter Home Enter
tui_wait "^Segment torch_${w1}_0" 5
tui_wait "^  pid $w1 +fd [0-9]+, mapped" 5
ok "Enter on a segment lists its holder with fd and mapping"
tui_sane "the details page fits"
tui_keys Escape
tui_wait "filter \"torch_${w1}_0\"" 5
tui_keys b
tui_wait "^ Budget: how much shared memory fits" 5
tui_wait "writable   = min\(shm free, headroom\)" 5
ok "b opens the budget page with its arithmetic"
tui_keys b
tui_wait "filter \"torch_${w1}_0\"" 5

# --- Marks and pause ----------------------------------------------
tui_keys Space
tui_wait "1 marked" 5
tui_keys u
tui_gone "1 marked" 5
ok "Space marks a row, u unmarks"
# A mark lasts as long as its row: the file of a marked orphan removed, the
# next scan drops its mark and keeps the other's.
o1=$(unhex "$(manifest_segments orphan | awk '{ print $5 }' | sed -n 1p)")
o2=$(unhex "$(manifest_segments orphan | awk '{ print $5 }' | sed -n 2p)")
[ -f "/dev/shm/$o1" ] && [ -f "/dev/shm/$o2" ] || fail "the scene has not two orphans"
tui_keys Escape / "$o1" Enter Home Space
tui_wait "1 marked" 5
tui_keys Escape / "$o2" Enter Home Space
tui_wait "2 marked" 5
tui_keys Escape
rm "/dev/shm/$o1"
tui_keys r
tui_wait "1 marked" 10
ok "a rescan after the file of a marked orphan is removed drops its mark, keeps the other"
rm "/dev/shm/$o2"
tui_keys r
tui_gone "[0-9]+ marked" 10
ok "and the last one"

# --- Left and - with a filter -------------------------------------------------------
# A filter shows every branch open: Left (or -) goes to the parent row.
tui_keys t
tui_wait "│ tree " 5
tui_keys / "torch_${w1}_1" Enter End # the rows: main, worker, the segment
tui_wait "filter \"torch_${w1}_1\"" 5
tui_keys Left Enter
tui_wait "Details of process $w1" 5
tui_keys q - Enter # the worker's branch is open: - goes on to its parent
tui_wait "Details of process $main" 5
tui_keys q Escape
ok "with a filter, Left goes from a segment to its worker, - from the worker to its main"
# --- Collapse, expand, views by Tab, redraw -----------------------------------------------
# Without a filter, Left folds the main's branch (its workers' rows go) and
# Right opens it again; Tab and Shift-Tab step through the views; Ctrl-L
# redraws the same screen.
tui_keys Home
tui_wait "main $main " 5
tui_wait "worker +$w1 " 5
tui_keys Left
tui_gone "worker +$w1 " 5
tui_wait "main $main " 5
tui_keys Right
tui_wait "worker +$w1 " 5
tui_keys -
tui_gone "worker +$w1 " 5
tui_keys +
tui_wait "worker +$w1 " 5
ok "Left and - fold the main's branch, Right and + open it"
tui_keys Tab
tui_wait "^flat view" 5
tui_wait "│ flat " 5
tui_keys Tab
tui_wait "^processes view" 5
tui_wait "^ +PID +PPID S ROLE" 5
tui_keys Tab
tui_wait "^tree view" 5
tui_keys BTab
tui_wait "^processes view" 5
tui_keys BTab BTab
tui_wait "^tree view" 5
tui_wait "main $main " 5
ok "Tab steps tree, flat, processes and round; Shift-Tab back"
# Paused, the title stays as it is (the status line still turns through
# the scan's warnings); text written over it behind shmwatch's back stays
# until Ctrl-L repaints the whole screen.
tui_keys Z
tui_wait "PAUSED" 5
title=$(tui_cap | head -n 1)
printf '\033[HSCRIBBLED-OVER' >"$(tui display-message -p -t tui '#{pane_tty}')"
tui_wait "^SCRIBBLED-OVER" 5
tui_keys C-l
wait_for '[ "$(tui_cap | head -n 1)" = "$title" ]' 5 ||
    { tui_dump; fail "Ctrl-L did not bring back the title as it was: $title"; }
tui_keys Z
tui_gone "PAUSED" 5
ok "Ctrl-L repaints a screen scribbled over"
tui_keys Z
tui_wait "PAUSED" 5
tui_keys Z
tui_gone "PAUSED" 5
ok "Z pauses and resumes"

# --- Details of what goes -------------------------------------------------------------
# An open details page outlives what it shows: after the next scan it says
# the segment, or the process, is gone.
hold_new_file /dev/shm/going_seg
goer=$HOLDER
tui_keys r / going_seg Enter
tui_wait "going_seg +in_use " 10
tui_keys End Enter # the rows: its section, its holder, it
tui_wait "^Segment going_seg" 10
kill -KILL "$goer"
wait "$goer" 2>/dev/null
rm /dev/shm/going_seg
tui_keys r
tui_wait "^The segment is gone: it was not in the last scan\.$" 10
tui_keys Escape Escape
tui_gone "filter \"going_seg\"" 5
ok "a segment's details page, after the segment goes, says it is gone"
hold_new_file /dev/shm/going_proc
goer=$HOLDER
tui_keys p r
tui_wait "^ +$goer +[0-9]+ [A-Z] holder " 10
tui_select "^ +$goer +[0-9]+ [A-Z] holder "
tui_keys Enter
tui_wait "Details of process $goer" 5
kill -KILL "$goer"
wait "$goer" 2>/dev/null
rm /dev/shm/going_proc
tui_keys r
tui_wait "^Process $goer is gone\.$" 10
tui_keys Escape p
tui_wait "main $main " 5
ok "a process's details page, after the process exits, says it is gone"
tui_quit

# --- Mouse wheel ---------------------------------------------------------------------
# X10 mouse reports, as a terminal sends them: ESC [ M, button+32, column+33,
# row+33; buttons 64 and 65 are the wheel up and down.
wheel() { # up|down COUNT
    local b=60 i
    [ "$1" = down ] && b=61
    for ((i = 0; i < $2; i++)); do tui send-keys -t "$(tui list-panes -F '#{pane_id}' | head -n 1)" -H 1b 5b 4d "$b" 2a 28; done
}
tui_start 80 12
tui_wait "main $main " 10
wheel down 6
tui_gone "main $main " 5
ok "the wheel scrolls the list down: the group row leaves the screen"
wheel up 6
tui_wait "main $main " 5
ok "and back up"
tui_quit

# --- Action keys refuse in read-only mode ---------------------------------------------
tui_start 80 24 --read-only
tui_wait "main $main " 10
for key in d D U k K; do
    tui_keys "$key"
    tui_wait "read-only" 5
    tui_keys s # replaces the message
    tui_wait "sorted by" 5
done
ok "with --read-only, d D U k K refuse and say why"
tui_quit
