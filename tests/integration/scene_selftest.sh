#!/bin/bash
# Self-test of the test tooling: shmscene must build exactly the scene its manifest
# describes, checked with plain tools (stat, /proc/PID/fd, /proc/PID/maps, df) and
# without shmwatch, so the integration tests that trust the manifest stand on rock.
set -u
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need stat df awk readlink /usr/bin/python3
test_ns 64m -- "$@"

PAGE=$(getconf PAGESIZE)
roundup() { echo $(((($1) + PAGE - 1) / PAGE * PAGE)); }
fd_links() { # PID: every fd link target, one per line
    local f
    for f in /proc/"$1"/fd/*; do readlink "$f"; done 2>/dev/null
}
ppid_of() { local s; s=$(cat "/proc/$1/stat") && s=${s##*) } && echo "$s" | awk '{ print $2 }'; }
state_of() { local s; s=$(cat "/proc/$1/stat") && s=${s##*) } && echo "${s%% *}"; }

# --- error paths: usage errors exit 2, runtime errors exit 1, one line on stderr
rc=0; err=$("$SHMSCENE" --no-such-flag 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 2 "unknown flag is a usage error"
assert_eq "$(printf '%s\n' "$err" | wc -l)" 1 "usage error is one line"
rc=0; "$SHMSCENE" --size 1M --touch 2M >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "--touch above --size is a usage error"
rc=0; err=$("$SHMSCENE" --workers 1 --per-worker 1 --size 100M 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 1 "a segment that does not fit the 64 MiB mount fails"
case $err in *"No space left on device"*) ok "ENOSPC is reported" ;; *) fail "ENOSPC message: $err" ;; esac
rm -rf /dev/shm/* /dev/shm/.[!.]* 2>/dev/null
[ "$(fs_used_bytes /dev/shm)" -eq 0 ] || fail "the mount is not empty after cleanup"

# --- the full scene
SIZE=$((1024 * 1024)) TOUCH=$((256 * 1024 + 100)) ORPHAN=$((128 * 1024))
scene_start --workers 3 --per-worker 8 --size "$SIZE" --touch "$TOUCH" \
    --orphans 3 --orphan-size "$ORPHAN" --unheld 2 --evil --stuck-orphan --churn --zombies 1
MAIN=$SCENE_PID
assert_eq "$(manifest_pids main)" "$MAIN" "manifest names the main pid"
WORKERS=$(manifest_pids worker)
STUCK=$(manifest_pids stuck)
CHURN=$(manifest_pids churn)
ORPHAN_PID=$(manifest_pids orphan_creator)
ZOMBIE=$(manifest_pids zombie)
assert_eq "$(echo "$WORKERS" | wc -w)" 3 "three workers listed"
assert_eq "$(manifest_segments | wc -l)" $((4 * 8 + 3 + 2 + 9)) "every segment listed"
for mode in named fd map passed; do
    assert_eq "$(manifest_segments "$mode" | wc -l)" 8 "8 $mode segments (2 per worker and stuck worker)"
done

main_exe=$(readlink "/proc/$MAIN/exe")
main_cmd=$(tr '\0' ' ' <"/proc/$MAIN/cmdline")
for w in $WORKERS $STUCK; do
    [ "$(ppid_of "$w")" = "$MAIN" ] || fail "worker $w is not a child of main $MAIN"
    [ "$(readlink "/proc/$w/exe")" = "$main_exe" ] || fail "worker $w runs another exe"
    [ "$(tr '\0' ' ' <"/proc/$w/cmdline")" = "$main_cmd" ] || fail "worker $w has another cmdline"
done
ok "workers are forked children of main with its exe and cmdline"

# Per-process views, taken once (the churn's openers come and go; they are not read).
declare -A FDS MAPS
for p in "$MAIN" $WORKERS $STUCK; do
    FDS[$p]=$(fd_links "$p")
    MAPS[$p]=$(awk '$6 ~ /^\/dev\/shm\// { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }' \
        "/proc/$p/maps")
done
has() { printf '%s\n' "$1" | grep -qxF -- "$2"; }
holds() { has "$1" "$2" || has "$1" "$2 (deleted)"; } # LINKS PATH
entries() { find /dev/shm -mindepth 1 -maxdepth 1 -printf x | wc -c; }
FILE_MODES=" named orphan unheld evil-newline evil-tab evil-esc evil-utf8 evil-space evil-nested "

expect_alloc=0 # what df must show: every touched page of every live file
while read -r mode creator size touched hex; do
    name=$(unhex "$hex")
    path=/dev/shm/$name
    expect_alloc=$((expect_alloc + $(roundup "$touched")))
    if [[ $FILE_MODES == *" $mode "* ]]; then
        [ -f "$path" ] && [ ! -L "$path" ] || fail "$mode $hex: no regular file"
        got=$(stat -c '%s %b %B' "$path" | awk '{ print $1, $2 * $3 }')
        [ "$got" = "$size $(roundup "$touched")" ] ||
            fail "$mode $hex: size and allocation $got, expected $size $(roundup "$touched")"
        [ "$(stat -c %a "$path")" = 600 ] || fail "$mode $hex: mode is not 0600"
    fi
    case $mode in fd | map | passed)
        [ ! -e "$path" ] || fail "$mode segment $name still has its name" ;;
    esac
    case $mode in
    named)
        has "${FDS[$creator]}" "$path" || fail "named $name: no fd in its creator $creator"
        has "${MAPS[$creator]}" "$path" || fail "named $name: not mapped by its creator"
        ;;
    fd)
        has "${FDS[$creator]}" "$path (deleted)" || fail "fd $name: no '(deleted)' fd in $creator"
        holds "${MAPS[$creator]}" "$path" && fail "fd $name: mapped, but fd mode keeps only the fd"
        ;;
    map)
        has "${MAPS[$creator]}" "$path (deleted)" || fail "map $name: not mapped '(deleted)' in $creator"
        holds "${FDS[$creator]}" "$path" && fail "map $name: an fd is still open in $creator"
        ;;
    passed)
        has "${FDS[$MAIN]}" "$path (deleted)" || fail "passed $name: main holds no '(deleted)' fd"
        holds "${FDS[$creator]}"$'\n'"${MAPS[$creator]}" "$path" &&
            fail "passed $name: the worker $creator still holds it"
        ;;
    orphan)
        [ "$creator" = "$ORPHAN_PID" ] || fail "orphan $name: creator $creator is not $ORPHAN_PID"
        case $name in "torch_${creator}_"*) ;; *) fail "orphan $name is not named after its creator" ;; esac
        ;;
    evil-symlink)
        [ -L "$path" ] && [ "$(readlink "$path")" = /etc/passwd ] || fail "evil symlink missing"
        ;;
    evil-dir) [ -d "$path" ] && [ ! -L "$path" ] || fail "evil directory missing" ;;
    evil-fifo) [ -p "$path" ] || fail "evil FIFO missing" ;;
    esac
    case $mode in orphan | unheld | evil-*)
        for p in "$MAIN" $WORKERS $STUCK; do
            holds "${FDS[$p]}"$'\n'"${MAPS[$p]}" "$path" && fail "$mode $hex is held by $p"
        done ;;
    esac
done < <(manifest_segments)
ok "named segments have their name, size, allocation, fd and mapping"
ok "fd segments are unlinked and held by a '(deleted)' fd only"
ok "map segments are unlinked and held by a '(deleted)' mapping only"
ok "passed segments are held by main's fd only"
ok "orphans, unheld files and hostile entries exist and nobody holds them"

[ ! -e "/proc/$ORPHAN_PID" ] || fail "orphan creator $ORPHAN_PID still exists"
ok "orphan creator $ORPHAN_PID is dead and reaped"
# 4 workers x 2 named, 3 orphans, 2 unheld, 8 hostile entries (one more inside the dir)
[ "$(entries)" -eq $((4 * 2 + 3 + 2 + 8)) ] || fail "unexpected entries in /dev/shm: $(entries)"
ok "the mount holds exactly the named entries"

used=$(fs_used_bytes /dev/shm)
assert_eq "$used" "$expect_alloc" "df used bytes equal the pages touched ($expect_alloc)"

# --- the extras
assert_eq "$(state_of "$ZOMBIE")" Z "the zombie is a zombie"
assert_eq "$(ppid_of "$ZOMBIE")" "$MAIN" "the zombie's parent is main"
assert_eq "$(ppid_of "$CHURN")" "$MAIN" "the churn process is main's child"
wait_for '[ -n "$(cat /proc/$CHURN/task/$CHURN/children)" ]' 5 ||
    fail "the churn process forks no openers"
ok "the churn process forks short-lived openers"
kill -TERM "$STUCK"
stays_false 'gone "$STUCK"' 0.5 || fail "the stuck worker did not survive SIGTERM"
ok "the stuck worker ignores SIGTERM"

# --- stop: children gone, named files kept, hidden pages freed
scene_stop
assert_eq "$SCENE_RC" 0 "main exits 0 on SIGTERM"
gone $WORKERS $STUCK $CHURN || fail "a process survived the scene"
ok "every child is gone after stop"
named_alloc=0
while read -r mode creator size touched hex; do
    [[ $FILE_MODES != *" $mode "* ]] || named_alloc=$((named_alloc + $(roundup "$touched")))
done < <(manifest_segments)
assert_eq "$(fs_used_bytes /dev/shm)" "$named_alloc" "after stop only named files use the mount"
assert_eq "$(entries)" 21 "named files are left in place"

# --- killed main: the stuck worker survives as an orphan, the others die with main
rm -rf /dev/shm/* /dev/shm/.[!.]* 2>/dev/null
scene_start --workers 2 --per-worker 2 --modes named --size 64K --stuck-orphan
WORKERS=$(manifest_pids worker)
STUCK=$(manifest_pids stuck)
kill -KILL "$SCENE_PID"
wait_for 'gone $WORKERS' 5 || fail "workers did not die with main"
ok "workers die when main is killed"
[ "$(state_of "$STUCK")" = S ] && [ "$(ppid_of "$STUCK")" != "$SCENE_PID" ] ||
    fail "the stuck worker did not outlive main"
ok "the stuck worker outlives main, reparented"
scene_stop
wait_for 'gone $STUCK' 5 ||
    fail "scene_stop left the stuck worker $STUCK"
ok "scene_stop ends the orphaned stuck worker"

# --- json_check reports the values that make an expression false
printf '{"a": [1, 2, 3], "b": {"c": "x"}}\n' >"$SHMTEST_TMP/t.json"
json_check "$SHMTEST_TMP/t.json" 'len(j["a"]) == 3 and j["b"]["c"] == "x"' "json_check passes"
out=$( (json_check "$SHMTEST_TMP/t.json" 'all(v < 3 for v in j["a"])' "probe") 2>&1) &&
    fail "json_check accepted a false expression"
case $out in *"FAIL: probe"*"v = 3"*) ok "json_check shows the failing element" ;;
*) fail "json_check output lacks the failing element: $out" ;; esac
