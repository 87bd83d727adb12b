#!/usr/bin/env bash
# --pid names the watched container by its /etc/hostname, read through
# /proc/PID/root. A container controls that file: as a symbolic link to an
# absolute path it would be resolved against the host's root, and the first
# line of a host file (/etc/shadow) would be shown as the hostname. The link
# must not be followed; a hostname with escape sequences must reach the text
# report and the JSON escaped.
. "$(dirname "$0")/lib.sh"
need_root
need /usr/bin/python3
_lib_tmp

secret=$SHMTEST_TMP/host-secret
echo "SECRET-root-hash-line" >"$secret"
root=$SHMTEST_TMP/ctr-root
mkdir -p "$root/etc"

ln -s "$secret" "$root/etc/hostname"
start_in_root "$root"
export CTR_PID
# The link really leads to the secret when followed through /proc/PID/root.
assert_eq "$(cat "/proc/$CTR_PID/root/etc/hostname")" "SECRET-root-hash-line" \
    "the hostile link resolves to the host's file when followed"
"$SHMWATCH" --pid "$CTR_PID" --json >"$SHMTEST_TMP/link.json" || fail "shmwatch --pid --json exited $?"
json_check "$SHMTEST_TMP/link.json" "j['scan']['target_pid'] == int(env['CTR_PID']) and j['scan']['target_host'] is None" \
    "a linked /etc/hostname is not followed (target_host null)"
"$SHMWATCH" --pid "$CTR_PID" --once >"$SHMTEST_TMP/link.txt" 2>&1 || fail "shmwatch --pid --once exited $?"
! grep -q SECRET "$SHMTEST_TMP/link.txt" || fail "the host's file reached the text report"
ok "the host's file is in neither report"
kill -KILL "$CTR_PID"
wait "$CTR_PID" 2>/dev/null || true

rm "$root/etc/hostname"
printf 'evil\033]0;owned\007\033[31mname\n' >"$root/etc/hostname"
start_in_root "$root"
"$SHMWATCH" --pid "$CTR_PID" --json >"$SHMTEST_TMP/esc.json" || fail "shmwatch --pid --json exited $?"
grep -q $'\033' "$SHMTEST_TMP/esc.json" && fail "a raw escape byte in the JSON"
json_check "$SHMTEST_TMP/esc.json" "j['scan']['target_host'] == 'evil\x1b]0;owned\x07\x1b[31mname'" \
    "the hostname's bytes survive in the JSON, escaped"
"$SHMWATCH" --pid "$CTR_PID" --once >"$SHMTEST_TMP/esc.txt" 2>&1 || fail "shmwatch --pid --once exited $?"
grep -q $'\033' "$SHMTEST_TMP/esc.txt" && fail "a raw escape byte in the text report"
grep -qF 'evil\e]0;owned' "$SHMTEST_TMP/esc.txt" || fail "the escaped hostname is missing: $(head -c 300 "$SHMTEST_TMP/esc.txt")"
ok "the hostname is escaped in the text report"
