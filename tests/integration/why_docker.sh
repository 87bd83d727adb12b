#!/usr/bin/env bash
# A Bus error in a real Docker container (Debian's docker.io, a private
# daemon, the image imported from the PyTorch 2.6 root), recorded from the
# host with `shmwatch record --all`: a process of the container "trainer"
# (--shm-size 64m) maps a 128 MiB file on its /dev/shm, writes 32 MiB,
# waits until the recorder has seen it, then writes on and gets SIGBUS when
# the tmpfs runs out of pages. `shmwatch why` on the host must name the
# container, and `why --container trainer` find the end by its name. The
# recording is the node's: the ends of other tests' processes running beside
# this one are in it too, and only this test's are looked at.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch_lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
. "$(dirname "$0")/why_lib.sh"
TORCH_STACK=2.x
torch_need
docker_need
record_need
test_ns 64m -- "$@"

docker_start
docker_names_visible
docker_image_torch
on_exit '[ "$rc" -eq 0 ] || docker_dump'
docker_run trainer --shm-size 64m -m 1g "$DOCKER_IMAGE_TORCH" bash -c '
python3 -c "
import mmap, os, time
fd = os.open(\"/dev/shm/batch\", os.O_RDWR | os.O_CREAT, 0o600)
n = 128 << 20
os.ftruncate(fd, n)
m = mmap.mmap(fd, n)
for off in range(0, 32 << 20, 4096):
    m[off] = 1
deadline = time.monotonic() + 120
while not os.path.exists(\"/tmp/go\") and time.monotonic() < deadline:
    time.sleep(0.02)
for off in range(0, n, 4096):
    m[off] = 1
"
echo "writer status $?" >/tmp/status
sleep 300'
CPID=$(docker_pid trainer)
ID=$(dk inspect -f '{{.Id}}' trainer)
ok "container trainer ($ID) runs, its init is host pid $CPID"

record_start --all --interval 0.5
record_wait "r.get('schema') == 1 and any(c['name'] == 'trainer' for m in r['mounts'] for c in m['containers']) and any(s['name'] == 'batch' and s['alloc_bytes'] >= 32 << 20 for s in r['segments'])" 60 ||
    fail "the recording never showed trainer's /dev/shm with the 32 MiB written: $(tail -n 3 "$RECORD_ERR"); $(record_last); in the container: $(dk exec trainer sh -c 'ls -l /dev/shm; cat /tmp/status' 2>&1 | tr '\n' ' ')"
WRITER=$(/usr/bin/python3 - "$RECORD_DIR" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        for s in r.get("segments", []):
            if s["name"] == "batch" and s["holders"]:
                pid = s["holders"][0]["pid"]
print(pid)
PY
)
ok "the recording shows trainer's writer, host pid $WRITER"

dk exec trainer touch /tmp/go || fail "docker exec failed"
wait_for "dk exec trainer cat /tmp/status 2>/dev/null | grep -q 'writer status'" 60 || fail "the writer never ended"
assert_eq "$(dk exec trainer cat /tmp/status)" "writer status 135" "the writer died of SIGBUS (128 + 7)"
record_wait "r.get('event') == 'exit' and r['pid'] == $WRITER" 20 || fail "no exit of the writer in the recording"
record_wait "r.get('schema') == 1 and not any(h['pid'] == $WRITER for s in r['segments'] for h in s['holders'])" 20 ||
    fail "no snapshot after the death: $(record_last)"
record_stop

why_run --json
assert_eq "$WHY_RC" 4 "why exits 4 ($(head -c 300 "$WHY_ERR"))"
j=$SHMTEST_TMP/why.json
cp "$WHY_OUT" "$j"
json_check "$j" "[(d['cause'], d['container'], d['container_name']) for d in j['deaths'] if d['pid'] == $WRITER] == [('sigbus', '$ID', 'trainer')]" \
    "why names the container of the writer that got SIGBUS" \
    "[d['pid'] for d in j['deaths'] if d['container'] == '$ID'] == [$WRITER]" \
    "it is the only end in trainer" \
    "[(d['mount']['size_bytes'], d['diagnosis'].startswith('the /dev/shm of trainer ')) for d in j['deaths'] if d['pid'] == $WRITER] == [(64 << 20, True)]" \
    "its /dev/shm is trainer's 64 MiB one, and the diagnosis says so"
why_run --container trainer
assert_eq "$WHY_RC" 4 "why --container trainer finds it"
grep -q "^holder $WRITER (python3), container trainer: killed by SIGBUS (Bus error) at " "$WHY_OUT" ||
    fail "the text: $(head -n 3 "$WHY_OUT")"
why_run --container "${ID:0:12}" --json
json_check "$WHY_OUT" "len(j['deaths']) == 1" "and by the id's first 12 digits"
why_run --container other
assert_eq "$WHY_RC" 0 "another container's name finds nothing: exit 0"
