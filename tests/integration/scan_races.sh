#!/usr/bin/env bash
# Processes that exit mid-scan and /proc entries we may not read are normal:
# every snapshot stays valid JSON, exits 0, and says what it could not read.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setpriv
test_ns 64m -- "$@"

scene_start --workers 2 --per-worker 4 --churn
for i in $(seq 1 25); do
    "$SHMWATCH" --json >"$SHMTEST_TMP/race.$i.json" || fail "snapshot $i exited $?"
    json_check "$SHMTEST_TMP/race.$i.json" "j['totals']['hidden'] == 6 and [g['workers'] for g in j['groups'] if g['main_pid'] == man['main']] == [man['workers']]" \
        "snapshot $i is valid and complete despite churn" >/dev/null
done
ok "25 snapshots during process churn: valid JSON, complete"

# As nobody, root's processes cannot be read: a warning, exit 0, valid JSON.
"${NOBODY[@]}" "$SHMWATCH" --json >"$SHMTEST_TMP/nobody.json" ||
    fail "shmwatch as nobody exited $?"
json_check "$SHMTEST_TMP/nobody.json" "any('permission denied' in w for w in j['warnings']) and j['scan']['denied'] > 0" \
    "unreadable /proc entries are reported as warnings" \
    "j['totals']['orphans'] == 0 and sorted(s['state'] for s in j['segments'] if s['name'] in [m['name'] for m in man['segments'] if m['mode'] == 'named']) == ['unheld', 'unheld']" \
    "as nobody, root's held segments look unheld (never orphans): their creators live"
"${NOBODY[@]}" "$SHMWATCH" --once >/dev/null ||
    fail "shmwatch --once as nobody exited $?"
ok "text snapshot as nobody"

# --json stream: NDJSON, one object per line.
"$SHMWATCH" --json --interval 0.1 --count 3 >"$SHMTEST_TMP/stream.ndjson" || fail "stream exited $?"
assert_eq "$(grep -c '^{"schema":1,' "$SHMTEST_TMP/stream.ndjson")" 3 \
    "--count 3 gives three snapshot lines (event lines between them aside)"
/usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$SHMTEST_TMP/stream.ndjson" ||
    fail "a stream line is not valid JSON"
ok "each stream line is one JSON object"
scene_stop
