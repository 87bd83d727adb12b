#!/usr/bin/env bash
# shmwatch why on recordings this test writes itself, line by line as
# doc/recording.md lays them out: a worker's Bus error on a full 64 MiB
# /dev/shm in a container, its main's exit after it, a killed file_system
# job's leftovers, an OOM kill; then the same recording copied twice into
# one directory, and damaged (a record cut short, a line that is no record,
# a foreign file), hostile names, the filters, the window, and a day of
# snapshots answered within a second of CPU. The recordings of real deaths (record beside real PyTorch) are
# why_torch.sh, why_oom.sh, why_killed.sh and why_docker.sh.
. "$(dirname "$0")/lib.sh"
need /usr/bin/python3
_lib_tmp
W=$SHMTEST_TMP/why
PY=/usr/bin/python3

# mkstore DIR KIND [ARGS]: a recording written by tests/integration's own
# generator (below): KIND is deaths (the scene above, its records ending a
# minute ago) or day (a day of snapshots every 10 s of an 8-worker loader,
# with the scene's deaths at its end).
mkstore() {
    "$PY" - "$@" <<'PY' || fail "the recording could not be written"
import json, os, sys, time

d, kind = sys.argv[1], sys.argv[2]
os.makedirs(d, mode=0o700, exist_ok=True)
MiB = 1 << 20
CTR = "c0ffee" * 10 + "abcd"
now = time.time()

def ts(t):
    s = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    ms = int(round((t - int(t)) * 1000))
    return s + (".%03dZ" % ms if ms else "Z")

def header(t):
    return {"recording": 1, "time": ts(t), "hostname": "node1", "interval_s": 10,
            "watch": "all", "version": "test"}

def snapshot(t, used, segs, procs, groups, app, reason="interval", loader=None, ctr=True):
    cont = [{"id": CTR, "name": "trainer", "runtime": "docker", "pod_uid": None,
             "pod": None, "namespace": None, "hostname": "t", "pid": 7}] if ctr else []
    budget = {"limit_bytes": 512 * MiB, "limit_source": "cgroup", "shm_size_bytes": 64 * MiB,
              "shm_used_bytes": used, "app_bytes": app,
              "headroom_bytes": 512 * MiB - used - app, "shm_effective_bytes": 0,
              "verdict": "ok", "advice": [], "recommended_shm_size_bytes": 96 * MiB,
              "recommended_memory_bytes": 120 * MiB, "loader": loader, "oom_kills_recent": 0}
    return {"schema": 1, "time": ts(t), "reason": reason,
            "mounts": [{"id": "ctr:m1", "path": "/dev/shm", "size_bytes": 64 * MiB,
                        "used_bytes": used, "avail_bytes": 64 * MiB - used,
                        "used_pct": 100.0 * used / (64 * MiB), "pending_bytes": 0,
                        "containers": cont,
                        "cgroup": {"version": 1, "path": "/docker/" + CTR,
                                   "limit_bytes": 512 * MiB},
                        "budget": budget}],
            "segments": segs, "processes": procs, "groups": groups, "cgroup": None,
            "budget": budget, "totals": {}, "warnings": []}

def proc(pid, comm, role, group):
    return {"pid": pid, "ppid": 1, "comm": comm, "role": role, "group": group,
            "container": CTR, "rss_anon_bytes": MiB, "shm_bytes": 0}

def seg(name, creator, state, holders, group, size=12 * MiB):
    return {"mount": "/dev/shm", "mount_id": "ctr:m1", "name": name, "size_bytes": size,
            "alloc_bytes": size, "state": state, "kind": "torch", "creator_pid": creator,
            "creator_alive": None, "holders": [{"pid": h, "fd": 3, "mapped": True} for h in holders],
            "group": group}

def exit_ev(t, pid, comm, role, group, cause, signal=None, code=None):
    return {"event": "exit", "time": ts(t), "pid": pid, "comm": comm, "role": role,
            "group": group, "container": CTR, "container_name": "trainer",
            "exit_code": code, "signal": signal, "core": False, "cause": cause}

loader = {"main_pid": 100, "batch_shm_bytes": 13246464, "workers": 2,
          "batches_in_flight": 5, "prefetch_factor": 2}
job = [proc(100, "python3", "main", 100), proc(101, "pt_data_worker", "worker", 100),
       proc(102, "pt_data_worker", "worker", 100)]
grp = [{"main_pid": 100, "workers": [101, 102], "shm_managers": [], "shm_bytes": 60 * MiB}]
held = [seg("torch_101_%d" % k, 101, "hidden", [100], 100) for k in range(5)]

def deaths(t):
    """The scene's records from time t: about 40 s of them."""
    fs = [proc(200, "python3", "main", 200), proc(201, "python3", "worker", 200),
          proc(202, "torch_shm_manag", "shm_manager", 200)]
    fsg = [{"main_pid": 200, "workers": [201], "shm_managers": [202], "shm_bytes": 8 * MiB}]
    named = [seg("torch_201_%d" % k, 201, "in_use", [200], 200, 4 * MiB) for k in range(2)]
    left = [seg("torch_201_%d" % k, 201, "unheld", [], None, 4 * MiB) for k in range(2)]
    return [
        snapshot(t, 40 * MiB, held[:3], job, grp, 2 * MiB, loader=loader),
        snapshot(t + 10, 64 * MiB - 4096, held, job, grp, 3 * MiB, loader=loader),
        {"event": "fill", "time": ts(t + 10.2), "mount_id": "ctr:m1", "mount": "/dev/shm",
         "container": CTR, "used_bytes": 64 * MiB, "size_bytes": 64 * MiB,
         "used_pct": 100.0, "level": "critical"},
        exit_ev(t + 10.5, 101, "pt_data_worker", "worker", 100, "sigbus", "SIGBUS"),
        snapshot(t + 10.6, 52 * MiB, held[:4], job, grp, 3 * MiB, reason="event",
                 loader=loader),
        exit_ev(t + 10.9, 102, "pt_data_worker", "worker", 100, "exit", code=0),
        exit_ev(t + 11, 100, "python3", "main", 100, "exit", code=1),
        snapshot(t + 20, 8 * MiB, named, fs, fsg, 2 * MiB),
        exit_ev(t + 25, 200, "python3", "main", 200, "signal", "SIGKILL"),
        exit_ev(t + 25.01, 201, "python3", "worker", 200, "signal", "SIGKILL"),
        exit_ev(t + 25.02, 202, "torch_shm_manag", "shm_manager", 200, "signal", "SIGKILL"),
        snapshot(t + 25.1, 8 * MiB, left, [], [], 2 * MiB, reason="event"),
        {"event": "oom_kill", "time": ts(t + 30), "cgroup": "/docker/" + CTR,
         "container": CTR, "container_name": "trainer", "kills": 1, "victim": 300,
         "victim_comm": "writer"},
        exit_ev(t + 30.01, 300, "writer", "holder", None, "oom_kill", "SIGKILL"),
        snapshot(t + 40, 8 * MiB, left, [], [], 2 * MiB),
    ]

def write(name, t0, recs):
    with open(os.path.join(d, name), "w") as f:
        f.write(json.dumps(header(t0)) + "\n")
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")

def fname(t):
    return time.strftime("%Y%m%dT%H%M%SZ.jsonl", time.gmtime(t))

if kind == "deaths":
    t0 = int(now) - 100
    write(fname(t0), t0, deaths(t0 + 10))
elif kind == "samename":
    # Two containers named web (Docker's and podman's), each with a death,
    # and a third container's.
    t0 = int(now) - 100
    def ctr_exit(t, pid, ctr, name):
        return {"event": "exit", "time": ts(t), "pid": pid, "comm": "python3", "role": "holder",
                "group": None, "container": ctr, "container_name": name, "exit_code": None,
                "signal": "SIGKILL", "core": False, "cause": "signal"}
    write(fname(t0), t0, [snapshot(t0 + 10, 0, [], [], [], MiB),
                          ctr_exit(t0 + 11, 400, "4f2a1b2c3d4e" + "0" * 52, "web"),
                          ctr_exit(t0 + 12, 401, "9c3d0e1f2a3b" + "1" * 52, "web"),
                          ctr_exit(t0 + 13, 402, "9c3d0e1f2a3b" + "1" * 52, "web"),
                          ctr_exit(t0 + 14, 403, "77aa88bb99cc" + "2" * 52, "db")])
elif kind == "quiet":
    t0 = int(now) - 100
    write(fname(t0), t0, [snapshot(t0 + 10, 0, [], [], [], MiB),
                          exit_ev(t0 + 11, 100, "python3", "main", 100, "exit", code=0)])
elif kind == "day":
    # A day at 10 s, in files of an hour: the loader's snapshots, then the
    # deaths in the last minute.
    start = int(now) - 86400
    for h in range(24):
        t0 = start + h * 3600
        recs = [snapshot(t, 40 * MiB, held, job, grp, 2 * MiB, loader=loader)
                for t in range(t0, t0 + 3600, 10)]
        if h == 23:
            recs = recs[:354]
            recs += deaths(start + 86400 - 50)
        write(fname(t0), t0, recs)
PY
}

# why DIR ARGS...: shmwatch why into $W.out and $W.err, its status in WHY_RC.
why() {
    local dir=$1
    shift
    WHY_RC=0
    "$SHMWATCH" why --dir "$dir" "$@" >"$W.out" 2>"$W.err" || WHY_RC=$?
}

mkstore "$W/deaths" deaths
why "$W/deaths" --json
assert_eq "$WHY_RC" 4 "why exits 4 when something died ($(head -c 300 "$W.err"))"
[ ! -s "$W.err" ] || fail "why says something on stderr about a whole recording: $(cat "$W.err")"
cp "$W.out" "$W.json"
json_check "$W.json" "[(d['pid'], d['cause']) for d in j['deaths']] == [(101, 'sigbus'), (100, 'exit'), (200, 'signal'), (201, 'signal'), (202, 'signal'), (300, 'oom_kill')]" \
    "every abnormal end, in time order; the clean exit of worker 102 is none" \
    "set(j['deaths'][0]) >= {'pid', 'comm', 'role', 'group', 'container', 'pod', 'time', 'cause', 'signal', 'mount', 'budget_at', 'diagnosis', 'left_behind', 'advice'} and set(j) >= {'deaths', 'window', 'warnings'}" \
    "the fields of the contract" \
    "(lambda d: d['role'] == 'worker' and d['group'] == 100 and d['signal'] == 'SIGBUS' and d['container_name'] == 'trainer' and d['mount']['used_bytes_peak'] == d['mount']['size_bytes'] == 64 << 20 and d['mount']['used_bytes_before'] == (64 << 20) - 4096 and d['mount']['used_bytes_at'] == 52 << 20)(j['deaths'][0])" \
    "the worker's Bus error: its main, its container, the mount full at 100 % (the fill event), before and at" \
    "'the /dev/shm of trainer was full, 64.0 of 64.0 MiB: a worker writing a batch touched a page the tmpfs could not give, which is the Bus error' in j['deaths'][0]['diagnosis']" \
    "the diagnosis in the guide's words" \
    "j['deaths'][0]['budget_at'] == {'limit_bytes': 512 << 20, 'limit_source': 'cgroup', 'app_bytes': 3 << 20, 'shm_used_bytes': (64 << 20) - 4096, 'headroom_bytes': (512 << 20) - (64 << 20) + 4096 - (3 << 20), 'cgroup': '/docker/' + 'c0ffee' * 10 + 'abcd'}" \
    "the budget just before"
# The advice: what plan says for the loader the snapshots show (batches of
# 22 images of 3x224x224 float32 and their labels, 2 workers, prefetch 2).
"$SHMWATCH" plan --batch-size 22 --sample-shape 3x224x224,1:int64 --workers 2 --json >"$W.plan" ||
    fail "plan exited $?"
rec=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["recommended_shm_size_bytes"])' "$W.plan")
json_check "$W.json" "j['deaths'][0]['advice']['recommended_shm_size_bytes'] == $rec == 114 << 20 and j['deaths'][0]['advice']['from'] == 'loader' and j['deaths'][0]['advice']['shm_need_bytes'] == 6 * 13246464" \
    "the advice: one batch x (2 workers x 2 + 2) x 1.5, rounded up, what plan says for that loader" \
    "'followed the end of 101 (SIGBUS)' in j['deaths'][1]['diagnosis'] and 'status 1' in j['deaths'][1]['diagnosis']" \
    "the main's exit is told as following its worker's Bus error" \
    "j['deaths'][2]['left_behind']['segments'] == 2 and j['deaths'][2]['left_behind']['bytes'] == 8 << 20 and j['deaths'][2]['left_behind']['since'] == j['deaths'][2]['time'] and 'orphans since' in j['deaths'][2]['diagnosis']" \
    "the killed file_system job's leftovers, and since when" \
    "'The shm manager died: its job\\'s 8.0 MiB of batches are orphans since' in j['deaths'][4]['diagnosis']" \
    "the shm manager's death in the guide's words" \
    "j['deaths'][5]['diagnosis'].startswith('the OOM killer of cgroup /docker/') and 'with app 2.0 MiB + shm 8.0 MiB of 512 MiB' in j['deaths'][5]['diagnosis'] and len([d for d in j['deaths'] if d['cause'] == 'oom_kill']) == 1" \
    "the OOM kill: app and shm then, one end for the event and its victim's exit"

why "$W/deaths"
assert_eq "$WHY_RC" 4 "the text answer exits 4 too"
grep -q '^6 abnormal ends between' "$W.out" || fail "no count: $(head -n 3 "$W.out")"
grep -q '^worker 101 (pt_data_worker) of DataLoader main 100, container trainer: killed by SIGBUS (Bus error) at ' "$W.out" ||
    fail "the worker's paragraph: $(grep -m1 '^worker' "$W.out")"
grep -q '^  why: the /dev/shm of trainer was full, 64.0 of 64.0 MiB' "$W.out" || fail "no diagnosis: $(cat "$W.out")"
grep -q '^  advice: --shm-size at least 114m and -m at least ' "$W.out" || fail "no advice: $(grep advice "$W.out")"
grep -q '^  left behind: 2 segments, 8.0 MiB, nobody holding them, since ' "$W.out" || fail "no leftovers"
ok "the text answer: who, how, when, why, what was left and the advice"

why "$W/deaths" --pid 100 --json
json_check "$W.out" "[d['pid'] for d in j['deaths']] == [101, 100]" "--pid of a main: its job's ends"
why "$W/deaths" --container trainer --json
json_check "$W.out" "len(j['deaths']) == 6" "--container by name"
why "$W/deaths" --container c0ffeec0ffee --json
json_check "$W.out" "len(j['deaths']) == 6" "--container by a prefix of the id"
why "$W/deaths" --container nobody
assert_eq "$WHY_RC" 0 "no end in another container: exit 0"
# The scene's records say no containerd namespace (as a recorder older than
# that field wrote them): NAMESPACE/NAME finds nothing, and says what does.
why "$W/deaths" --container k8s.io/trainer
assert_eq "$WHY_RC:$(cat "$W.err")" "0:shmwatch why: warning: --container k8s.io/trainer: this recording does not say containers' containerd namespaces; --container trainer or an id finds the ends of trainer" \
    "NAMESPACE/NAME on a recording that says no namespace: nothing, and a warning that says what finds them"
why "$W/deaths" --container k8s.io/nobody
assert_eq "$WHY_RC:$(wc -c <"$W.err")" "0:0" "NAMESPACE/NAME of a name no end has: no warning"
grep -q '^Nothing ended abnormally between' "$W.out" || fail "$(cat "$W.out")"
why "$W/deaths" --since 30s --json
json_check "$W.out" "len(j['deaths']) == 0" "--since: the window leaves the older ends out"

# The recording's file copied beside it under another valid name (as the
# recorder names a second file begun in the same second): every record is
# there twice, and each death is told once, as from the one file.
cp -r "$W/deaths" "$W/copied"
f=$(ls "$W/copied" | head -n 1)
cp "$W/copied/$f" "$W/copied/${f%.jsonl}-1.jsonl"
why "$W/copied" --json
assert_eq "$WHY_RC" 4 "a recording copied twice still answers ($(head -c 300 "$W.err"))"
[ ! -s "$W.err" ] || fail "why says something on stderr about a copied recording: $(cat "$W.err")"
once=$("$PY" -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["deaths"]))' "$W.json")
json_check "$W.out" "len(j['deaths']) == 6 and j['deaths'] == $once" "each death of a file copied under another name told once, as from the one file"

mkstore "$W/quiet" quiet
why "$W/quiet"
assert_eq "$WHY_RC" 0 "a recording where a job ended cleanly: exit 0"

# --container NAME that two containers bear (Docker's web and podman's): a
# warning names both ids, once; an id picks one, and a name one container
# bears says nothing.
mkstore "$W/samename" samename
why "$W/samename" --container web
assert_eq "$WHY_RC" 4 "--container web finds deaths"
assert_eq "$(grep -c '^worker\|^holder' "$W.out")" 3 "--container web: the three deaths of the two containers named web"
assert_eq "$(cat "$W.err")" "shmwatch why: warning: --container web names 2 containers (4f2a1b2c3d4e, 9c3d0e1f2a3b): give an id to choose one" \
    "a warning names both containers' ids"
why "$W/samename" --container web --json
json_check "$W.out" "j['warnings'] == ['--container web names 2 containers (4f2a1b2c3d4e, 9c3d0e1f2a3b): give an id to choose one'] and [d['pid'] for d in j['deaths']] == [400, 401, 402]" \
    "and the JSON's warnings say it"
why "$W/samename" --container 9c3d0e1f2a3b
assert_eq "$(grep -c '^holder' "$W.out"):$(wc -c <"$W.err")" "2:0" "an id picks one container, without a warning"
why "$W/samename" --container db
assert_eq "$(grep -c '^holder' "$W.out"):$(wc -c <"$W.err")" "1:0" "a name one container bears: no warning"

# Damage: a record cut short at the end (the recorder died while writing),
# a line that is no record, an exit event whose JSON breaks off mid-line
# (the index takes it by its start, why cannot read it), a foreign file.
# Each said once, with its directory, file and offset; the rest is used.
cp -r "$W/deaths" "$W/damaged"
f=$(ls "$W/damaged" | head -n 1)
off=$(stat -c %s "$W/damaged/$f")
printf '{"event":"exit","time":"2026-12-' >>"$W/damaged/$f"
"$PY" - "$W/damaged/$f" <<'PY'
import sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
lines.insert(3, b"this is not json")
when = lines[4].split(b'"time":"')[1].split(b'"')[0]
lines.insert(5, b'{"event":"exit","time":"' + when + b'","pid":')
open(p, "wb").write(b"\n".join(lines))
PY
bad_off=$("$PY" -c 'import sys; ls = open(sys.argv[1], "rb").read().split(b"\n"); print(sum(len(l) + 1 for l in ls[:3]))' "$W/damaged/$f")
broken_off=$("$PY" -c 'import sys; ls = open(sys.argv[1], "rb").read().split(b"\n"); print(sum(len(l) + 1 for l in ls[:5]))' "$W/damaged/$f")
off=$((off + 17 + $(sed -n 6p "$W/damaged/$f" | wc -c)))
printf 'hello\n' >"$W/damaged/20000101T000000Z.jsonl"
why "$W/damaged" --json
assert_eq "$WHY_RC" 4 "a damaged recording still answers"
grep -q "$f: offset $off: a record cut short" "$W.err" || fail "the cut record is not named with its offset $off: $(cat "$W.err")"
grep -q "$f: offset $bad_off: not a shmwatch record" "$W.err" || fail "the bad line is not named with its offset $bad_off: $(cat "$W.err")"
grep -qF "$W/damaged/$f: offset $broken_off: not a record" "$W.err" || fail "the broken record is not named with its directory, file and offset $broken_off: $(cat "$W.err")"
grep -q "20000101T000000Z.jsonl: not a recording" "$W.err" || fail "the foreign file is not named: $(cat "$W.err")"
assert_eq "$(wc -l <"$W.err")" 4 "one line per damage"
json_check "$W.out" "len(j['deaths']) == 6 and len(j['warnings']) == 4" "the intact part is used, and --json carries the warnings"

# Hostile names: a comm and a container name with escape sequences.
mkdir -p "$W/hostile" && chmod 700 "$W/hostile"
"$PY" - "$W/hostile" <<'PY'
import json, os, sys, time
t = int(time.time()) - 30
st = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
with open(os.path.join(sys.argv[1], time.strftime("%Y%m%dT%H%M%SZ.jsonl", time.gmtime(t))), "w") as f:
    f.write(json.dumps({"recording": 1, "time": st, "hostname": "h", "interval_s": 2,
                        "watch": "all", "version": "t"}) + "\n")
    f.write(json.dumps({"event": "exit", "time": st, "pid": 9, "comm": "ev\x1b[31mil\n",
                        "role": "worker", "group": 8, "container": "abc",
                        "container_name": "x\x1b]0;pwn\x07\u202e", "exit_code": None,
                        "signal": "SIGSEGV", "core": True, "cause": "signal"}) + "\n")
PY
why "$W/hostile"
assert_eq "$WHY_RC" 4 "a crash with hostile names"
if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$W.out"; then fail "a control byte reaches the terminal: $(od -c "$W.out" | head)"; fi
grep -qF 'ev\e[31mil\n' "$W.out" || fail "the comm is not shown escaped: $(cat "$W.out")"
ok "hostile names are escaped in the text"
why "$W/hostile" --json
json_check "$W.out" "j['deaths'][0]['comm'] == 'ev\x1b[31mil\n' and j['deaths'][0]['container_name'] == 'x\x1b]0;pwn\x07\u202e'" \
    "and given back exactly by the JSON"

# No recording: one line, status 1.
mkdir -p "$W/empty"
why "$W/empty"
assert_eq "$WHY_RC" 1 "an empty directory: status 1"
assert_eq "$(wc -l <"$W.err")" 1 "in one line ($(cat "$W.err"))"
why "$W/none"
assert_eq "$WHY_RC" 1 "no such directory: status 1"

# A --since from before any time a record can have: the window begins at
# year 0, told as a date.
why "$W/deaths" --since 99999999999999999999999s
assert_eq "$WHY_RC" 4 "--since past year 0: the whole recording ($(head -c 300 "$W.err"))"
grep -q "between 0000-01-01 00:00:00 UTC and " "$W.out" || fail "the window's start is no date: $(head -n 1 "$W.out")"
ok "--since past year 0 reads from year 0"

# A day of snapshots every 10 s: the answer within a second of CPU.
mkstore "$W/day" day
du -sh "$W/day" | sed 's/^/  recording: /'
start=$(date +%s%N)
cpu=$( { TIMEFORMAT='%U %S'; time "$SHMWATCH" why --dir "$W/day" --json >"$W.day" 2>"$W.err"; } 2>&1 | tail -n 1) || true
wall=$((($(date +%s%N) - start) / 1000000))
json_check "$W.day" "len(j['deaths']) == 6" "the day's deaths are found"
awk -v c="$cpu" 'BEGIN { split(c, a, " "); exit !(a[1] + a[2] < 1.0) }' ||
    fail "why over a day's recording took $cpu s of CPU (user sys), more than 1 s"
ok "why over a day's recording: $cpu s of CPU (user sys), $wall ms wall"
