#!/usr/bin/env bash
# The dashboard and its terminal: resizing re-lays the screen out at every size down
# to 40x10 (and a too-small one says so), the terminal is restored after q, Ctrl-C
# and SIGTERM (also while Ctrl-S has stopped its output), --ascii and NO_COLOR draw
# without UTF-8 and colours, 8- and 256-colour terminals get the colours they have,
# the config file sets the view, sort, columns and theme, a bad theme exits 2,
# without a terminal shmwatch says so in one line and exits 2, and a terminal it
# cannot drive (unknown, or TERM=dumb) is refused in one line.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
. "$(dirname "$0")/tui_lib.sh"

scene_start --workers 2 --per-worker 4 --size 1M --orphans 2 --unheld 1
main=$(manifest_pids main)

# --- No terminal ------------------------------------------------------------------
rc=0
"$SHMWATCH" </dev/null >"$SHMTEST_TMP/notty.out" 2>"$SHMTEST_TMP/notty.err" || rc=$?
assert_eq "$rc" 2 "without a terminal the dashboard exits 2"
assert_eq "$(wc -l <"$SHMTEST_TMP/notty.err")" 1 "with a one-line error"
grep -q -- "--once" "$SHMTEST_TMP/notty.err" || fail "the error does not point to --once"
ok "the error points to --once / --json"

# --- A terminal curses cannot drive ----------------------------------------------
# An unknown TERM, and TERM=dumb, which curses knows and would take (it then
# draws nothing: it cannot move the cursor): both refused in one line, with
# the same status, the terminal untouched.
exits=()
for term in shmwatch-no-such-terminal dumb; do
    TUI_PREFIX="env TERM=$term" tui_start 80 24
    tui_exited
    tui_wait "^shmwatch: cannot drive the terminal \(TERM=$term\)$" 5
    lines=$(tui_cap | grep -vcE '^(EXIT=[0-9]+)?$')
    assert_eq "$lines" 1 "TERM=$term: one line"
    tui_restored "after TERM=$term"
    exits+=("$TUI_EXIT")
done
[ "${exits[1]}" -ne 0 ] || fail "TERM=dumb exited 0"
assert_eq "${exits[1]}" "${exits[0]}" "TERM=dumb exits as an unknown TERM does"
# A TERM with an escape sequence in it is named escaped: the error line
# does not clear the screen.
rm -f "$SHMTEST_TMP/badterm.err"
TUI_STDERR=$SHMTEST_TMP/badterm.err TUI_PREFIX="env TERM=\$'x\\e[2Jy'" tui_start 80 24
tui_exited
assert_eq "$(cat "$SHMTEST_TMP/badterm.err")" 'shmwatch: cannot drive the terminal (TERM=x\e[2Jy)' \
    "TERM=x<ESC>[2Jy is named escaped"

# --- Resize -----------------------------------------------------------------------------
tui_start 120 40
tui_wait "main $main " 10
for size in 80x24 40x10 100x12 60x30 30x8 120x40; do
    TUI_W=${size%x*}
    TUI_H=${size#*x}
    tui resize-window -t tui -x "$TUI_W" -y "$TUI_H"
    wait_for '[ "$(tui display-message -p -t tui "#{pane_width}x#{pane_height}")" = "$size" ]' 5 ||
        fail "tmux did not resize to $size"
    tui_wait "Quit" 5 # the hints line was redrawn at the new size
    tui_sane "after resizing to $size the screen fits"
    [ "$TUI_H" -ge 10 ] && tui_wait "^/dev/shm " 5
    ok "resized to $size: a sane screen"
done
tui resize-window -t tui -x 15 -y 4
tui_wait "too small" 5
ok "15x4 says the terminal is too small"
tui resize-window -t tui -x 120 -y 40
TUI_W=120 TUI_H=40
tui_wait "main $main " 5
tui_sane "back at 120x40"
kill -0 "$TUI_PID" || fail "shmwatch died while resizing"
ok "shmwatch survived every resize"
tui_quit

# --- Ctrl-C and SIGTERM restore the terminal too -------------------------------------------
tui_start 80 24
tui_wait "main $main " 10
tui_keys C-c
tui_exited
assert_eq "$TUI_EXIT" 0 "Ctrl-C quits with status 0"
tui_restored "after Ctrl-C"

tui_start 80 24
tui_wait "main $main " 10
kill -TERM "$TUI_PID"
tui_exited
assert_eq "$TUI_EXIT" 0 "SIGTERM quits with status 0"
tui_restored "after SIGTERM"

# Output stopped with Ctrl-S (XOFF, the terminal's flow control): the next
# redraw blocks in its write to the terminal, and SIGTERM must still end
# the dashboard and restore the terminal.
tui_start 80 24 --interval 0.2
tui_wait "main $main " 10
tui_keys C-s
wait_for '[ "$(cat "/proc/$TUI_PID/wchan" 2>/dev/null)" = wait_woken ]' 10 ||
    fail "shmwatch never blocked writing to the stopped terminal"
kill -TERM "$TUI_PID"
tui_exited
assert_eq "$TUI_EXIT" 0 "SIGTERM while Ctrl-S stops the output quits with status 0"
tui_restored "after Ctrl-S and SIGTERM"

# A page open when the signal comes changes nothing.
tui_start 80 24
tui_wait "main $main " 10
tui_keys h
tui_wait "Help: every key" 5
kill -HUP "$TUI_PID"
tui_exited
tui_restored "after SIGHUP on the help page"

# --- ASCII and no colour -------------------------------------------------------------------
non_ascii() { tui_cap | LC_ALL=C grep -c $'[\x80-\xff]'; }
tui_start 100 30 --ascii
tui_wait "main $main " 10
tui_wait "^/dev/shm \[#*\.+\]" 5
[ "$(non_ascii)" -eq 0 ] || { tui_dump; fail "--ascii drew non-ASCII characters"; }
ok "--ascii draws with ASCII only"
tui_quit

colours() { tui capture-pane -p -e -t tui | grep -cE $'\e\\[[0-9;]*(3[0-7]|4[0-7]|38;5|48;5)[;m]'; }
tui_start 100 30
tui_wait "main $main " 10
[ "$(colours)" -gt 0 ] || { tui_dump; fail "the default theme drew no colour"; }
ok "colours by default"
tui_quit
for how in --no-color NO_COLOR; do
    if [ "$how" = NO_COLOR ]; then
        TUI_PREFIX="env NO_COLOR=1" tui_start 100 30
    else
        tui_start 100 30 --no-color
    fi
    tui_wait "main $main " 10
    [ "$(colours)" -eq 0 ] || { tui capture-pane -p -e -t tui | head -5 | cat -v >&2; fail "$how: colours drawn"; }
    tui_wait "Quit" 5
    ok "$how: attributes only, no colour"
    tui_quit
done

# --- 256 colours --------------------------------------------------------------------------
# The default theme's fg256 colours are used where the terminal has 256 colours, and
# fall back to the basic ones where it has 8 (TERM=screen above).
colours256() { tui capture-pane -p -e -t tui | grep -cE $'\e\\[[0-9;]*38;5;'; }
TUI_PREFIX="env TERM=screen-256color" tui_start 100 30
tui_wait "main $main " 10
[ "$(colours256)" -gt 0 ] || { tui_dump; fail "no 256-colour sequence on a 256-colour terminal"; }
ok "256-colour terminals get the theme's 256-colour values"
tui_quit

# --- Settings: config file, theme ---------------------------------------------------------
cat >"$SHMTEST_TMP/dash.yaml" <<'YAML'
view: flat
sort: name
columns: [name, pid, group, alloc]
theme: mono
YAML
tui_start 100 30 --config "$SHMTEST_TMP/dash.yaml"
tui_wait "│ flat  sort name" 10
tui_wait "^NAME↑ +PID +GROUP +ALLOC *$" 5
[ "$(colours)" -eq 0 ] || { tui_dump; fail "theme: mono drew colours"; }
ok "the config file sets the view, sort, columns and theme"
tui_quit

tui_start 100 30 --theme no-such-theme
tui_exited
assert_eq "$TUI_EXIT" 2 "an unknown theme exits 2"
tui_wait "no-such-theme" 2
tui_restored "after a theme error"
