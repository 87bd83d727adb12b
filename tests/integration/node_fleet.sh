#!/usr/bin/env bash
# The fleet path, for real: `shmwatch --all --prometheus-file` writes into
# node_exporter's textfile directory, Debian's prometheus-node-exporter
# serves it, Debian's prometheus scrapes it with the shipped alert rules
# (config/deploy/prometheus-alerts.yaml), and the /dev/shm alert fires for
# the one container of two whose /dev/shm is over its threshold, naming its
# container, pod and namespace; the other's never fires.
# Everything listens on the loopback of a private network namespace (no port
# of the machine is taken); the rules' `for:` durations are cut to 1 s, the
# evaluation interval is 1 s and the scrape interval 3 s (a scrape may take
# no longer than its interval, and the textfile of a busy node, every
# container's series, takes more than a second on a loaded machine), so
# that it takes seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stack/docker_lib.sh"
docker_need
need prometheus promtool prometheus-node-exporter ip /usr/bin/python3
test_ns 64m -- "$@"
if [ -z "${IN_NET_NS:-}" ]; then
    unshare -n true 2>/dev/null || _lib_missing "a private network namespace (unshare -n)"
    IN_NET_NS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up || fail "cannot bring the loopback up"
IMG=$DOCKER_IMAGE_TORCH
RULES=$SRCDIR/config/deploy/prometheus-alerts.yaml
T0=$SECONDS

promtool check rules "$RULES" >"$SHMTEST_TMP/rules.out" 2>&1 ||
    fail "promtool check rules $RULES: $(cat "$SHMTEST_TMP/rules.out")"
ok "promtool accepts the shipped rules"

docker_start
docker_image_torch
docker_names_visible
on_exit '[ "$rc" -eq 0 ] || docker_dump'

# Two pods' containers (cri-dockerd's labels), 8 MiB of /dev/shm each: one
# 95 % full, one 12 %.
docker_run full-shm --shm-size 8m -m 256m \
    --label io.kubernetes.pod.name=trainer-7 --label io.kubernetes.pod.namespace=ml-team \
    "$IMG" sh -c 'head -c 7969177 /dev/zero >/dev/shm/torch_1_1 && exec sleep 900'
docker_run calm-shm --shm-size 8m -m 256m \
    --label io.kubernetes.pod.name=trainer-8 --label io.kubernetes.pod.namespace=ml-team \
    "$IMG" sh -c 'head -c 1048576 /dev/zero >/dev/shm/torch_1_1 && exec sleep 900'
for c in full-shm calm-shm; do
    wait_for "[ -f /proc/$(docker_pid $c)/root/dev/shm/torch_1_1 ]" 30 || fail "$c did not write its segment"
done
FULL_ID=$(dk inspect -f '{{.Id}}' full-shm)
CALM_ID=$(dk inspect -f '{{.Id}}' calm-shm)
export FULL_ID CALM_ID

# shmwatch as the DaemonSet runs it, into the textfile directory.
# On disk: --all shows every container of the machine, other tests' too,
# and their metrics may be megabytes.
TF=$(mktemp -d /var/tmp/shmwatch-textfile.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $TF"
"$SHMWATCH" --all --prometheus-file "$TF/shmwatch.prom" --interval 1 \
    >"$SHMTEST_TMP/shmwatch.out" 2>&1 &
SW=$!
on_exit "kill -TERM $SW 2>/dev/null; wait $SW 2>/dev/null"
wait_for "grep -q 'container_id=\"$FULL_ID\"' $TF/shmwatch.prom 2>/dev/null" 30 ||
    fail "shmwatch --all never wrote full-shm's series: $(tail -n 3 "$SHMTEST_TMP/shmwatch.out")"
ok "shmwatch --all --prometheus-file writes the textfile"

prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$TF" \
    >"$SHMTEST_TMP/node_exporter.log" 2>&1 &
NE=$!
on_exit "kill -TERM $NE 2>/dev/null; wait $NE 2>/dev/null"

# http URL: the body of a GET on the loopback (python, no curl needed).
http() {
    /usr/bin/python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1" 2>/dev/null
}
wait_for "http http://127.0.0.1:9100/metrics | grep -q '^shmwatch_mount_size_bytes{.*container=\"full-shm\"'" 30 ||
    fail "node_exporter does not serve shmwatch's series: $(tail -n 5 "$SHMTEST_TMP/node_exporter.log")"
http http://127.0.0.1:9100/metrics | grep -q '^node_textfile_scrape_error 0$' ||
    fail "node_exporter could not read the textfile: $(http http://127.0.0.1:9100/metrics | grep -E 'textfile|error' | head -n 5)"
ok "node_exporter serves the textfile, without error"

# prometheus: the shipped rules with their `for:` cut to 1 s.
P=$SHMTEST_TMP/prometheus
mkdir -p "$P"
sed -E 's/^([[:space:]]*for:)[[:space:]].*/\1 1s/' "$RULES" >"$P/rules.yaml"
grep -q 'for: 1s' "$P/rules.yaml" || fail "no for: in the shipped rules to cut"
cat >"$P/prometheus.yml" <<YML
global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
rule_files: ["$P/rules.yaml"]
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["127.0.0.1:9100"]
YML
DATA=$(mktemp -d /var/tmp/shmwatch-prometheus.XXXXXX) || fail "mktemp failed"
on_exit "rm -rf --one-file-system $DATA"
prometheus --config.file="$P/prometheus.yml" --storage.tsdb.path="$DATA" \
    --web.listen-address=127.0.0.1:9090 >"$SHMTEST_TMP/prometheus.log" 2>&1 &
PR=$!
on_exit "kill -TERM $PR 2>/dev/null; wait $PR 2>/dev/null"
wait_for "http http://127.0.0.1:9090/-/ready | grep -q Ready" 60 ||
    fail "prometheus did not start: $(tail -n 5 "$SHMTEST_TMP/prometheus.log")"
ok "prometheus scrapes node_exporter on the loopback"

# alerts: the firing alerts of this test's containers, as
# "alertname container pod namespace | summary" lines.
alerts() {
    http http://127.0.0.1:9090/api/v1/alerts | /usr/bin/python3 -c '
import json, os, sys
mine = {os.environ["FULL_ID"], os.environ["CALM_ID"]}
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if a["state"] == "firing" and l.get("container_id") in mine:
        print(l["alertname"], l.get("container"), l.get("pod"), l.get("namespace"), "|",
              a.get("annotations", {}).get("summary", ""))'
}
wait_for "alerts | grep -q '^ShmAlmostFull full-shm '" 60 ||
    fail "ShmAlmostFull never fired for full-shm: alerts: $(http http://127.0.0.1:9090/api/v1/alerts | head -c 1500); the scrape: $(http http://127.0.0.1:9090/api/v1/targets | grep -o '"lastError":"[^"]*","lastScrape":"[^"]*","lastScrapeDuration":[0-9.e-]*')"
# A few more evaluations (one a second): no alert may fire for calm-shm.
stays_false "alerts | grep -q ' calm-shm '" 3 ||
    fail "an alert fires for calm-shm: $(alerts | grep ' calm-shm ')"
ok "for 3 s (three evaluations) no alert fires for calm-shm"
alerts >"$SHMTEST_TMP/alerts.txt"
assert_eq "$(grep '^ShmAlmostFull ' "$SHMTEST_TMP/alerts.txt" | cut -d'|' -f1)" \
    "ShmAlmostFull full-shm trainer-7 ml-team " "ShmAlmostFull fires for full-shm alone, labelled with its pod and namespace"
grep '^ShmAlmostFull ' "$SHMTEST_TMP/alerts.txt" | cut -d'|' -f2 | grep -qF 'full-shm' ||
    fail "the alert's summary does not name the container: $(cat "$SHMTEST_TMP/alerts.txt")"
ok "its summary names it: $(grep '^ShmAlmostFull ' "$SHMTEST_TMP/alerts.txt" | cut -d'|' -f2)"
ok "the fleet path took $((SECONDS - T0)) s"
