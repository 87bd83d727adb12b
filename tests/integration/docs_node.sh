#!/usr/bin/env bash
# The node view's example outputs in doc/guide.md ("A GPU node: every
# container at once") and doc/shmwatch.1 (the action lines of "In
# containers") are the shapes shmwatch prints. The guide's three containers
# are emulated (tests/integration/ctr_lib.sh): resnet (-m 4g, a 1 GiB
# /dev/shm, four workers), bert (-m 2g, Docker's 64 MiB, 56 MiB of batches
# held) and crashed (-m 1g, a killed job's orphans, older than
# orphan_min_age), named as Docker names them (config.v2.json below the data
# root that /etc/docker/daemon.json gives, in this test's mount namespace
# only). Each example line of the doc is compared with the real output after
# both are reduced to their shape (numbers, sizes, ids, a cgroup's path, a
# command line and a process's comm and role stand for any value); each must
# be a line shmwatch prints. The guide's jq command is run as shown. Last, the
# action lines of a reap and of a clean --all that meets a container that has
# exited (made as tests/integration/act_all.sh makes them) are compared with
# shmwatch(1)'s "killed" line and the guide's "Cleaning up" container block.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need_hooked
need jq perl od setsid nsenter /usr/bin/python3
# A private pid namespace: its pid 1 (this script) is the node view's host,
# and --all sees only this test's containers.
test_ns 64m --pid -- "$@"
_lib_tmp
GUIDE=$SRCDIR/doc/guide.md
MANPAGE=$SRCDIR/doc/shmwatch.1

# Docker's names, where shmwatch looks for them on a host whose daemon keeps
# its data outside /var/lib/docker; the real /etc/docker is not touched.
mkdir -p "$SHMTEST_TMP/etc-docker" "$SHMTEST_TMP/docker/containers" /etc/docker ||
    fail "cannot make the data root"
printf '{ "data-root": "%s" }\n' "$SHMTEST_TMP/docker" >"$SHMTEST_TMP/etc-docker/daemon.json"
mount --bind "$SHMTEST_TMP/etc-docker" /etc/docker || fail "cannot bind a daemon.json on /etc/docker"
on_exit 'umount -l /etc/docker 2>/dev/null || true'
name_ctr() { # TAG: config.v2.json for the container ID_TAG, named TAG
    local v=ID_$1
    mkdir -p "$SHMTEST_TMP/docker/containers/${!v}" &&
        printf '{"Name":"/%s","Config":{"Hostname":"%s"}}\n' "$1" "${!v:0:12}" \
            >"$SHMTEST_TMP/docker/containers/${!v}/config.v2.json" || fail "cannot name $1"
}

scene_ctr resnet $((4 << 30)) 1g --workers 4 --per-worker 10 --size 400K --modes named,fd,map --worker-comm pt_data_worker
scene_ctr bert $((2 << 30)) 64m --workers 2 --per-worker 14 --size 2M --worker-comm pt_data_worker
scene_ctr crashed $((1 << 30)) 64m --workers 0 --orphans 12 --orphan-size 100K
for t in resnet bert crashed; do name_ctr "$t"; done
crashed=$(ctr_host_pid "$MAN_crashed" "$(MANIFEST=$MAN_crashed manifest_pids main)")
[ -n "$crashed" ] || fail "cannot find crashed's main on the host"
# The killed job's files were written minutes ago, as when someone looks.
n=0
for f in "/proc/$crashed/root/dev/shm"/torch_*; do
    touch -d '-2 min' "$f" && n=$((n + 1))
done
[ "$n" -eq 12 ] || fail "crashed has $n leftovers, not 12"
ok "three containers: resnet, bert, crashed (pid $crashed on the host, 12 leftovers)"

# shape: the lines on stdin reduced to their shape.
shape() {
    perl -pe '
        s/ +$//; s/(\S) {2,}/$1 /g;
        s/\b[0-9a-f]{64}\b/<ID>/g;
        s/\b(docker|host) [0-9a-f]{12}\b/$1 <id>/g;
        s/\b(?=[0-9a-f]*[a-f])[0-9a-f]{12}\b/<id>/g;
        s/\bcgroup \/\S+/cgroup <path>/g;
        s/\[[#.]+\]/[<bar>]/g;
        s/\btorch_[0-9_]+/torch_<n>/g;
        s/\b[0-9]+(\.[0-9]+)? (B|KiB|MiB|GiB|TiB)\b/<size>/g;
        s/[0-9]+(\.[0-9]+)?/<n>/g;
        s/^(  main <n>) .*/$1 <cmd>/;
        s/^( {4})(main|worker|shm_manager|orphan_worker|holder|zombie) <n> \S+ state/$1<role> <n> <comm> state/;
    '
}
# A container's id is hex, and one in a few hundred has no letter in it.
[ "$(echo '(docker 123456789012, host 4897097d3e5e)' | shape)" = '(docker <id>, host <id>)' ] ||
    fail "shape does not take an id of digits alone for an id"
# section TITLE: the lines of the guide's "## TITLE" section.
section() {
    awk -v t="## $1" '$0 == t { s = 1; next } s && /^## / { exit } s' "$GUIDE"
}
# blocks N: the lines of the section's Nth fenced block, neither the
# commands ($ ...) nor the elisions (...).
blocks() {
    section 'A GPU node: every container at once' |
        awk -v n="$1" '/^```/ { if (o) { o = 0 } else { o = 1; b++ }; next } o && b == n' |
        grep -v -e '^\$ ' -e '^\.\.\.$'
}
# check WHAT DOC REAL: every line of the file DOC has the shape of a line of
# the file REAL.
check() {
    local missing
    shape <"$2" | sort -u >"$2.shape"
    shape <"$3" | sort -u >"$3.shape"
    [ -s "$2.shape" ] || fail "no example line found for $1"
    missing=$(comm -23 "$2.shape" "$3.shape")
    [ -z "$missing" ] ||
        fail "$1: the documented lines below are not what shmwatch prints (shapes; numbers are <n>):
$missing
--- printed:
$(cat "$3.shape")"
    ok "$1: all $(wc -l <"$2.shape") documented lines are printed"
}

D=$SHMTEST_TMP
export D
blocks 1 >"$D/doc-once"
blocks 2 >"$D/doc-clean"
grep -q '^\$ shmwatch --all --once$' <(section 'A GPU node: every container at once') ||
    fail "the guide's first example is no longer shmwatch --all --once"
"$SHMWATCH" --all --once >"$D/once" 2>&1 || fail "--all --once exited $?: $(tail -n 3 "$D/once")"
check "the guide's shmwatch --all --once" "$D/doc-once" "$D/once"

# --mount PATH watches PATH instead of the default mounts (shmwatch(1),
# OPTIONS), in the node view too; so clean --mount acts on that mount only
# (clean --help: "only this mount"), never on every container's /dev/shm.
mkdir -p "$D/xshm" && mount -t tmpfs -o size=4m tmpfs "$D/xshm" || fail "cannot mount $D/xshm"
"$SHMWATCH" --all --mount "$D/xshm" --json >"$D/xshm.json" || fail "--all --mount --json exited $?"
json_check "$D/xshm.json" "[m['path'] for m in j['mounts']] == [env['D'] + '/xshm']" \
    "--all --mount PATH: only the mount at PATH, not every container's /dev/shm"
"$SHMWATCH" clean --all --dry-run --mount "$D/xshm" >"$D/clean-x" 2>&1 ||
    fail "clean --all --mount exited $?: $(tail -n 3 "$D/clean-x")"
grep -q 'crashed' "$D/clean-x" && fail "clean --all --mount $D/xshm plans crashed's /dev/shm: $(head -n 3 "$D/clean-x")"
ok "clean --all --mount PATH acts on that mount only: $(tail -n 1 "$D/clean-x")"
umount "$D/xshm"

"$SHMWATCH" clean --all --dry-run >"$D/clean" 2>&1 || fail "clean --all --dry-run exited $?"
"$SHMWATCH" clean --pid "$crashed" --yes --log "$D/actions.log" >>"$D/clean" 2>&1 ||
    fail "clean --pid exited $?: $(tail -n 3 "$D/clean")"
check "the guide's clean --all --dry-run and clean --pid" "$D/doc-clean" "$D/clean"
# (shmwatch(1)'s action lines in containers are checked at the end, with a reap.)

# The metrics: the guide's sample lines.
section 'A GPU node: every container at once' | sed -n 's/^    \(shmwatch_[a-z_]*{.*\)$/\1/p' >"$D/doc-prom"
"$SHMWATCH" --all --prometheus >"$D/prom" || fail "--all --prometheus exited $?"
check "the guide's labelled series" "$D/doc-prom" "$D/prom"

# The guide's jq command, run as shown, prints rows of the shape shown.
cmd=$(section 'A GPU node: every container at once' | sed -n 's/^    \$ \(shmwatch --all --json | jq .*\)$/\1/p')
[ -n "$cmd" ] || fail "the guide's jq example is gone"
section 'A GPU node: every container at once' |
    awk -v c="    \$ $cmd" '$0 == c { s = 1; next } s && !/^    / { exit } s { sub(/^    /, ""); print }' >"$D/doc-jq"
shmwatch() { "$SHMWATCH" "$@"; }
eval "$cmd" >"$D/jq" || fail "the guide's jq command failed: $cmd"
unset -f shmwatch
shape <"$D/doc-jq" | sort >"$D/doc-jq.shape"
shape <"$D/jq" | sort >"$D/jq.shape"
[ -s "$D/doc-jq.shape" ] && diff "$D/doc-jq.shape" "$D/jq.shape" >/dev/null ||
    fail "the guide's jq output is not what the command prints (shapes):
$(diff "$D/doc-jq.shape" "$D/jq.shape")"
ok "the guide's jq command prints its rows: $(tr '\n\t' '; ' <"$D/jq")"

# Every metric and label that config/deploy's alert rules and the guide's
# node view section name is one that --all --prometheus writes (instance is
# Prometheus's own).
sed -n 's/^\(shmwatch_[a-z_]*\){\(.*\)} .*/\1 \2/p' "$D/prom" >"$D/series"
for f in $( (cat "$SRCDIR"/config/deploy/*.yaml; section 'A GPU node: every container at once') |
    grep -o 'shmwatch_[a-z_]*' | sort -u); do
    grep -q "^$f " "$D/series" || grep -q "^$f [0-9]" "$D/prom" ||
        fail "config/deploy or the guide name $f, which --all --prometheus does not write"
done
for l in $(grep -o '\$labels\.[a-z_]*' "$SRCDIR/config/deploy/prometheus-alerts.yaml" | sort -u |
    sed 's/^\$labels\.//' | grep -vx instance); do
    grep -q "^shmwatch_mount_used_bytes .*\b$l=\"" "$D/series" ||
        fail "the alert rules use the label $l, which the node view's series do not carry"
done
ok "every metric and label config/deploy and the guide name is written by --all --prometheus"

# --- Action lines: a reap, and a container that exits -------------------------
# (Last: the stuck worker and its scene live in crashed, and bert is ended.)

# A DataLoader worker stuck after its main died, in crashed's mount
# namespace, named as the man page's example (python3).
SCENE_PREFIX="setsid nsenter -t $crashed -m --" scene_start --workers 1 --per-worker 1 \
    --modes fd --stuck-orphan --worker-comm python3
stuck=$(manifest_pids stuck) sm=$SCENE_PID
kill -KILL "$sm"
wait_reparented "$stuck" "$sm" || fail "the stuck worker $stuck was not re-parented"
"$SHMWATCH" reap --pid "$crashed" --yes --timeout 1 >"$D/reap" 2>&1 ||
    fail "reap --pid exited $?: $(tail -n 3 "$D/reap")"
grep -q "^killed  *pid $stuck (python3) (in crashed)  " "$D/reap" ||
    fail "reap --pid did not kill the stuck worker $stuck in crashed: $(cat "$D/reap")"
# The man page's action lines, its container web being crashed here.
awk '/^\.SS In containers/ { s = 1 } s && /^\.nf/ { e = 1; next } e && /^\.fi/ { exit } e && !/^\./' "$MANPAGE" |
    sed -e 's/\\-/-/g' -e 's/(in web)/(in crashed)/' >"$D/doc-man"
grep -q '^killed ' "$D/doc-man" || fail "shmwatch(1)'s killed line in containers is gone"
cat "$D/clean" "$D/reap" >"$D/clean-reap"
check "shmwatch(1)'s action lines in containers" "$D/doc-man" "$D/clean-reap"

# The guide's "Cleaning up" container block: its trainer is crashed, its
# loader bert. clean --pid of one orphan; then clean --all --yes with an
# orphan in the host's /dev/shm, crashed's and bert's, bert ending (its pid
# 1 killed) while the program pauses between the plan and the unlinks.
orphan() { # ROOT_DIR: a 64 KiB orphan (a torch name of a dead creator) in ROOT_DIR/dev/shm
    head -c 65536 /dev/zero >"$1/dev/shm/torch_$(dead_pid)_0" || fail "cannot make an orphan in $1"
}
head -c 262144 /dev/zero >"/proc/$crashed/root/dev/shm/torch_$(dead_pid)_0" ||
    fail "cannot make crashed's orphan"
"$SHMWATCH" clean --pid "$crashed" --yes >"$D/cleanup" 2>&1 ||
    fail "clean --pid of one orphan exited $?: $(tail -n 3 "$D/cleanup")"
bert=$(ctr_host_pid "$MAN_bert" "$(MANIFEST=$MAN_bert manifest_pids main)")
[ -n "$bert" ] || fail "cannot find bert's main on the host"
orphan ""
orphan "/proc/$crashed/root"
orphan "/proc/$bert/root"
pause_gate
SHMWATCH_TEST_PAUSE_UNTIL=$GATE SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=3 "$SHMWATCH_HOOKED" clean --all \
    --yes >"$D/cleanup-all" 2>&1 &
cl=$!
wait_for "grep -q 'to remove' $D/cleanup-all" 10 || fail "clean --all planned nothing: $(cat "$D/cleanup-all")"
kill -KILL "$bert"
# Its pid 1 gone, the kernel ends the rest of its pid namespace: all gone.
wait_for "[ ! -e /proc/$bert ] && [ -z \"\$(pgrep -f -- '--manifest $MAN_bert')\" ]" 10 ||
    fail "bert ($bert and its workers) did not end"
: >"$GATE"
rc=0
wait "$cl" || rc=$?
assert_eq "$rc" 3 "clean --all exits 3 when a container exited before its unlink"
cat "$D/cleanup" "$D/cleanup-all" >"$D/cleanup-real"
section 'Cleaning up' |
    awk '/^```/ { if (o) { o = 0; if (w) exit } else { o = 1; w = 0; n = 0 }; next }
         o { l[++n] = $0; if ($0 ~ /^\$ shmwatch clean --pid /) w = 1 }
         o && w && n > 0 { for (i = 1; i <= n; i++) print l[i]; n = 0 }' |
    grep -v -e '^\$ ' -e '^\.\.\.$' -e '^$' |
    sed -e 's/(in trainer)/(in crashed)/' -e 's/(in loader)/(in bert)/' >"$D/doc-cleanup"
grep -q '^refused .*(in bert)  its container exited' "$D/doc-cleanup" ||
    fail "the guide's Cleaning up no longer shows a container that exited"
check "the guide's Cleaning up in containers (clean --pid, clean --all)" "$D/doc-cleanup" "$D/cleanup-real"
