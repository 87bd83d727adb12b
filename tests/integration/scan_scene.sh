#!/usr/bin/env bash
# The scan engine against a real scene: a main process with workers holding
# torch segments in every way PyTorch does (named, unlinked + fd, unlinked +
# mapping only, passed to the main over SCM_RIGHTS), orphans of a dead
# creator and hostile names, in a private 64 MiB tmpfs at /dev/shm; and
# plan --observe on its DataLoader group.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"

# 3 workers x 8 segments of 1 MiB, 768 KiB touched (so 256 KiB pending each),
# 3 orphans of 256 KiB, 2 unheld files, the hostile names.
scene_start --workers 3 --per-worker 8 --size 1048576 --touch 786432 \
    --orphans 3 --unheld 2 --evil
snap=$SHMTEST_TMP/snap.json
"$SHMWATCH" --json >"$snap" || fail "shmwatch --json exited $?"

json_check "$snap" 'j["schema"] == 1 and len(j["mounts"]) == 1 and j["mounts"][0]["path"] == "/dev/shm"' \
    "one mount, the private /dev/shm" \
    'j["mounts"][0]["size_bytes"] == 64 << 20' "the mount is 64 MiB"

# Every created segment is listed once, by name, with the right state.
state_of='{"named": "in_use", "fd": "hidden", "map": "hidden", "passed": "hidden", "orphan": "orphan", "unheld": "unheld"}'
json_check "$snap" "all(sum(1 for s in j['segments'] if s['name'] == m['name'] and s['state'] == $state_of[m['mode']]) == 1 for m in man['segments'] if m['mode'] in $state_of)" \
    "every segment has the state its mode implies" \
    "sorted((s['state'], s['name']) for s in j['segments'] if s['state'] != 'unheld') == sorted(($state_of[m['mode']], m['name']) for m in man['segments'] if m['mode'] in $state_of and m['mode'] != 'unheld')" \
    "no segment is missing or extra" \
    "j['totals']['hidden'] == 18 and j['totals']['orphans'] == 3 and sum(s['state'] == 'in_use' for s in j['segments']) == 6" \
    "counts by state: 6 in use, 18 hidden, 3 orphans"

# Holders: how each mode holds its segment.
json_check "$snap" "all(any(h['pid'] == m['creator'] and h['fd'] is not None and h['mapped'] for h in s['holders']) for m in man['segments'] if m['mode'] == 'named' for s in j['segments'] if s['name'] == m['name'])" \
    "named: the worker holds an fd and a mapping" \
    "all([(h['pid'], h['fd'] is not None, h['mapped']) for h in s['holders']] == [(m['creator'], True, False)] for m in man['segments'] if m['mode'] == 'fd' for s in j['segments'] if s['name'] == m['name'])" \
    "fd: the worker holds only an fd" \
    "all([(h['pid'], h['fd'], h['mapped']) for h in s['holders']] == [(m['creator'], None, True)] for m in man['segments'] if m['mode'] == 'map' for s in j['segments'] if s['name'] == m['name'])" \
    "map: the worker only maps it" \
    "all([(h['pid'], h['fd'] is not None) for h in s['holders']] == [(man['main'], True)] for m in man['segments'] if m['mode'] == 'passed' for s in j['segments'] if s['name'] == m['name'])" \
    "passed: only the main process holds it, by fd"

# Sizes: apparent 1 MiB, allocated what was touched, pending the rest.
json_check "$snap" "all(s['size_bytes'] == 1048576 and abs(s['alloc_bytes'] - 786432) <= page for s in j['segments'] if s['state'] in ('in_use', 'hidden'))" \
    "live segments: size 1 MiB, 768 KiB allocated" \
    "abs(j['mounts'][0]['pending_bytes'] - 24 * 262144) <= 24 * page" \
    "pending bytes: 24 x 256 KiB not yet written" \
    "abs(j['mounts'][0]['hidden_bytes'] - 18 * 786432) <= 18 * page" \
    "hidden bytes: the 18 unlinked segments' allocation" \
    "j['mounts'][0]['orphan_bytes'] == j['totals']['orphan_bytes'] and abs(j['mounts'][0]['orphan_bytes'] - 3 * 262144) <= 3 * page" \
    "orphan bytes"
nseg=$(manifest_segments | wc -l)
json_check "$snap" "j['mounts'][0]['used_bytes'] == j['mounts'][0]['named_bytes'] + j['mounts'][0]['hidden_bytes'] + j['mounts'][0]['unattributed_bytes'] and j['mounts'][0]['unattributed_bytes'] <= ($nseg + 4) * page" \
    "used = named + hidden + unattributed, and (as root) almost nothing unattributed"

# Creators and the DataLoader group.
json_check "$snap" "all(s['creator_pid'] == m['creator'] and s['creator_alive'] for m in man['segments'] if m['mode'] in ('named', 'fd', 'map', 'passed') for s in j['segments'] if s['name'] == m['name'])" \
    "torch segments name their live creator" \
    "all(s['creator_alive'] is False and s['creator_pid'] in man['orphan_creator'] for s in j['segments'] if s['state'] == 'orphan')" \
    "orphans name their dead creator" \
    "[sorted(g['workers']) for g in j['groups'] if g['main_pid'] == man['main']] == [sorted(man['workers'])]" \
    "one group: the main with every worker" \
    "all(p['role'] == 'worker' and p['group'] == man['main'] for p in j['processes'] if p['pid'] in man['workers']) and any(p['pid'] == man['main'] and p['role'] == 'main' for p in j['processes'])" \
    "roles: main and workers" \
    "all(s['group'] == man['main'] for s in j['segments'] if s['state'] in ('in_use', 'hidden')) and all(s['group'] is None for s in j['segments'] if s['state'] == 'orphan')" \
    "live segments belong to the group, orphans to none" \
    "[g['segments'] for g in j['groups'] if g['main_pid'] == man['main']] == [24]" "the group counts its 24 segments"

# Hostile entries: listed with their type, never orphans, never followed.
json_check "$snap" "any(s['name'] == 'torch_1_2_3' and s['type'] == 'symlink' and s['state'] == 'unheld' for s in j['segments'])" \
    "a symlink named like a torch segment is listed as a symlink, unheld" \
    "any(s['name'] == 'torch_fifo_2' and s['type'] == 'fifo' for s in j['segments']) and any(s['name'] == 'torch_dir_1/inner' for s in j['segments'])" \
    "a FIFO is listed as such; a directory's file is listed below it" \
    "any(s['name'] == 'torch_9_1\nfake' for s in j['segments']) and any(s['name'] == '\x1b[31mRED\x1b[0m' for s in j['segments']) and any(s['name'] == 'torch_9_3_\ufffd\ufffd' for s in j['segments'])" \
    "names with a newline, escapes and invalid UTF-8 come through JSON intact or replaced"

# The same snapshot whichever way the mappings are read (SHMWATCH_MAPS,
# query by default): the maps text and PROCMAP_QUERY (the text again on a
# kernel before 6.11) find the same holders, names, sizes, processes and
# groups. Zombies and orphaned workers are the whole machine's (the pid
# namespace is the host's): one that comes or goes between the two
# snapshots, a linker's in a build beside this test, is no difference of
# the two ways, so they are left out.
for way in text query; do
    SHMWATCH_MAPS=$way "$SHMWATCH" --json >"$SHMTEST_TMP/snap.$way.json" ||
        fail "SHMWATCH_MAPS=$way shmwatch --json exited $?"
done
/usr/bin/python3 - "$SHMTEST_TMP/snap.text.json" "$SHMTEST_TMP/snap.query.json" <<'PY' ||
import json, sys
def facts(path):
    j = json.load(open(path))
    segs = sorted((s["name"], s["state"], s["size_bytes"], s["alloc_bytes"], s["creator_pid"], s["group"],
                   sorted((h["pid"], h["fd"], h["mapped"]) for h in s["holders"])) for s in j["segments"])
    # The whole machine's: its roles, and their counts in the totals.
    machine_roles, machine_totals = ("zombie", "orphan_worker"), ("zombies", "orphan_workers")
    procs = sorted((p["pid"], p["role"], p["group"], p["cmdline"]) for p in j["processes"]
                   if p["role"] not in machine_roles)
    groups = sorted((g["main_pid"], sorted(g["workers"]), g["segments"]) for g in j["groups"])
    totals = {k: v for k, v in j["totals"].items() if k not in machine_totals}
    return segs, procs, groups, totals
a, b = facts(sys.argv[1]), facts(sys.argv[2])
for what, x, y in zip(("segments", "processes", "groups", "totals"), a, b):
    if x != y:
        sys.exit("%s differ: text %r, query %r" % (what, x, y))
sys.exit(0 if len(a[0]) >= 24 else "too few segments")
PY
    fail "the maps text and PROCMAP_QUERY give different snapshots"
ok "the maps text and PROCMAP_QUERY give the same segments, holders, processes and groups"

# The text report: the same scene, no raw control byte anywhere; and a name
# that begins with a combining mark (U+0301), which a terminal would draw
# over the character before it, shown by number.
printf x >"/dev/shm/$(printf '\xcc\x81')mark"
"$SHMWATCH" --once >"$SHMTEST_TMP/once.txt" || fail "shmwatch --once exited $?"
/usr/bin/python3 - "$SHMTEST_TMP/once.txt" <<'PY' || fail "text output carries raw control bytes"
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f]
sys.exit(1 if bad or b"\xff" in data else 0)
PY
ok "text output has no raw control bytes"
grep -q 'torch_9_1\\nfake' "$SHMTEST_TMP/once.txt" || fail "the newline in a name is shown as \\n"
grep -q ' \\u{301}mark' "$SHMTEST_TMP/once.txt" || fail "a name's leading combining mark is not shown as \\u{301}"
grep -q "main $(manifest_pids main)" "$SHMTEST_TMP/once.txt" || fail "text names the group's main"
grep -q '^ORPHANS' "$SHMTEST_TMP/once.txt" || fail "text lists orphans"
ok "text report shows the group, orphans and escaped names"

# plan --observe on the scene's group: the batch from what its main and workers
# hold now, 24 segments of 1 MiB (the real DataLoader's batch is plan-observe's).
main=$(manifest_pids main)
"$SHMWATCH" plan --observe "$main" --json >"$SHMTEST_TMP/observe.json" || fail "plan --observe --json exited $?"
json_check "$SHMTEST_TMP/observe.json" "j['observed']['main_pid'] == man['main'] and (j['observed']['workers'], j['observed']['segments'], j['observed']['shm_bytes'], j['batch_shm_bytes']) == (3, 24, 24 << 20, 1 << 20)" \
    "plan --observe: 3 workers, 24 segments of 1 MiB, one a batch"
"$SHMWATCH" plan --observe "$main" >"$SHMTEST_TMP/observe.txt" || fail "plan --observe exited $?"
grep -q "^   24 segments, 25,165,824 bytes (24.0 MiB), with 3 workers$" "$SHMTEST_TMP/observe.txt" ||
    fail "plan --observe's text does not say what the group holds: $(head -n 5 "$SHMTEST_TMP/observe.txt")"
ok "plan --observe's text says what the group holds"
scene_stop
