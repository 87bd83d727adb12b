#!/usr/bin/env bash
# Every kind of /dev/shm user, from real processes: a killed job's leftovers of
# each kind (tests/kinds/jobs.py), a live NCCL-style file held open, a Ray
# plasma-style file held only by a mapping after its unlink, and joblib folders.
# JSON, text and Prometheus name each kind; a joblib folder is one segment (its
# size the sum of its files); only torch, omp and joblib leftovers of a dead
# creator are orphans. `clean` removes exactly those, the folder's files included,
# and refuses a folder with a held file, a symlink inside or a mount inside.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
_lib_tmp
JOBS=$SRCDIR/tests/kinds/jobs.py
[ -x /usr/bin/python3 ] || _lib_missing /usr/bin/python3

start_job() { # READYFILE ARGS...: starts jobs.py ARGS in the background, sets JOB
    local ready=$1
    shift
    /usr/bin/python3 "$JOBS" "$@" </dev/null >/dev/null 2>&1 &
    JOB=$!
    on_exit "kill -KILL $JOB 2>/dev/null; wait $JOB 2>/dev/null"
    wait_for "[ -e $ready ]" 20 || fail "jobs.py $1 did not start"
}

start_job "$SHMTEST_TMP/killed.ready" killed "$SHMTEST_TMP/killed.ready"
dead=$JOB
kill -KILL "$dead"
wait "$dead" 2>/dev/null
start_job "$SHMTEST_TMP/live.ready" live "$SHMTEST_TMP/live.ready"
live=$JOB
folder=/dev/shm/joblib_memmapping_folder_${dead}_$(printf 'a%.0s' {1..32})_$(printf 'b%.0s' {1..32})
[ -d "$folder" ] || fail "the killed job left no joblib folder"

# Folders of another dead creator that clean must refuse: a file in one held
# (mapped) by a live process, a symlink inside, a tmpfs mounted inside.
gone=$(dead_pid)
held=/dev/shm/joblib_memmapping_folder_${gone}_11
linked=/dev/shm/joblib_memmapping_folder_${gone}_22
mounted=/dev/shm/joblib_memmapping_folder_${gone}_33
mkdir "$held" "$linked" "$mounted" "$mounted/sub"
head -c 16384 /dev/zero >"$held/data.pkl"
head -c 4096 /dev/zero >"$linked/data.pkl"
ln -s /etc/passwd "$linked/passwd"
mount -t tmpfs -o size=1m tmpfs "$mounted/sub"
on_exit "umount $mounted/sub 2>/dev/null"
head -c 4096 /dev/zero >"$mounted/sub/data.pkl"
start_job "$SHMTEST_TMP/hold.ready" hold "$held/data.pkl" "$SHMTEST_TMP/hold.ready"
touch -d '-1 hour' "$held/data.pkl" "$linked/data.pkl" "$mounted/sub/data.pkl"

snap=$SHMTEST_TMP/snap.json
"$SHMWATCH" --json >"$snap" || fail "shmwatch --json failed"
kinds_of() { # prints "name kind state" per segment
    /usr/bin/python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["segments"]:
    print(s["name"], s["kind"], s["state"], s["size_bytes"])' "$1"
}
table=$(kinds_of "$snap")
echo "$table"
expect() { # NAME KIND STATE [SIZE]
    local line
    line=$(awk -v n="$1" '$1 == n' <<<"$table")
    [ -n "$line" ] || fail "$1: not listed"
    set -- $1 "$2" "$3" "${4:-}"
    read -r _ k s z <<<"$line"
    [ "$k" = "$2" ] && [ "$s" = "$3" ] || fail "$1: kind $k state $s, expected $2 $3"
    [ -z "$4" ] || [ "$z" = "$4" ] || fail "$1: size $z, expected $4"
}
b=${folder#/dev/shm/}
expect "torch_${dead}_1_0" torch orphan 262144
expect "__KMP_REGISTERED_LIB_${dead}_0" omp orphan
expect "$b" joblib orphan $((24 * 4096))
expect nccl-Xy12Zq nccl unheld
expect psm_0a1b2c3d python unheld
expect sem.mp-k1l2m3 sem unheld
expect vader_segment.node.3e8.1.0 mpi unheld
expect ucx_shm_posix_1f2e3d ucx unheld
expect plasmaQ1w2E3 ray unheld
expect nvidia_dali_77 dali unheld
expect deepspeed_allreduce_buffer_0 deepspeed unheld
expect pulse-shm-123456 pulse unheld
expect .org.chromium.Chromium.a1B2c3 chromium unheld
expect some-other-data other unheld
expect nccl-Ab12Cd nccl in_use
expect plasmaZz9Yy8 ray hidden
expect "${held#/dev/shm/}" joblib in_use 16384
expect "${linked#/dev/shm/}" joblib orphan
expect "${mounted#/dev/shm/}" joblib orphan
ok "each kind is named in JSON with its state; only torch, omp and joblib are orphans"
B=$b json_check "$snap" 'not any(s["name"].startswith(env["B"] + "/") for s in j["segments"])' \
    "the folder's files are not segments of their own"
LIVE=$live json_check "$snap" '[(h["pid"], h["fd"] is None, h["mapped"]) for s in j["segments"] if s["name"] == "plasmaZz9Yy8" for h in s["holders"]] == [(int(env["LIVE"]), True, True)]' \
    "the plasma-style file is held only by the live job's mapping"

text=$("$SHMWATCH" --once) || fail "shmwatch --once failed"
grep -q "nccl-Ab12Cd  in_use nccl" <<<"$text" || fail "text: no nccl kind"
grep -q "plasmaZz9Yy8  hidden ray" <<<"$text" || fail "text: no ray kind"
grep -q "$b  orphan joblib" <<<"$text" || fail "text: no joblib folder"
ok "text names the kinds"
prom=$("$SHMWATCH" --prometheus) || fail "shmwatch --prometheus failed"
grep -q '^shmwatch_segments{mount="/dev/shm",state="unheld",kind="deepspeed"} 1$' <<<"$prom" ||
    fail "prometheus: no deepspeed label"
grep -q '^shmwatch_segments{mount="/dev/shm",state="orphan",kind="joblib"} 3$' <<<"$prom" ||
    fail "prometheus: joblib orphans"
grep -q '^shmwatch_segments{mount="/dev/shm",state="hidden",kind="ray"} 1$' <<<"$prom" ||
    fail "prometheus: hidden ray"
ok "Prometheus labels every kind"

# The dashboard: the folder is one row of kind joblib, kind:NAME filters, and the
# header keeps quiet (the verdict is ok: the recommendation waits on the page).
. "$(dirname "$0")/tui_lib.sh"
json_check "$snap" "j['budget']['verdict'] == 'ok' and len(j['budget']['advice']) > 0" \
    "the budget's verdict is ok, with advice for the page"
tui_start 200 50
tui_keys t
tui_wait "^$b +orphan +joblib " 10
tui_wait "No advice: the budget fits" 5
tui_keys / k i n d : r a y Enter
tui_wait "^plasmaZz9Yy8 +hidden +ray " 5
tui_gone "^$b " 5
ok "dashboard: the joblib folder is one row, kind:ray shows the hidden plasma file, no advice in the header"
tui_keys Escape
tui_quit
tui kill-server

before=$(find /dev/shm -xdev | sort)
rc=0
out=$("$SHMWATCH" clean --yes 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 3 "clean exits 3: two folders refused"
grep -q "^removed .*torch_${dead}_1_0  " <<<"$out" || fail "torch orphan not removed"
grep -q "^removed .*__KMP_REGISTERED_LIB_${dead}_0  " <<<"$out" || fail "omp orphan not removed"
grep -q "^removed .*$b  " <<<"$out" || fail "joblib folder not removed"
grep -q "^refused .*${linked#/dev/shm/}  a symbolic link inside it (never followed)$" <<<"$out" ||
    fail "the folder with a symlink was not refused as such"
grep -q "^refused .*${mounted#/dev/shm/}  another file system is mounted inside it (never crossed)$" \
    <<<"$out" || fail "the folder with a mount inside was not refused as such"
grep -q "${held#/dev/shm/}" <<<"$out" && fail "the held folder was planned"
[ ! -e "$folder" ] || fail "the joblib folder is still there"
after=$(find /dev/shm -xdev | sort)
removed=$(comm -23 <(echo "$before") <(echo "$after"))
expected=$(printf '%s\n' "/dev/shm/torch_${dead}_1_0" "/dev/shm/__KMP_REGISTERED_LIB_${dead}_0" \
    "$folder" "$folder/${dead}-1-x.pkl" "$folder/${dead}-1-y.pkl" | sort)
assert_eq "$removed" "$expected" "clean removed exactly the provable orphans and the folder's files"
[ -z "$(comm -13 <(echo "$before") <(echo "$after"))" ] || fail "something appeared"
[ -f "$held/data.pkl" ] && [ -L "$linked/passwd" ] && [ -f "$mounted/sub/data.pkl" ] ||
    fail "a refused folder lost a file"
ok "held, linked and mounted-over folders are kept whole"

# --all-unheld at age 0 takes the other kinds' leftovers: never as orphans.
rc=0
out=$("$SHMWATCH" clean --yes --all-unheld --min-age 0 2>&1) || rc=$?
grep -q "^removed .*nccl-Xy12Zq  " <<<"$out" || fail "nccl leftover not removed as unheld"
grep -q "^removed .*nccl-Ab12Cd" <<<"$out" && fail "the held nccl file was removed"
[ -e /dev/shm/nccl-Ab12Cd ] || fail "the held nccl file is gone"
ok "other kinds go only as unheld, on request; a held one stays"
grep -q "^removed .*plasmaQ1w2E3  " <<<"$out" || fail "ray leftover not removed as unheld"
