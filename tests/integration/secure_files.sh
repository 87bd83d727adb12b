#!/usr/bin/env bash
# Run as root, shmwatch never writes through what another user planted where
# it writes: a symbolic link at the action log's path, at the Prometheus
# file's or at its old predictable temporary name (PATH.tmp.<pid>), a hard
# link to a root file, a file of theirs. Each is tried in a directory that
# user owns (where fs.protected_symlinks does not apply) and in a sticky
# world-writable one (where it does), with the sysctl off and on when this
# machine lets it be changed (restored on exit). The root file the links
# point at stays untouched; the action itself (the removal) is still done.
# And run as root, a configuration file others can write is refused, unless
# --config names it (read, with a warning); the same for a theme.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv sysctl sha256sum
# A private pid namespace: clean sees only this test's processes.
test_ns 64m --pid -- "$@"

NOBODY=65534
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

# The root file a planted link points at: only root may write it.
mkdir -m 0700 "$SHMTEST_TMP/root"
secret=$SHMTEST_TMP/root/secret
echo "root's own data" >"$secret"
chmod 0600 "$secret"
touch -d '2020-01-01 00:00:00' "$secret"
secret_state() { echo "$(sha256sum <"$secret") $(stat -c '%s %Y %h' "$secret")"; }
before=$(secret_state)
untouched() { # WHAT
    assert_eq "$(secret_state)" "$before" "$1: the root file is untouched"
}

dead=$(dead_pid)
orphans() { # two orphaned torch segments, the work clean is told to do
    local i
    for i in 0 1; do head -c 8192 /dev/urandom >"/dev/shm/torch_${dead}_$i"; done
}
removed() { # WHAT
    local left
    left=$(ls /dev/shm | grep "^torch_${dead}_") && fail "$1: clean left $left"
    ok "$1: the orphans were still removed"
}

# clean_refused LOG REASON: clean --yes --log LOG still removes the orphans,
# exits 0 and says in one line that the log is refused, and why.
clean_refused() {
    local log=$1 reason=$2 rc=0
    orphans
    "$SHMWATCH" clean --yes --log "$log" </dev/null >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
    assert_eq "$rc" 0 "clean --yes --log $log exits 0"
    assert_eq "$(cat "$SHMTEST_TMP/err")" \
        "shmwatch clean: note: cannot write the action log $log: refused: $reason; actions are not logged" \
        "clean --yes --log $log: one line says the log is refused"
    removed "clean --yes --log $log"
}

orig=$(sysctl -n fs.protected_symlinks) || fail "cannot read fs.protected_symlinks"
settings=("$orig")
if sysctl -qw fs.protected_symlinks=$((1 - orig)) 2>/dev/null; then
    on_exit "sysctl -qw fs.protected_symlinks=$orig"
    sysctl -qw "fs.protected_symlinks=$orig"
    settings=(0 1)
else
    echo "# fs.protected_symlinks cannot be changed here: only $orig is tried"
fi

for ps in "${settings[@]}"; do
    sysctl -qw "fs.protected_symlinks=$ps" 2>/dev/null || [ "$ps" = "$orig" ] ||
        fail "cannot set fs.protected_symlinks=$ps"
    for kind in owned sticky; do
        dir=$SHMTEST_TMP/$kind-$ps
        if [ "$kind" = owned ]; then
            mkdir -m 0755 "$dir" && chown "$NOBODY:$NOBODY" "$dir"
        else
            mkdir -m 1777 "$dir"
        fi
        echo "# fs.protected_symlinks=$ps, a directory $kind by another user: $dir"

        # The action log: a link (to the root file, and dangling), a hard
        # link, another user's file.
        as_nobody ln -s "$secret" "$dir/shm.log"
        clean_refused "$dir/shm.log" "a symbolic link (never followed)"
        untouched "a link at the log's path"
        as_nobody ln -s "$dir/new-root-file" "$dir/dangling.log"
        clean_refused "$dir/dangling.log" "a symbolic link (never followed)"
        [ ! -e "$dir/new-root-file" ] || fail "a dangling link at the log's path made its target"
        ok "a dangling link at the log's path creates nothing"
        ln "$secret" "$dir/hard.log"
        clean_refused "$dir/hard.log" "a hard link (the file has other names)"
        rm "$dir/hard.log"
        untouched "a hard link at the log's path"
        as_nobody touch "$dir/theirs.log"
        clean_refused "$dir/theirs.log" "owned by another user"
        [ ! -s "$dir/theirs.log" ] || fail "the other user's log was written"

        # The Prometheus file: a link at its path is refused, and leaves no
        # temporary file behind.
        as_nobody ln -s "$secret" "$dir/shm.prom"
        rc=0
        "$SHMWATCH" --prometheus-file "$dir/shm.prom" --count 1 >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
        assert_eq "$rc" 1 "--prometheus-file through a link exits 1"
        assert_eq "$(cat "$SHMTEST_TMP/err")" \
            "shmwatch: cannot write $dir/shm.prom: refused: a symbolic link (never followed)" \
            "--prometheus-file through a link: one line says why"
        untouched "a link at the Prometheus file's path"
        [ -L "$dir/shm.prom" ] || fail "the planted link was replaced"
        left=$(ls "$dir" | grep '^shm\.prom\.tmp') && fail "temporary files left: $left"
        rm "$dir/shm.prom"
        # The old predictable temporary name, planted for the very pid that
        # writes: the file is written, the planted link and its target stay.
        rc=0
        bash -c 'setpriv --reuid='$NOBODY' --regid='$NOBODY' --clear-groups ln -s "$1" "$2.tmp.$$" &&
            exec "$3" --prometheus-file "$2" --count 1' _ "$secret" "$dir/shm.prom" "$SHMWATCH" \
            >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
        assert_eq "$rc" 0 "--prometheus-file beside a planted temporary name exits 0 ($(cat "$SHMTEST_TMP/err"))"
        grep -q '^shmwatch_budget_limit_bytes ' "$dir/shm.prom" || fail "the Prometheus file was not written"
        [ -f "$dir/shm.prom" ] && [ ! -L "$dir/shm.prom" ] || fail "the Prometheus file is not a regular file"
        [ "$(ls "$dir" | grep -c '^shm\.prom\.tmp\.')" = 1 ] || fail "the planted link is gone or a temporary file was left: $(ls "$dir")"
        untouched "a link at the old temporary name"
        ln "$secret" "$dir/hard.prom"
        rc=0
        "$SHMWATCH" --prometheus-file "$dir/hard.prom" --count 1 >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
        assert_eq "$rc:$(cat "$SHMTEST_TMP/err")" \
            "1:shmwatch: cannot write $dir/hard.prom: refused: a hard link (the file has other names)" \
            "--prometheus-file onto a hard link of a root file is refused"
        rm "$dir/hard.prom"
        untouched "a hard link at the Prometheus file's path"
    done
done

# The dashboard the same: the log is not opened, the unlink is done and its
# summary says why it was not logged; the root file is untouched.
need tmux
. "$(dirname "$0")/tui_lib.sh"
dir=$SHMTEST_TMP/owned-$orig
head -c 4096 /dev/zero >/dev/shm/unheld_0
touch -d '-1 hour' /dev/shm/unheld_0
tui_start 160 30 --log "$dir/shm.log"
tui_wait "unheld_0 +unheld " 10
tui_keys U
tui_wait "Unlink 1 unheld segment" 5
tui_keys y
tui_wait "^1 unlinked, 4.0 KiB freed; 0 refused, 0 failed \(not logged: $dir/shm.log: refused: a symbolic link \(never followed\)\)" 10
[ ! -e /dev/shm/unheld_0 ] || fail "the dashboard did not remove unheld_0"
untouched "the dashboard's log through a link"
tui_quit

# --- Settings files, run as root ----------------------------------------------------------
home=$SHMTEST_TMP/home
mkdir -p "$home/.config/shmwatch/themes"
cfg=$home/.config/shmwatch/config.yaml
printf 'mounts: [%s]\n' "$SHMTEST_TMP" >"$cfg"
chmod 0664 "$cfg"
rc=0
HOME=$home XDG_CONFIG_HOME= "$SHMWATCH" --json >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 2 "a group-writable config found in HOME is refused (exit 2)"
assert_eq "$(cat "$SHMTEST_TMP/err")" \
    "shmwatch: $cfg: refused: writable by group or others (run as root, shmwatch reads settings only from files that root owns and only root can write)" \
    "the refusal names the file and why"
[ ! -s "$SHMTEST_TMP/out" ] || fail "a refused config still printed a snapshot"
rc=0
HOME=$home XDG_CONFIG_HOME= "$SHMWATCH" clean --dry-run >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc:$(cut -d: -f1 "$SHMTEST_TMP/err")" "2:shmwatch clean" "clean refuses it too"
chmod 0644 "$cfg"
chown "$NOBODY" "$cfg"
rc=0
HOME=$home XDG_CONFIG_HOME= "$SHMWATCH" --json >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 2 "a config owned by another user is refused"
grep -q ": refused: not owned by root (" "$SHMTEST_TMP/err" || fail "no reason: $(cat "$SHMTEST_TMP/err")"
# Named with --config: read, with a warning that says why it is risky.
chown 0 "$cfg"
chmod 0664 "$cfg"
rc=0
"$SHMWATCH" --config "$cfg" --json >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 0 "--config names a group-writable file: read"
assert_eq "$(cat "$SHMTEST_TMP/err")" \
    "shmwatch: warning: $cfg is writable by group or others: read because the command line names it, but whoever can write it decides what shmwatch does as root" \
    "with a one-line warning"
json_check "$SHMTEST_TMP/out" "[m['path'] for m in j['mounts']] == [env['SHMTEST_TMP']]" \
    "the named file's settings are used (its mounts: $SHMTEST_TMP)"

# A theme named by the configuration must be root's alone too; --theme
# FILE is read with a warning. (The dashboard needs a terminal: the theme is
# loaded before it starts, so a refusal is seen without one.)
chmod 0644 "$cfg"
theme=$home/loud.yaml
printf 'name: loud\n' >"$theme"
chmod 0666 "$theme"
printf 'theme: %s\n' "$theme" >"$cfg"
rc=0
HOME=$home XDG_CONFIG_HOME= timeout 10 script -qec "$SHMWATCH" /dev/null >"$SHMTEST_TMP/out" 2>&1 </dev/null || rc=$?
grep -q "$cfg:1:8: $theme: refused: writable by group or others (" "$SHMTEST_TMP/out" ||
    fail "a world-writable theme named by the config is not refused: $(cat "$SHMTEST_TMP/out")"
ok "a world-writable theme named by the config is refused"
