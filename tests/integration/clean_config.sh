#!/usr/bin/env bash
# clean and reap read the configuration file as the main command does: the
# settings min_age and log_file apply unless --min-age and --log say
# otherwise, --config names another file, and a malformed file stops them
# with its file:line:column.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
_lib_tmp

export XDG_CONFIG_HOME=$SHMTEST_TMP/config
mkdir -p "$XDG_CONFIG_HOME/shmwatch"
cfglog=$SHMTEST_TMP/from-config.log
printf 'min_age: 1m\nlog_file: %s\n' "$cfglog" >"$XDG_CONFIG_HOME/shmwatch/config.yaml"

# An unheld segment written two minutes ago: older than the setting's 1m,
# younger than the 10m default.
head -c 4096 /dev/zero >/dev/shm/plain
touch -d '2 minutes ago' /dev/shm/plain

out=$("$SHMWATCH" clean --dry-run --all-unheld --min-age 10m 2>&1) || fail "clean exited $?: $out"
grep -q "Kept: .*younger than 10m" <<<"$out" || fail "--min-age does not override the setting: $out"
ok "--min-age overrides the setting min_age"

out=$("$SHMWATCH" clean --yes --all-unheld 2>&1) || fail "clean exited $?: $out"
[ ! -e /dev/shm/plain ] || fail "the setting min_age (1m) was not used: $out"
grep -q "	unlink	/dev/shm/plain	.*	removed	" "$cfglog" || fail "the removal is not in log_file $cfglog"
ok "clean uses the settings min_age and log_file"

printf 'min_age: 1m\nbogus_key: 1\n' >"$XDG_CONFIG_HOME/shmwatch/config.yaml"
for cmd in clean reap; do
    rc=0
    out=$("$SHMWATCH" "$cmd" --dry-run 2>&1) || rc=$?
    assert_eq "$rc" 2 "$cmd with a malformed config file exits 2"
    grep -q "^shmwatch $cmd: .*config.yaml:2:1: " <<<"$out" || fail "$cmd: no file:line:column: $out"
done
ok "a malformed config file stops clean and reap with file:line:column"

# --config: another file than the default (which is malformed now).
other=$SHMTEST_TMP/other.yaml
otherlog=$SHMTEST_TMP/from-other.log
printf 'min_age: 1m\nlog_file: %s\n' "$otherlog" >"$other"
head -c 4096 /dev/zero >/dev/shm/plain2
touch -d '2 minutes ago' /dev/shm/plain2
out=$("$SHMWATCH" clean --config "$other" --yes --all-unheld 2>&1) || fail "clean --config exited $?: $out"
[ ! -e /dev/shm/plain2 ] || fail "clean --config did not use its min_age (1m): $out"
grep -q "	unlink	/dev/shm/plain2	.*	removed	" "$otherlog" || fail "the removal is not in $otherlog"
out=$("$SHMWATCH" reap --config "$other" --dry-run 2>&1) || fail "reap --config exited $?: $out"
printf 'log_file: [\n' >"$other"
for cmd in clean reap; do
    rc=0
    out=$("$SHMWATCH" "$cmd" --config "$other" --dry-run 2>&1) || rc=$?
    assert_eq "$rc" 2 "$cmd --config with a malformed file exits 2"
    grep -q "^shmwatch $cmd: $other:2:1: " <<<"$out" || fail "$cmd --config: no file:line:column: $out"
done
ok "clean and reap read the file --config names"
