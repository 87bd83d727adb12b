#!/usr/bin/env bash
# --all from the host: two emulated containers, each a pid namespace and a
# mount namespace of its own with its own tmpfs at /dev/shm (64 and 32 MiB),
# its own memory cgroup named as Docker's systemd driver names a container's
# (docker-<id>.scope, 512 and 256 MiB) and a DataLoader-like scene whose
# in-namespace pids are the same numbers in both. One run must show the
# host's /dev/shm and both containers' mounts, each by its device with its
# container, cgroup and budget; groups, creators and orphans per container,
# never mixed (a zombie its parent's); the text report a heading per
# container; Prometheus series labelled with the container; without root
# what can be read and a warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need setpriv od
_lib_tmp

scene_ctr A 536870912 64m --workers 2 --per-worker 4 --orphans 2 --zombies 1
scene_ctr B 268435456 32m --workers 2 --per-worker 4 --orphans 1
for tag in A B; do
    man_var=MAN_$tag
    MANIFEST=${!man_var}
    main=$(ctr_host_pid "$MANIFEST" "$(manifest_pids main)")
    [ -n "$main" ] || fail "cannot find container $tag's main on the host"
    workers=$(for w in $(manifest_pids worker); do ctr_host_pid "$MANIFEST" "$w"; done | sort -n | tr '\n' ' ')
    printf -v "MAIN_$tag" %s "$main"
    printf -v "WORKERS_$tag" %s "$workers"
    on_exit "[ \"\$(cat /proc/$main/cgroup 2>/dev/null | grep -c docker-)\" != 0 ] && kill -KILL $main; true"
done
[ "$(awk '$1 == "main" { print $2 }' "$MAN_A")" = "$(awk '$1 == "main" { print $2 }' "$MAN_B")" ] ||
    fail "the two scenes should have the same pids inside their namespaces"
export ID_A ID_B MAIN_A MAIN_B WORKERS_A WORKERS_B
ok "two containers: mains $MAIN_A and $MAIN_B on the host, the same pids inside"

snap=$SHMTEST_TMP/all.json
"$SHMWATCH" --all --json >"$snap" || fail "shmwatch --all --json exited $?"
json_check "$snap" "j['scan']['all'] is True and len(set(m['id'] for m in j['mounts'])) == len(j['mounts'])" \
    "the node view: every mount once, by a unique id" \
    "any(m['containers'] == [] and m['path'] == '/dev/shm' and m['cgroup'] == j['cgroup'] for m in j['mounts'])" \
    "the host's own /dev/shm is there, with no container and the host's cgroup" \
    "[(m['path'], m['size_bytes'], m['containers'][0]['runtime'], m['containers'][0]['pid'] in [int(env['MAIN_A'])] + [int(x) for x in env['WORKERS_A'].split()], m['cgroup']['limit_bytes'], m['budget']['limit_source'], m['budget']['limit_bytes']) for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_A']]] == [('/dev/shm', 64 << 20, 'docker', True, 512 << 20, 'cgroup', 512 << 20)]" \
    "container A's 64 MiB mount names it, with its own cgroup (512 MiB) as its budget's limit" \
    "[(m['size_bytes'], m['cgroup']['limit_bytes'], m['budget']['limit_bytes']) for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_B']]] == [(32 << 20, 256 << 20, 256 << 20)]" \
    "container B's 32 MiB mount has its own 256 MiB budget"
for tag in A B; do
    man_var=MAN_$tag
    export MANIFEST=${!man_var} TAG=$tag
    json_check "$snap" "sorted(s['name'] for s in j['segments'] if s['mount_id'] == [m['id'] for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_' + env['TAG']]]][0] and s['state'] in ('in_use', 'orphan')) == sorted(x['name'] for x in man['segments'] if x['mode'] in ('named', 'orphan'))" \
        "container $tag's named segments and orphans are on its mount" \
        "[(g['container'], sorted(g['workers'])) for g in j['groups'] if g['main_pid'] == int(env['MAIN_' + env['TAG']])] == [(env['ID_' + env['TAG']], [int(x) for x in env['WORKERS_' + env['TAG']].split()])]" \
        "container $tag's DataLoader group: its main, its workers, its container" \
        "(w := [int(x) for x in env['WORKERS_' + env['TAG']].split()]) and (mid := [m['id'] for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_' + env['TAG']]]][0]) and len(ss := [s for s in j['segments'] if s['mount_id'] == mid and s['state'] in ('in_use', 'hidden') and s['creator_alive']]) >= 4 and all(s['creator_pid'] in w and s['group'] == int(env['MAIN_' + env['TAG']]) for s in ss)" \
        "container $tag's creator pids (the same numbers inside both) are its own workers'" \
        "len(ps := [p for p in j['processes'] if p['pid'] in [int(env['MAIN_' + env['TAG']])] + [int(x) for x in env['WORKERS_' + env['TAG']].split()]]) == 3 and all(p['container'] == env['ID_' + env['TAG']] for p in ps)" \
        "container $tag's processes name it" \
        "[(m['budget']['loader']['main_pid'], m['budget']['loader']['workers'], m['budget']['loader']['batch_shm_bytes'] == [g for g in j['groups'] if g['main_pid'] == int(env['MAIN_' + env['TAG']])][0]['batch_shm_bytes'] > 0, m['budget']['loader']['workers_fit_limit'] is not None) for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_' + env['TAG']]]] == [(int(env['MAIN_' + env['TAG']]), 2, True, True)]" \
        "container $tag's budget names its own DataLoader (main, workers, batch) and what fits under its limit"
done
unset MANIFEST
json_check "$snap" "[p['container'] for p in j['processes'] if p['role'] == 'zombie' and p['ppid'] == int(env['MAIN_A'])] == [env['ID_A']]" \
    "container A's zombie (no namespaces left to read) is A's, its parent's, not the host's" \
    "[sum(1 for s in j['segments'] if s['state'] == 'orphan' and s['mount_id'] == m['id']) for t in ('A', 'B') for m in j['mounts'] if [c['id'] for c in m['containers']] == [env['ID_' + t]]] == [2, 1]" \
    "orphans proved per container (2 in A, 1 in B)"

"$SHMWATCH" --all --once >"$SHMTEST_TMP/all.txt" || fail "--all --once exited $?"
host_line=$(grep -n '^== HOST$' "$SHMTEST_TMP/all.txt" | cut -d: -f1)
a_line=$(grep -n "^== CONTAINER .*(docker ${ID_A:0:12}, " "$SHMTEST_TMP/all.txt" | cut -d: -f1)
b_line=$(grep -n "^== CONTAINER .*(docker ${ID_B:0:12}, " "$SHMTEST_TMP/all.txt" | cut -d: -f1)
[ -n "$host_line" ] && [ -n "$a_line" ] && [ -n "$b_line" ] && [ "$host_line" -lt "$a_line" ] ||
    fail "the text report has no heading per container, the host's first: $(grep '^==' "$SHMTEST_TMP/all.txt")"
sed -n "$a_line,\$p" "$SHMTEST_TMP/all.txt" | grep -q "main $MAIN_A " ||
    fail "container A's group is not under its heading"
# block LINE: the text report's section that begins at LINE, up to the next heading.
block() { awk -v from="$1" 'NR == from { print; next } NR > from && /^== / { exit } NR > from' "$SHMTEST_TMP/all.txt"; }
for t in "A $a_line $MAIN_A" "B $b_line $MAIN_B"; do
    read -r name line main <<<"$t"
    block "$line" | grep -q "^  loader: main $main, one batch .* in shm, .* with 2 workers (prefetch factor [0-9]*)$" ||
        fail "container $name's BUDGET has no loader line of its own main $main: $(block "$line" | grep -A3 '^BUDGET')"
done
block "$host_line" | grep -q '^  loader:' && fail "the host's BUDGET names a DataLoader it does not run"
ok "the text report: a heading per container, the host's first, each with its group and its own loader"

"$SHMWATCH" --all --prometheus >"$SHMTEST_TMP/all.prom" || fail "--all --prometheus exited $?"
grep -q "^shmwatch_mount_size_bytes{mount=\"/dev/shm\",mount_id=\"[0-9]*:[0-9]*\",container=\"[^\"]*\",container_id=\"$ID_A\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 67108864$" "$SHMTEST_TMP/all.prom" ||
    fail "no labelled size series for container A: $(grep -m3 '^shmwatch_mount_size_bytes' "$SHMTEST_TMP/all.prom")"
grep -q "^shmwatch_cgroup_limit_bytes{.*container_id=\"$ID_B\".*} 268435456$" "$SHMTEST_TMP/all.prom" ||
    fail "no labelled cgroup limit for container B"
ok "Prometheus: per-mount series labelled with the container, each with its own limit"

# NDJSON: the same view at each interval.
"$SHMWATCH" --all --json --interval 0.2 --count 2 >"$SHMTEST_TMP/all.ndjson" || fail "--all NDJSON exited $?"
[ "$(grep -c "\"id\":\"$ID_B\"" "$SHMTEST_TMP/all.ndjson")" -ge 2 ] || fail "NDJSON lines lack container B"
ok "NDJSON: every line has the containers"

# Without root: what can be read, and a warning for the rest; never a failure.
setpriv --reuid=65534 --regid=65534 --clear-groups "$SHMWATCH" --all --json >"$SHMTEST_TMP/nobody.json" ||
    fail "--all without root exited $?"
json_check "$SHMTEST_TMP/nobody.json" "not any(c['id'] in (env['ID_A'], env['ID_B']) for m in j['mounts'] for c in m['containers']) and any('could not be read' in w for w in j['warnings'])" \
    "without root: the containers' mounts are not shown, and a warning says so"

# A container that has exited is gone from the next snapshot, without error.
kill -KILL "$OUTER_B" "$MAIN_B" 2>/dev/null
wait_for '! kill -0 '"$MAIN_B"' 2>/dev/null' 10 || fail "container B did not stop"
"$SHMWATCH" --all --json >"$SHMTEST_TMP/after.json" || fail "--all after an exit exited $?"
json_check "$SHMTEST_TMP/after.json" "not any(c['id'] == env['ID_B'] for m in j['mounts'] for c in m['containers']) and any(c['id'] == env['ID_A'] for m in j['mounts'] for c in m['containers'])" \
    "an exited container's mount is gone, its neighbour's stays"

"$SHMWATCH" --all --pid 1 --json >/dev/null 2>"$SHMTEST_TMP/err" && fail "--all --pid was accepted"
grep -q "exclude each other" "$SHMTEST_TMP/err" || fail "no clear error for --all --pid"
ok "--all with --pid: a usage error"

# The host is pid 1's world, also for a shmwatch in a mount namespace of its
# own (a DaemonSet's pod), and also where pid 1's links are refused (then
# kthreadd's: kernel threads live in the initial namespaces). The host's
# /dev/shm is only read here. Other tests' containers may share it
# (--ipc=host) while this one runs: those name a runtime; a namespace taken
# for a container would not.
HOSTDEV=$(mountpoint -d /dev/shm) || fail "/dev/shm is no mount point here"
export HOSTDEV
unshare -m --propagation private bash -c 'mount -t tmpfs -o size=8m tmpfs /dev/shm &&
    mountpoint -d /dev/shm >"$1" && exec "$0" --all --json' "$SHMWATCH" "$SHMTEST_TMP/owndev" \
    >"$SHMTEST_TMP/ownns.json" || fail "--all in a mount namespace exited $?"
OWNDEV=$(cat "$SHMTEST_TMP/owndev")
export OWNDEV
json_check "$SHMTEST_TMP/ownns.json" "j['mounts'][0]['id'] == env['HOSTDEV'] and [m for m in j['mounts'] if m['id'] == env['HOSTDEV']] == j['mounts'][:1] and all(c['runtime'] for c in j['mounts'][0]['containers']) and [[(c['id'], c['runtime']) for c in m['containers']] for m in j['mounts'] if m['id'] == env['OWNDEV']] == [[(None, None)]]" \
    "from a mount namespace of its own, the host's /dev/shm is the host's, its own a namespace's"
