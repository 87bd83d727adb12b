# Helpers for the dashboard's screen tests (bash; source after lib.sh, inside the
# private namespace): the real binary runs in a tmux pane on a private socket, and
# the tests read the screen with capture-pane, polling with a bounded wait.
#
#   tui_start 120 40 [shmwatch args...]   # pane runs shmwatch, then records its exit
#   tui_wait 'main [0-9]+' 10             # until the screen matches (ERE), or fail
#   tui_keys t s                          # tmux send-keys
#   tui_quit                              # q, wait for the exit, check the terminal
#
# Each session has its own tmux server and socket. The pane's shell saves `stty -g` before and after shmwatch and prints EXIT=<status>
# when it ends; TUI_PID is shmwatch's pid.

need tmux python3 stty
_lib_tmp
TUI_N=0
TUI_SOCK=$SHMTEST_TMP/tmux.$TUI_N.sock
TUI_W=0
TUI_H=0
TUI_PID=

tui() {
    tmux -S "$TUI_SOCK" "$@"
}

on_exit 'tmux -S "$TUI_SOCK" kill-server 2>/dev/null'

# tui_start W H [ARGS...]: a fresh session of W x H running "$SHMWATCH" ARGS.
# TUI_PREFIX (e.g. setpriv ...) runs shmwatch as someone else; TUI_STDERR, a file
# that shmwatch's stderr is appended to (default: the pane).
tui_start() {
    TUI_W=$1
    TUI_H=$2
    shift 2
    tui kill-server 2>/dev/null || true
    TUI_N=$((TUI_N + 1)) # a fresh server each time: a dying one may still hold the old socket
    TUI_SOCK=$SHMTEST_TMP/tmux.$TUI_N.sock
    rm -f "$SHMTEST_TMP"/tui.*
    local args=
    [ $# -eq 0 ] || args=$(printf '%q ' "$@")
    [ -z "${TUI_STDERR:-}" ] || args+="2>>$(printf '%q' "$TUI_STDERR")"
    cat >"$SHMTEST_TMP/tui.run" <<EOF
stty -g >"$SHMTEST_TMP/tui.stty.before"
bash -c 'echo \$\$ >"$SHMTEST_TMP/tui.pid"; exec \$0 "\$@"' ${TUI_PREFIX:-} "$SHMWATCH" $args
echo "EXIT=\$?"
stty -g >"$SHMTEST_TMP/tui.stty.after"
exec sleep 600
EOF
    LANG=C.UTF-8 LC_ALL= TERM=screen tui -u -f /dev/null new-session -d -s tui \
        -x "$TUI_W" -y "$TUI_H" "bash --noprofile --norc $SHMTEST_TMP/tui.run" ||
        fail "tmux new-session failed"
    tui set-option -g -t tui status off >/dev/null
    wait_for '[ -s "$SHMTEST_TMP/tui.pid" ]' 30 || fail "shmwatch did not start in tmux"
    TUI_PID=$(cat "$SHMTEST_TMP/tui.pid")
}

# The screen as text, one line per row.
tui_cap() {
    tui capture-pane -p -t tui
}

tui_dump() {
    echo "--- screen (${TUI_W}x${TUI_H}) ---" >&2
    tui_cap >&2
    echo "---" >&2
}

# tui_wait ERE [TIMEOUT_S]: until a line of the screen matches.
tui_wait() {
    local re=$1
    if ! wait_for 'tui_cap | grep -qE -- "$re"' "${2:-10}"; then
        tui_dump
        fail "the screen never showed /$re/"
    fi
}

# tui_gone ERE [TIMEOUT_S]: until no line of the screen matches.
tui_gone() {
    local re=$1
    if ! wait_for '! tui_cap | grep -qE -- "$re"' "${2:-10}"; then
        tui_dump
        fail "the screen still shows /$re/"
    fi
}

tui_keys() {
    tui send-keys -t tui "$@"
}

# tui_page_find ERE [PAGES]: on a page that scrolls (its footer " FIRST-LAST
# of N "), until a line matches, a screen at a time (PgDn), at most PAGES
# screens (default 20); fails at the page's end. A page that fits one screen
# has no footer: it is looked at once.
tui_page_find() {
    local re=$1 range last
    for _ in $(seq "${2:-20}"); do
        tui_cap | grep -qE -- "$re" && return 0
        range=$(tui_cap | sed -nE 's/^ ([0-9]+-[0-9]+ of [0-9]+)  .*/\1/p')
        [ -n "$range" ] || break
        last=${range%% of *}
        last=${last#*-}
        [ "$last" -lt "${range##* of }" ] || break
        tui_keys NPage
        wait_for '! tui_cap | grep -q "^ $range  "' 5 || break
    done
    tui_cap | grep -qE -- "$re" && return 0
    tui_dump
    fail "no screen of the page showed /$re/"
}

# tui_sane [MSG]: the screen has TUI_H rows, none wider than TUI_W columns, no
# control characters, or the test fails with MSG. tui_fits: the same check, its
# status returned (for stays_false).
tui_sane() {
    tui_fits || { tui_dump; fail "${1:-the screen is not sane}"; }
}

tui_fits() {
    tui_cap >"$SHMTEST_TMP/tui.screen"
    python3 - "$SHMTEST_TMP/tui.screen" "$TUI_W" "$TUI_H" <<'PY'
import sys, unicodedata
text = open(sys.argv[1], encoding="utf-8", errors="strict").read()
w, h = int(sys.argv[2]), int(sys.argv[3])
lines = text.split("\n")
if lines and lines[-1] == "":
    lines.pop()
def width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
bad = [i for i, l in enumerate(lines) if width(l) > w or any(ord(c) < 32 for c in l)]
if len(lines) > h or bad:
    print(f"{len(lines)} rows (max {h}); too wide or with control characters: {bad}",
          file=sys.stderr)
    sys.exit(1)
PY
}

# tui_row_of ERE: the first screen row (0-based) matching, or -1.
tui_row_of() {
    tui_cap | awk -v re="$1" '$0 ~ re { print NR - 1; found = 1; exit } END { if (!found) print -1 }'
}

# tui_exited [TIMEOUT_S]: until shmwatch has exited; sets TUI_EXIT.
tui_exited() {
    if ! wait_for 'tui_cap | grep -qE "^EXIT=[0-9]+"' "${1:-10}"; then
        tui_dump
        fail "shmwatch did not exit"
    fi
    TUI_EXIT=$(tui_cap | sed -n 's/^EXIT=\([0-9]*\).*/\1/p' | head -n 1)
}

# tui_restored: after shmwatch ended, the terminal is as it was: same stty settings,
# normal screen (not the alternate one), cursor visible, keypad and mouse modes off.
tui_restored() {
    wait_for '[ -s "$SHMTEST_TMP/tui.stty.after" ]' 5 || fail "the pane's shell did not go on"
    assert_eq "$(cat "$SHMTEST_TMP/tui.stty.after")" "$(cat "$SHMTEST_TMP/tui.stty.before")" \
        "stty settings restored ($1)"
    local state
    state=$(tui display-message -p -t tui \
        '#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{keypad_flag} #{mouse_any_flag}')
    assert_eq "$state" "0 1 0 0 0" \
        "normal screen, cursor visible, keypad and mouse off ($1; alternate cursor keypad-cursor keypad mouse)"
}

# tui_quit: q, then shmwatch must exit 0 and leave the terminal as it found it.
tui_quit() {
    tui_keys q
    tui_exited
    assert_eq "$TUI_EXIT" 0 "q quits with status 0"
    tui_restored "after q"
}

# tui_click ROW [COL]: a left click at screen ROW (0-based), COL (default 2), as an
# X10 mouse report: ESC [ M, button+32, column+33, row+33; a press, then the release.
tui_click() {
    local pane
    pane=$(tui list-panes -t tui -F '#{pane_id}' | head -n 1)
    tui send-keys -t "$pane" -H 1b 5b 4d 20 "$(printf %x $((${2:-2} + 33)))" "$(printf %x $(($1 + 33)))"
    tui send-keys -t "$pane" -H 1b 5b 4d 23 "$(printf %x $((${2:-2} + 33)))" "$(printf %x $(($1 + 33)))"
}

# tui_select ERE: clicks the first screen row that matches (fails when none
# does) and waits until that row is the selected one (the default theme draws
# it black on cyan). A scan that ends between the capture and the click may
# move the rows under it: the row is then clicked again where it is now.
tui_select() {
    local row try sel_re=$1
    for try in 1 2 3 4 5; do
        row=$(tui_row_of "$sel_re")
        [ "$row" -ge 0 ] || { tui_dump; fail "no row matches /$sel_re/ to click"; }
        tui_click "$row"
        wait_for '[[ "$(tui_style "$sel_re")" == *bg=46* ]]' 2 && return 0
    done
    tui_dump
    fail "the row /$sel_re/ is not selected after $try clicks"
}

# tui_style ERE: how the first match of ERE on the screen is drawn, from the escape
# sequences of capture-pane -e at its first character: "fg=N bg=N bold=0|1", N an
# SGR colour (31 red, 33 yellow, 38;5;K a 256-colour index, 39/49 the default).
# Status 1, and nothing printed, when no line matches.
tui_style() {
    tui capture-pane -e -p -t tui | python3 -c '
import re, sys
pat = re.compile(sys.argv[1])
sgr = re.compile(r"\x1b\[([0-9;]*)m")
st = {"fg": "39", "bg": "49", "bold": 0} # tmux carries it from line to line
for line in sys.stdin.read().split("\n"):
    plain, styles = [], []
    pos = 0
    for m in sgr.finditer(line + "\x1b[1000m"): # a no-op code: the rest of the line
        for ch in line[pos:m.start()]:
            plain.append(ch)
            styles.append(dict(st))
        pos = m.end()
        codes = m.group(1).split(";") if m.group(1) else ["0"]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c in ("0", ""):
                st = {"fg": "39", "bg": "49", "bold": 0}
            elif c == "1":
                st["bold"] = 1
            elif c == "22":
                st["bold"] = 0
            elif c in ("38", "48") and i + 2 < len(codes) and codes[i + 1] == "5":
                st["fg" if c == "38" else "bg"] = c + ";5;" + codes[i + 2]
                i += 2
            elif re.fullmatch(r"3[0-79]|9[0-7]", c):
                st["fg"] = c
            elif re.fullmatch(r"4[0-79]|10[0-7]", c):
                st["bg"] = c
            i += 1
    found = pat.search("".join(plain))
    if found:
        s = styles[found.start()]
        print("fg=%s bg=%s bold=%d" % (s["fg"], s["bg"], s["bold"]))
        sys.exit(0)
sys.exit(1)
' "$1"
}

# logged ERE: how many lines of the action log "$log" match ERE (0 when it
# does not exist yet).
logged() { grep -c "$1" "$log" 2>/dev/null || true; }
