#!/usr/bin/env bash
# config/deploy/docker-compose.yaml, run as it is by Docker Compose v2
# (Debian 13's, tests/stack/compose.sh) on the test's private daemon: its
# shmwatch service (the image of config/deploy/image.sh, `pid: host`,
# `cgroup: host`, privileged, a read-only root) writes metrics that name the
# trainer service's container, its 2 GiB /dev/shm, its torch segment and its
# 8 GiB -m; and the text report its comment shows (`docker compose exec
# shmwatch shmwatch --all --once`) is grouped by that container. The only
# override: the host paths the file names that are the test's own here (the
# textfile directory, the daemon's containers/ directory), no network, and
# where this machine cannot give privileged, the capabilities instead.
# The trainer's image is busybox, tagged as the file's my-training-image,
# whose `python3 train.py` writes one segment and sleeps.
. "$(dirname "$0")/lib.sh"
need_static
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need busybox
test_ns 64m -- "$@"

compose_dir=$(bash "$SRCDIR/tests/stack/compose.sh") || fail "Debian 13's docker-compose could not be fetched"
compose() {
    "$compose_dir/usr/libexec/docker/cli-plugins/docker-compose" -p shmtest \
        -f "$SRCDIR/config/deploy/docker-compose.yaml" -f "$SHMTEST_TMP/override.yaml" "$@"
}
version=$("$SHMWATCH_STATIC" --version | awk '{ print $2; exit }')

# The file's privileged, or where this machine cannot give that, the
# capabilities shmwatch needs (then the one more override).
priv="privileged: true"
if ! docker_privileged_ok; then
    caps="${DOCKER_NODE_CAPS[*]}"
    priv="privileged: false
    cap_add: [${caps// /, }]"
fi

docker_start
DOCKER=$DOCKER_BIN bash "$SRCDIR/config/deploy/image.sh" "$SHMWATCH_STATIC" "shmwatch:$version" >/dev/null ||
    fail "config/deploy/image.sh failed"
box=$SHMTEST_TMP/box
docker_busybox_tree "$box"
printf '#!/bin/sh\nhead -c 3145728 /dev/zero >/dev/shm/torch_1_7 && exec sleep 600\n' >"$box/bin/python3"
chmod +x "$box/bin/python3"
tar -C "$box" -c . | dk import - my-training-image:latest >/dev/null || fail "docker import of busybox failed"
dk image prune -f >/dev/null 2>&1 || true

mkdir -p "$SHMTEST_TMP/textfile"
cat >"$SHMTEST_TMP/override.yaml" <<EOF
services:
  trainer:
    network_mode: none
  shmwatch:
    network_mode: none
    $priv
    volumes:
      - $SHMTEST_TMP/textfile:/textfile
      - $DOCKER_DATA/containers:/var/lib/docker/containers:ro
EOF

# The file as Compose reads it: the keys the node view needs are there.
compose config --format json >"$SHMTEST_TMP/config.json" 2>"$SHMTEST_TMP/compose.err" ||
    fail "docker compose config refused the file: $(cat "$SHMTEST_TMP/compose.err")"
json_check "$SHMTEST_TMP/config.json" \
    "[j['services']['shmwatch'][k] for k in ('pid', 'cgroup', 'read_only', 'image')] == ['host', 'host', True, 'shmwatch:$version']" \
    "Compose v2 reads the shmwatch service with pid: host, cgroup: host, a read-only root, image shmwatch:$version"

# Down before the daemon stops (on_exit runs last in, first out), also
# after a failed or partial up.
compose_down() { compose down -t 1 >/dev/null 2>&1 || true; }
on_exit compose_down
compose up -d >"$SHMTEST_TMP/up.out" 2>&1 || fail "docker compose up failed: $(tail -n 5 "$SHMTEST_TMP/up.out")"
trainer=shmtest-trainer-1
trainer_id=$(dk inspect -f '{{.Id}}' "$trainer") || fail "no container $trainer"
prom=$SHMTEST_TMP/textfile/shmwatch.prom
label="container=\"$trainer\",container_id=\"$trainer_id\""
wait_for "grep -qs '^shmwatch_segments{.*$label.*kind=\"torch\"} 1\$' $prom" 30 || {
    cat "$prom" >&2 2>/dev/null
    compose logs >&2
    fail "the shmwatch service's metrics never counted the trainer's torch segment"
}
grep -q "^shmwatch_mount_size_bytes{.*$label.*} 2147483648\$" "$prom" ||
    fail "the metrics do not give the trainer's 2 GiB /dev/shm (shm_size)"
grep -q "^shmwatch_cgroup_limit_bytes{.*$label.*} 8589934592\$" "$prom" || {
    grep "$trainer" "$prom" | grep -E 'cgroup|budget' >&2
    fail "the metrics do not give the trainer's 8 GiB limit (mem_limit, read through cgroup: host)"
}
ok "the compose file's shmwatch service writes metrics of the trainer by its name: its torch segment, 2 GiB /dev/shm, 8 GiB -m"

compose exec -T shmwatch shmwatch --all --once >"$SHMTEST_TMP/once.txt" 2>"$SHMTEST_TMP/once.err" ||
    fail "docker compose exec shmwatch shmwatch --all --once failed: $(cat "$SHMTEST_TMP/once.err")"
# Its section: "== CONTAINER shmtest-trainer-1 (docker ...)", then its segment.
sed -n "/^== CONTAINER $trainer (docker /,/^== /p" "$SHMTEST_TMP/once.txt" | grep -q "torch_1_7" || {
    cat "$SHMTEST_TMP/once.txt" >&2
    fail "the text report of the file's comment does not show the trainer container and its segment"
}
ok "and its comment's docker compose exec shmwatch shmwatch --all --once has the trainer's section, with its segment"
