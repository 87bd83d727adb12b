#!/usr/bin/env bash
# The node view (--all) on a real Docker host: one private dockerd, one image
# (the PyTorch 2.6 root), containers with --network none.
#   1. Three training containers, each with its own -m and --shm-size and a
#      real DataLoader holding batches (file_system, file_descriptor,
#      file_system): --all --json shows each one's /dev/shm as a mount of its
#      own, named by the container's name, with its own cgroup limit, shm size
#      and budget; its segments, DataLoader group and processes carry its id,
#      never a neighbour's. The text report and the Prometheus series name them.
#   2. One under a kubepods-shaped --cgroup-parent (as cri-dockerd puts Docker
#      containers) with cri-dockerd's pod labels: a Docker container, the pod
#      uid parsed from the path, the pod and namespace from the labels.
#   3. Two sharing one /dev/shm (--ipc=shareable, --ipc=container:X): one
#      mount naming both. One with --ipc=host: the host's mount names it.
#   4. Containers that exit while a stream of --all scans runs: no scan
#      fails, and once they are gone no mount names them.
#   5. Hostile names: a hostname with escape sequences, cri-dockerd labels with
#      escape sequences, a newline and invalid UTF-8, a container whose
#      /etc/hostname is a symbolic link to a host file, huge, or binary: none
#      of it reaches the JSON, the text report or a Prometheus label raw, and
#      the host's file not at all.
#   6. One training job killed (its shm manager first, as an OOM kill or a
#      node drain leaves it): its leftovers are orphans of that container;
#      clean --pid removes them all and nothing of its neighbours.
#   7. One container with -m and two shm tmpfs (its /dev/shm and a --tmpfs
#      /run/shm), both filled: both are its mounts, and each one's budget
#      headroom is the limit less the cgroup's anon and both mounts' used
#      bytes, as the cgroup's own memory.stat has them; both recommend one -m.
# The test's own /dev/shm is a private tmpfs (in_shm_ns), the "host's" here;
# other tests and daemons may run on the machine: every check picks this
# test's containers by their full ids.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
need /usr/bin/python3 promtool
test_ns 64m -- "$@"
IMG=$DOCKER_IMAGE_TORCH
W=/opt/shmwatch-workload # the workload, inside
T0=$SECONDS
# The outputs: --all shows every container of the machine (other tests' big
# scenes too), a snapshot can be megabytes: on disk, not in the test's tmpfs.
OUT=$(mktemp -d /var/tmp/shmwatch-node-docker.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $OUT"

docker_start
docker_image_torch
docker_names_visible
on_exit '[ "$rc" -eq 0 ] || docker_dump'
ok "dockerd ($DOCKER_DRIVER) and $IMG ready after $((SECONDS - T0)) s"

# --- The containers ------------------------------------------------------

# train NAME STRATEGY DOCKER-RUN-ARGS...: a container whose job is a
# DataLoader holding 2 batches (workers prefetching more) until its stdin
# closes, which it never does.
train() {
    local name=$1 strategy=$2
    shift 2
    docker_run "$name" "$@" -v "$SRCDIR/tests/torch:$W:ro" "$IMG" sh -c \
        "sleep 900 | exec python3 $W/workload.py --strategy $strategy --workers 2 --prefetch-factor 2 --batch-size 4 --shape 3x64x64 --hold-batches 2"
}
# shm NAME BYTES: a shell command for a container that writes /dev/shm/NAME
# and sleeps.
shm() {
    echo "head -c $2 /dev/zero >/dev/shm/$1 && exec sleep 900"
}

train train-a file_system -m 1g --shm-size 64m
train train-b file_descriptor -m 1536m --shm-size 128m
train train-c file_system -m 2g --shm-size 96m

POD_UID=0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0
docker_run pod-d --cgroup-parent "/kubepods/burstable/pod$POD_UID" -m 512m --shm-size 16m \
    --label io.kubernetes.pod.name=trainer-0 --label io.kubernetes.pod.namespace=ml \
    "$IMG" sh -c "$(shm probe-pod 1048576)"
docker_run ipc-owner --ipc=shareable --shm-size 24m "$IMG" sh -c "$(shm probe-owner 1048576)"
docker_run ipc-guest --ipc=container:ipc-owner "$IMG" sh -c "$(shm probe-guest 2097152)"
head -c 65536 /dev/zero >/dev/shm/probe-host
docker_run hostipc --ipc=host "$IMG" sh -c "$(shm probe-hostipc 1048576)"

SECRET=SECRET-of-the-host-$$
echo "$SECRET" >"$OUT/host-secret"
docker_run hostile-esc --hostname $'evil\e]0;owned\a\e[31m' \
    --label $'io.kubernetes.pod.name=pod\e[2J\nINJECTED 1' \
    --label $'io.kubernetes.pod.namespace=ns\xff\xfe\e[0m' \
    "$IMG" sh -c "$(shm probe-esc 4096)"
# With CAP_SYS_ADMIN the container can take Docker's /etc/hostname away and
# put a link to an absolute path there: followed from the host through
# /proc/PID/root, it would read the host's file.
docker_run hostile-link --cap-add SYS_ADMIN "$IMG" sh -c \
    "umount /etc/hostname && ln -sf $OUT/host-secret /etc/hostname && $(shm probe-link 4096)"
docker_run hostile-huge "$IMG" sh -c \
    "head -c 3000000 /dev/zero | tr '\\000' A >/etc/hostname && $(shm probe-huge 4096)"
docker_run hostile-bin "$IMG" sh -c \
    "printf '\\377\\376\\033[2J\\007\\000bin\\r\\033]0;x\\007' >/etc/hostname && $(shm probe-bin 4096)"

declare -A ID PID
for c in train-a train-b train-c pod-d ipc-owner ipc-guest hostipc hostile-esc hostile-link \
    hostile-huge hostile-bin; do
    ID[$c]=$(dk inspect -f '{{.Id}}' "$c") || fail "no id for $c"
    PID[$c]=$(docker_pid "$c")
    k=ID_${c//-/_}
    export "${k^^}=${ID[$c]}"
done
export POD_UID SECRET

for c in train-a train-b train-c; do
    wait_for "dk logs $c 2>/dev/null | grep -q '^READY ' || [ \"\$(dk inspect -f '{{.State.Running}}' $c)\" != true ]" 180 &&
        dk logs "$c" 2>/dev/null | grep -q '^READY ' ||
        fail "$c's DataLoader did not hold its batches: $(dk logs "$c" 2>&1 | tail -n 5)"
done
for f in pod-d:probe-pod ipc-owner:probe-owner ipc-guest:probe-guest hostipc:probe-hostipc \
    hostile-esc:probe-esc hostile-link:probe-link hostile-huge:probe-huge hostile-bin:probe-bin; do
    wait_for "[ -f /proc/${PID[${f%%:*}]}/root/dev/shm/${f#*:} ]" 30 ||
        fail "${f%%:*} did not write /dev/shm/${f#*:}: $(dk logs "${f%%:*}" 2>&1 | tail -n 3)"
done
assert_eq "$(stat -L -c %d "/proc/${PID[hostipc]}/root/dev/shm")" "$(stat -c %d /dev/shm)" \
    "--ipc=host: the container's /dev/shm is this host's (the test's tmpfs)"
assert_eq "$(stat -L -c %d "/proc/${PID[ipc-guest]}/root/dev/shm")" \
    "$(stat -L -c %d "/proc/${PID[ipc-owner]}/root/dev/shm")" "--ipc=container: one /dev/shm for two containers"
[ "$(readlink "/proc/${PID[hostile-link]}/root/etc/hostname")" = "$OUT/host-secret" ] ||
    fail "hostile-link's /etc/hostname is not the link: $(dk logs hostile-link 2>&1 | tail -n 3)"
ok "11 containers run, three DataLoaders hold their batches ($((SECONDS - T0)) s)"

# --- 1-3: one snapshot of the node -----------------------------------------

A=$OUT/all.json
"$SHMWATCH" --all --json >"$A" 2>"$OUT/all.err" ||
    fail "shmwatch --all --json exited $?: $(head -c 500 "$OUT/all.err")"

# mof KEY: a Python expression, the mounts (of the snapshot j) whose containers
# include the container id in env[KEY].
mof() { echo "[m for m in j['mounts'] if env['$1'] in [c['id'] for c in m['containers']]]"; }

json_check "$A" "len(set(m['id'] for m in j['mounts'])) == len(j['mounts']) and all(s['mount_id'] in [m['id'] for m in j['mounts']] for s in j['segments'])" \
    "mount ids are unique, and every segment's mount_id is one of them"
for spec in "train-a 64 1024" "train-b 128 1536" "train-c 96 2048"; do
    read -r c shm mem <<<"$spec"
    k=ID_${c//-/_}
    k=${k^^}
    json_check "$A" "[(m['size_bytes'], m['cgroup'] and m['cgroup']['limit_bytes'], m['budget']['limit_bytes'], m['budget']['limit_source'], m['budget']['shm_size_bytes'], [(c['name'], c['runtime'], c['pid'] is not None) for c in m['containers']]) for m in $(mof "$k")] == [($shm << 20, $mem << 20, $mem << 20, 'cgroup', $shm << 20, [('$c', 'docker', True)])]" \
        "$c: one mount of its own, named $c, its ${shm} MiB /dev/shm against its own -m ${mem}m" \
        "len([s for s in j['segments'] if s['mount_id'] in [m['id'] for m in $(mof "$k")] and s['kind'] == 'torch']) > 0" \
        "$c: its DataLoader's torch segments are on its mount" \
        "[(len(g['workers']), [p['container'] for p in j['processes'] if p['pid'] == g['main_pid']]) for g in j['groups'] if g['container'] == env['$k']] == [(2, [env['$k']])]" \
        "$c: one DataLoader group of its own, two workers, its main process in $c"
done
json_check "$A" "all(p['container'] == g['container'] for g in j['groups'] for p in j['processes'] if p['pid'] in g['workers'] + [g['main_pid']] + g['shm_managers'])" \
    "no DataLoader group mixes processes of two containers" \
    "all(s['group'] is None or [g['container'] for g in j['groups'] if g['main_pid'] == s['group']] == [c['id'] for m in j['mounts'] if m['id'] == s['mount_id'] for c in m['containers']][:1] for s in j['segments'] if any(env[k] in [c['id'] for m in j['mounts'] if m['id'] == s['mount_id'] for c in m['containers']] for k in ('ID_TRAIN_A', 'ID_TRAIN_B', 'ID_TRAIN_C')))" \
    "each training segment's group is of the container whose mount holds it" \
    "len([s for s in j['segments'] if s['state'] == 'hidden' and s['mount_id'] in [m['id'] for m in $(mof ID_TRAIN_B)]]) > 0 and len([s for s in j['segments'] if s['state'] == 'in_use' and s['mount_id'] in [m['id'] for m in $(mof ID_TRAIN_A)]]) > 0" \
    "train-b's file_descriptor segments are hidden, train-a's file_system ones named and in use"

json_check "$A" "[(m['size_bytes'], m['cgroup'] and m['cgroup']['limit_bytes'], [(c['name'], c['runtime'], c['pod_uid'], c['pod'], c['namespace']) for c in m['containers']]) for m in $(mof ID_POD_D)] == [(16 << 20, 512 << 20, [('pod-d', 'docker', env['POD_UID'], 'trainer-0', 'ml')])]" \
    "pod-d under a kubepods cgroup parent: a Docker container, pod uid from the path, pod and namespace from its labels"

json_check "$A" "[(sorted(c['id'] for c in m['containers']), m['size_bytes'], sorted(s['name'] for s in j['segments'] if s['mount_id'] == m['id'])) for m in $(mof ID_IPC_OWNER)] == [(sorted([env['ID_IPC_OWNER'], env['ID_IPC_GUEST']]), 24 << 20, ['probe-guest', 'probe-owner'])]" \
    "--ipc=container: one mount naming both containers, with both files" \
    "len($(mof ID_IPC_GUEST)) == 1" "and no second mount for the guest" \
    "[sorted(s['name'] for s in j['segments'] if s['mount_id'] == m['id'] and s['name'].startswith('probe-')) for m in $(mof ID_HOSTIPC)] == [['probe-host', 'probe-hostipc']]" \
    "--ipc=host: the host's own mount (with the host's file) names the container, once"

O=$OUT/all.txt
"$SHMWATCH" --all --once >"$O" 2>&1 || fail "shmwatch --all --once exited $?: $(head -c 500 "$O")"
for c in train-a train-b train-c pod-d ipc-owner ipc-guest hostipc; do
    grep -qF "$c" "$O" || fail "the text report does not name $c: $(head -c 1500 "$O")"
done
ok "the text report names every container"

P=$OUT/all.prom
"$SHMWATCH" --all --prometheus >"$P" 2>"$OUT/prom.err" ||
    fail "shmwatch --all --prometheus exited $?: $(cat "$OUT/prom.err")"
promtool check metrics <"$P" >"$OUT/promtool.out" 2>&1 ||
    fail "promtool check metrics: $(head -n 5 "$OUT/promtool.out")"
ok "promtool accepts the node view's metrics"
# series NAME LABEL=VALUE...: the values of the samples of NAME that carry
# every LABEL=VALUE given, one a line.
series() {
    /usr/bin/python3 - "$P" "$@" <<'PY'
import re, sys
path, name, want = sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
for line in open(path, encoding="utf-8"):
    if not line.startswith(name + "{"):
        continue
    labels, value = line.rsplit("}", 1)
    got = {k: v for k, v in lab.findall(labels[len(name) + 1:])}
    if all(got.get(k) == v for k, v in want.items()):
        print(value.strip())
PY
}
assert_eq "$(series shmwatch_mount_size_bytes container=train-a "container_id=${ID[train-a]}" pod= namespace=)" \
    67108864 "Prometheus: train-a's 64 MiB by container and container_id"
assert_eq "$(series shmwatch_mount_size_bytes container=train-c "container_id=${ID[train-c]}")" \
    100663296 "Prometheus: train-c's 96 MiB"
assert_eq "$(series shmwatch_mount_size_bytes container=pod-d pod=trainer-0 namespace=ml)" \
    16777216 "Prometheus: pod-d's 16 MiB labelled with its pod and namespace"
[ -n "$(series shmwatch_mount_used_bytes container=train-b)" ] || fail "no shmwatch_mount_used_bytes for train-b"
ok "Prometheus: train-b's used bytes"

# raw_check FILE: FILE is valid UTF-8 without a control byte but newline and
# tab, and no line of it begins with what a hostile label put after a newline.
raw_check() {
    /usr/bin/python3 - "$1" <<'PY' || fail "$(basename "$1") holds raw bytes from a container"
import sys
data = open(sys.argv[1], "rb").read()
try:
    data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"invalid UTF-8 at byte {e.start}: {data[max(0, e.start - 40):e.start + 10]!r}")
bad = [i for i, b in enumerate(data) if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
if bad:
    sys.exit(f"control byte {data[bad[0]]:#x} at {bad[0]}: {data[max(0, bad[0] - 40):bad[0] + 10]!r}")
PY
    if grep -qa '^INJECTED' "$1"; then
        fail "$(basename "$1"): a container's label started a line of its own"
    fi
}

# --- 5: hostile names ------------------------------------------------------
json_check "$A" "[(c['hostname'], c['pod']) for m in $(mof ID_HOSTILE_ESC) for c in m['containers']] == [('evil\x1b]0;owned\x07\x1b[31m', 'pod\x1b[2J\nINJECTED 1')]" \
    "hostile-esc: its hostname and pod label survive in the JSON as the same characters" \
    "[c['namespace'].startswith('ns') and '\x1b[0m' in c['namespace'] for m in $(mof ID_HOSTILE_ESC) for c in m['containers']] == [True]" \
    "hostile-esc: its namespace label (invalid UTF-8 in it) too" \
    "all(len(c[k] or '') <= 255 for m in j['mounts'] for c in m['containers'] for k in ('name', 'hostname', 'pod', 'namespace'))" \
    "no name or hostname longer than 255 characters (hostile-huge's 3 MB /etc/hostname is not read whole)"
for f in "$A" "$O" "$P"; do
    if grep -rqF "$SECRET" "$f"; then
        fail "$(basename "$f") holds the host's file, read through hostile-link's /etc/hostname"
    fi
    raw_check "$f"
done
ok "the JSON, the text report and the metrics hold no raw control byte, invalid UTF-8, injected line or host file"
[ -n "$(series shmwatch_mount_size_bytes "container_id=${ID[hostile-esc]}")" ] ||
    fail "no series for hostile-esc"
ok "hostile-esc's series are there, its labels escaped"

# The dashboard's node view in tmux: hostile-esc's details page shows its
# hostname, pod and namespace escaped; its OSC sequence never sets the pane's
# title, no control character reaches the screen.
. "$(dirname "$0")/tui_lib.sh"
tui_start 200 50 --all
tui_wait "node view" 30
tui_keys '*' / "${ID[hostile-esc]}" Enter
tui_wait "container hostile-esc" 15
tui_keys Enter
tui_wait '^ *hostname +evil\\e\]0;owned' 10
tui_wait '^ *pod +pod\\e\[2J\\nINJECTED 1' 5
tui_sane "hostile-esc's details page"
[ "$(tui display-message -p -t tui '#{pane_title}')" != owned ] ||
    fail "hostile-esc's hostname set the pane's title"
ok "the dashboard: hostile-esc's hostname and pod escaped on its details page, the terminal untouched"
tui_keys q
tui_quit

# Where the runtime's state is out of reach (here: /etc/docker without the
# daemon.json that names the data root, as on a node whose runtime shmwatch
# cannot read), a container is known by its own /etc/hostname, which the
# container writes: the link is not followed, the huge one not read, the
# binary one escaped.
N=$OUT/nostate.json
unshare -m --propagation private sh -c 'umount -l /etc/docker && exec "$@"' sh \
    "$SHMWATCH" --all --json >"$N" 2>"$OUT/nostate.err" ||
    fail "--all --json without the runtime's state exited $?: $(head -c 500 "$OUT/nostate.err")"
ctr() { echo "[c for m in $(mof "$1") for c in m['containers'] if c['id'] == env['$1']]"; }
json_check "$N" "[(c['name'], c['hostname']) for c in $(ctr ID_TRAIN_A)] == [(None, env['ID_TRAIN_A'][:12])]" \
    "without the runtime's state: no name, the hostname from the container's /etc/hostname" \
    "[c['hostname'] for c in $(ctr ID_HOSTILE_LINK)] == [None]" \
    "hostile-link: its /etc/hostname, a link to a host file, is not followed" \
    "[c['hostname'] for c in $(ctr ID_HOSTILE_HUGE)] == [None]" \
    "hostile-huge: its 3 MB /etc/hostname is not read" \
    "[c['hostname'] for c in $(ctr ID_HOSTILE_ESC)] == ['evil\x1b]0;owned\x07\x1b[31m']" \
    "hostile-esc: its /etc/hostname's escape sequences survive as characters in the JSON" \
    "[c['hostname'] is None or c['hostname'].startswith('\ufffd\ufffd\x1b[2J\x07') for c in $(ctr ID_HOSTILE_BIN)] == [True]" \
    "hostile-bin: its binary /etc/hostname's invalid UTF-8 is U+FFFD, its control bytes escaped"
unshare -m --propagation private sh -c 'umount -l /etc/docker && exec "$@"' sh \
    "$SHMWATCH" --all --once >"$OUT/nostate.txt" 2>&1 ||
    fail "--all --once without the runtime's state exited $?: $(head -c 500 "$OUT/nostate.txt")"
unshare -m --propagation private sh -c 'umount -l /etc/docker && exec "$@"' sh \
    "$SHMWATCH" --all --prometheus >"$OUT/nostate.prom" 2>&1 ||
    fail "--all --prometheus without the runtime's state exited $?: $(head -c 500 "$OUT/nostate.prom")"
promtool check metrics <"$OUT/nostate.prom" >"$OUT/promtool.out" 2>&1 ||
    fail "promtool check metrics (no runtime state): $(head -n 5 "$OUT/promtool.out")"
for f in "$N" "$OUT/nostate.txt" "$OUT/nostate.prom"; do
    ! grep -qF "$SECRET" "$f" || fail "$(basename "$f") holds the host's file, through hostile-link's /etc/hostname"
    raw_check "$f"
done
ok "without the runtime's state too: no raw byte, no host file in the JSON, the text report or the metrics"

# --- 4: containers that exit during a scan ---------------------------------
S=$OUT/stream.ndjson
"$SHMWATCH" --all --json --interval 0.2 --count 0 >"$S" 2>"$OUT/stream.err" &
STREAM=$!
on_exit "kill -KILL $STREAM 2>/dev/null; wait $STREAM 2>/dev/null"
BRIEF=()
for i in 1 2 3 4; do
    docker_run "brief-$i" "$IMG" sh -c "head -c 65536 /dev/zero >/dev/shm/brief-$i && sleep 2.$i"
    BRIEF+=("$(dk inspect -f '{{.Id}}' "brief-$i")")
done
for i in 1 2 3 4; do
    timeout 30 "$DOCKER_BIN" wait "brief-$i" >/dev/null || fail "brief-$i did not exit"
done
# Two more snapshots: the second was begun after every one of them had exited.
n=$(grep -c '^{"schema":1,' "$S")
wait_for "[ \$(grep -c '^{\"schema\":1,' '$S') -ge $((n + 2)) ]" 30 ||
    fail "the stream of --all scans stopped at $(grep -c '^{"schema":1,' "$S") snapshots: $(tail -n 5 "$OUT/stream.err")"
kill -TERM "$STREAM"
rc=0
wait "$STREAM" || rc=$?
[ "$rc" -eq 0 ] || fail "the stream of --all scans exited $rc while containers came and went ($(wc -l <"$S") snapshots): $(tail -n 5 "$OUT/stream.err")"
ok "a stream of --all scans ends cleanly while containers came and went ($(wc -l <"$S") snapshots)"
export BRIEF_IDS="${BRIEF[*]}"
/usr/bin/python3 - "$S" <<'PY' || fail "the stream of --all scans"
import json, os, sys
brief = set(os.environ["BRIEF_IDS"].split())
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"", "the last line is cut"
# The event lines between the snapshots (containers' mounts appearing and
# going) are whole JSON too; the snapshots are the lines without "event".
records = [json.loads(line) for line in lines[:-1]]
lines = [line for line, j in zip(lines[:-1], records) if "event" not in j] + [b""]
seen = 0
for n, line in enumerate(lines[:-1], 1):
    j = json.loads(line)
    assert j["schema"] == 1, f"snapshot {n}: schema {j['schema']}"
    for m in j["mounts"]:
        if brief & {c["id"] for c in m["containers"]}:
            seen += 1
last = json.loads(lines[-2])
named = [c["name"] for m in last["mounts"] for c in m["containers"] if c["id"] in brief]
assert not named, f"the last snapshot still names exited containers: {named}"
assert seen > 0, f"no snapshot of {len(lines) - 1} saw a short-lived container: nothing was tested"
print(f"ok - {len(lines) - 1} snapshots, {seen} mounts of short-lived containers seen, none named after they exited")
PY
"$SHMWATCH" --all --json >"$OUT/after.json" || fail "--all --json after the exits exited $?"
json_check "$OUT/after.json" "[c['name'] for m in j['mounts'] for c in m['containers'] if c['id'] in env['BRIEF_IDS'].split()] == []" \
    "after they exited no mount names them"

# --- 6: a killed job, cleaned with clean --pid -----------------------------
# What the neighbours have: train-a's files, train-b's hidden segments, the
# probes.
nb_files() {
    local c
    for c in train-a pod-d ipc-owner hostipc hostile-esc; do
        (cd "/proc/${PID[$c]}/root/dev/shm" && find . -maxdepth 1 -type f | sort | sed "s|^|$c |")
    done
}
hidden_of_b() {
    local p
    for p in $(docker_ns_pids train-b); do
        ls -l "/proc/$p/fd" 2>/dev/null
    done | grep -c '/dev/shm/torch_.*(deleted)'
}
before=$(nb_files)
before_b=$(hidden_of_b)
[ "$before_b" -gt 0 ] || fail "train-b holds no deleted torch segment (nothing to compare)"
# The job, not the container: its shm manager first, then the loader and
# its workers (the container's shell and sleep stay).
mapfile -t victims < <(for p in $(docker_ns_pids train-c); do
    echo "$(cat "/proc/$p/comm" 2>/dev/null) $p"
done | awk '$1 != "sh" && $1 != "sleep" { print ($1 == "torch_shm_manag" ? 0 : 1), $2 }' | sort -n | awk '{ print $2 }')
[ "${#victims[@]}" -ge 3 ] || fail "train-c's job has ${#victims[@]} processes: ${victims[*]}"
for p in "${victims[@]}"; do kill -KILL "$p" 2>/dev/null; done
wait_for "gone ${victims[*]}" 20 || fail "train-c's job did not die"
CSHM=/proc/${PID[train-c]}/root/dev/shm
left=$(find "$CSHM" -maxdepth 1 -name 'torch_*' | wc -l)
[ "$left" -gt 0 ] || fail "the killed job left no torch_* file (nothing to clean)"
ok "train-c's job killed (${#victims[@]} processes), $left files left in its /dev/shm; the container runs on"
"$SHMWATCH" --all --json --orphan-min-age 0 >"$OUT/killed.json" || fail "--all --json exited $?"
json_check "$OUT/killed.json" "sorted(s['state'] for s in j['segments'] if s['mount_id'] in [m['id'] for m in $(mof ID_TRAIN_C)] and s['kind'] == 'torch') == ['orphan'] * $left" \
    "--all: train-c's $left leftovers are orphans" \
    "[s['name'] for s in j['segments'] if s['state'] == 'orphan' and s['mount_id'] not in [m['id'] for m in $(mof ID_TRAIN_C)] and any(env[k] in [c['id'] for m in j['mounts'] if m['id'] == s['mount_id'] for c in m['containers']] for k in ('ID_TRAIN_A', 'ID_TRAIN_B'))] == []" \
    "--all: nothing of train-a or train-b is an orphan"

# The node's plan (a dry run only: other tests' containers may be on this
# machine) names train-c for each of its leftovers, and no neighbour.
# What it refuses there (status 3) is the other tests' business; nothing
# of train-c is refused.
rc=0
"$SHMWATCH" clean --all --dry-run --orphan-min-age 0 >"$OUT/plan.txt" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "clean --all --dry-run exited $rc: $(tail -n 3 "$OUT/plan.txt")"
! grep -F '(in train-c)' "$OUT/plan.txt" | grep -q '^refused' ||
    fail "clean --all refuses something of train-c: $(grep -F '(in train-c)' "$OUT/plan.txt")"
assert_eq "$(grep -c '^  /dev/shm/torch_[0-9_]* (in train-c)  ' "$OUT/plan.txt")" "$left" \
    "clean --all --dry-run plans the removal of train-c's $left leftovers, naming train-c"
grep -E '\(in (train-a|train-b|pod-d|ipc-owner|ipc-guest|hostipc|hostile-[a-z]+)\)' "$OUT/plan.txt" &&
    fail "clean --all plans an action in a neighbour"
ok "and nothing of a neighbour"
"$SHMWATCH" clean --pid "${PID[train-a]}" --yes --orphan-min-age 0 --log "$OUT/actions.log" \
    >"$OUT/clean-a.txt" 2>&1 || fail "clean --pid (train-a) exited $?: $(tail -n 3 "$OUT/clean-a.txt")"
grep -q '^removed' "$OUT/clean-a.txt" && fail "clean --pid removed a live job's file: $(grep '^removed' "$OUT/clean-a.txt")"
ok "clean --pid on train-a's live job removes nothing"
"$SHMWATCH" clean --pid "${PID[train-c]}" --yes --orphan-min-age 0 --log "$OUT/actions.log" \
    >"$OUT/clean-c.txt" 2>&1 || fail "clean --pid (train-c) exited $?: $(tail -n 3 "$OUT/clean-c.txt")"
assert_eq "$(grep -c '^removed' "$OUT/clean-c.txt")" "$left" "clean --pid on train-c removes its $left leftovers"
assert_eq "$(find "$CSHM" -maxdepth 1 -name 'torch_*' | wc -l)" 0 "train-c's /dev/shm has no torch file left"
grep -q '^Total:' "$OUT/clean-c.txt" || fail "clean prints no Total: line"
assert_eq "$(nb_files)" "$before" "the neighbours keep every file"
assert_eq "$(hidden_of_b)" "$before_b" "train-b still holds its $before_b hidden segments"
[ -f /dev/shm/probe-host ] || fail "the host's own file is gone"
kill -0 "${PID[train-c]}" 2>/dev/null || fail "train-c itself died"

# --- 7: two shm tmpfs in one container --------------------------------------
# The pages of both are charged to the container's cgroup (memory.stat
# shmem): each mount's headroom counts them all, not its own alone; the 24
# MiB of the other mount are far more than the tolerance.
docker_run two-shm -m 256m --shm-size 64m --tmpfs /run/shm:size=64m "$IMG" sh -c \
    "head -c 33554432 /dev/zero >/dev/shm/fill-dev && head -c 25165824 /dev/zero >/run/shm/fill-run && exec sleep 900"
ID[two-shm]=$(dk inspect -f '{{.Id}}' two-shm) || fail "no id for two-shm"
PID[two-shm]=$(docker_pid two-shm)
export ID_TWO_SHM=${ID[two-shm]}
wait_for "[ -f /proc/${PID[two-shm]}/root/run/shm/fill-run ] && [ \"\$(stat -c %s /proc/${PID[two-shm]}/root/run/shm/fill-run)\" = 25165824 ]" 30 ||
    fail "two-shm did not fill its mounts: $(dk logs two-shm 2>&1 | tail -n 3)"
T=$OUT/two-shm.json
"$SHMWATCH" --all --json >"$T" 2>"$OUT/two-shm.err" ||
    fail "shmwatch --all --json exited $?: $(head -c 500 "$OUT/two-shm.err")"
# The cgroup's own memory.stat right after the snapshot: its anon and its
# shmem (v2 anon and shmem; v1 total_rss and total_shmem, as cgroup.c reads).
TWO_SHM_STAT=$(/usr/bin/python3 - "${PID[two-shm]}" <<'PY'
import sys
for line in open(f"/proc/{sys.argv[1]}/cgroup"):
    hid, ctl, path = line.rstrip("\n").split(":", 2)
    if "memory" in ctl.split(","):
        base = "/sys/fs/cgroup/memory" + path
        keys = ("total_rss", "total_shmem")
        break
    if hid == "0" and ctl == "":
        base, keys = "/sys/fs/cgroup" + path, ("anon", "shmem")
stat = dict(l.split() for l in open(base + "/memory.stat"))
print(int(stat[keys[0]]), int(stat[keys[1]]))
PY
) || fail "cannot read two-shm's memory.stat"
read -r stat_anon stat_shmem <<<"$TWO_SHM_STAT"
json_check "$T" "sorted(m['path'] for m in $(mof ID_TWO_SHM)) == ['/dev/shm', '/run/shm'] and all(m['cgroup']['limit_bytes'] == 256 << 20 for m in $(mof ID_TWO_SHM))" \
    "two-shm: its /dev/shm and its --tmpfs /run/shm are both its mounts, under its -m 256m" \
    "all(m['budget']['shm_used_bytes'] == m['used_bytes'] for m in $(mof ID_TWO_SHM)) and sum(m['used_bytes'] for m in $(mof ID_TWO_SHM)) >= 56 << 20" \
    "two-shm: each budget's shm_used is its own mount's, 56 MiB written in all" \
    "abs(sum(m['used_bytes'] for m in $(mof ID_TWO_SHM)) - $stat_shmem) <= 2 << 20" \
    "two-shm: both mounts' used bytes are the cgroup's shmem ($stat_shmem in memory.stat)" \
    "all(abs(m['budget']['headroom_bytes'] - ((256 << 20) - $stat_anon - sum(x['used_bytes'] for x in $(mof ID_TWO_SHM)))) <= 2 << 20 for m in $(mof ID_TWO_SHM))" \
    "two-shm: each mount's headroom is the limit less the cgroup's anon ($stat_anon) and both mounts' used bytes" \
    "all(m['budget']['shm_effective_bytes'] <= m['budget']['headroom_bytes'] for m in $(mof ID_TWO_SHM))" \
    "two-shm: no more shm writable than that headroom" \
    "all(m['budget']['shm_other_bytes'] == sum(x['used_bytes'] for x in $(mof ID_TWO_SHM) if x is not m) for m in $(mof ID_TWO_SHM))" \
    "two-shm: each budget's shm_other_bytes is the other mount's used bytes" \
    "len(set(m['budget']['recommended_memory_bytes'] for m in $(mof ID_TWO_SHM))) == 1 and all(m['budget']['recommended_memory_bytes'] >= sum(x['budget']['recommended_shm_size_bytes'] for x in $(mof ID_TWO_SHM)) for m in $(mof ID_TWO_SHM))" \
    "two-shm: both mounts recommend one -m, which holds both mounts' recommended sizes"
# The dashboard's budget line of the container names what the other mount
# holds, so that its figures add up to the headroom it shows.
tui_start 200 50 --all
tui_wait "node view" 30
tui_keys '*' / "${ID[two-shm]}" Enter
tui_wait "container two-shm" 15
tui_wait '^Budget two-shm .* shm [0-9.]+M/64M \+(24|32)(\.[0-9])?M other ' 15
ok "two-shm: the dashboard's budget line names the other mount's shm"
tui_quit

ok "the whole node view took $((SECONDS - T0)) s"
