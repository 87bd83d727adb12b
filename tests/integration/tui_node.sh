#!/usr/bin/env bash
# The dashboard's node view (shmwatch --all) in tmux: two emulated containers,
# each a pid and a mount namespace of its own with its own tmpfs at /dev/shm
# and a memory cgroup named as Docker's systemd driver names a container's
# (docker-<id>.scope), each holding DataLoader-like segments. B's /dev/shm is
# nearly full. The node view must show one gauge per mount labelled with its
# container, B's (the critical one) first; the tree container -> group ->
# worker -> segments; n switches to the own view (the host's alone) and back;
# the budget page and the details page are the selected container's; a plain
# mount namespace's details say it has no runtime, and the budget line cuts
# its long label with an ellipsis; the selection and the details stay with
# their container when one before it ends; tiny terminals neither crash nor
# draw past the edge. Without --all, n says why
# there is no node view.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.sh"
. "$(dirname "$0")/ctr_lib.sh"
need_root
need_unshare
need od pgrep
# A private pid namespace: pid 1, the host of the node view, is this test, so
# that the own view and its actions (D, K) are this test's alone.
test_ns 16m --pid -- "$@"
. "$(dirname "$0")/tui_lib.sh"

# row_in SCREEN ERE: the first row (0-based) of SCREEN (a capture) matching, or
# -1. Rows are compared within one capture: the list moves when the gauges of
# other namespaces of the machine come and go.
row_in() {
    awk -v re="$2" '$0 ~ re { print NR - 1; found = 1; exit } END { if (!found) print -1 }' <<<"$1"
}

scene_ctr A 536870912 64m --workers 2 --per-worker 3 --size 256K --orphans 1 --zombies 1
scene_ctr B 268435456 32m --workers 2 --per-worker 2 --size 64K --unheld 1 --unheld-size 31M
MANIFEST=$MAN_A
MAIN_A=$(ctr_host_pid "$MAN_A" "$(manifest_pids main)")
WORKER_A=$(ctr_host_pid "$MAN_A" "$(manifest_pids worker | head -n 1)")
# A's zombie: its child that has exited (it may still be exiting at "ready").
zombie_of() { for p in $(pgrep -P "$1"); do [ "$(awk '{ print $3 }' "/proc/$p/stat")" = Z ] && echo "$p"; done; }
wait_for '[ -n "$(zombie_of "$MAIN_A")" ]' 10 || true
ZOMBIE_A=$(zombie_of "$MAIN_A")
MANIFEST=$MAN_B
MAIN_B=$(ctr_host_pid "$MAN_B" "$(manifest_pids main)")
[ -n "$MAIN_A" ] && [ -n "$MAIN_B" ] && [ -n "$WORKER_A" ] && [ -n "$ZOMBIE_A" ] || fail "cannot find the mains on the host"
# A container's label: no runtime state here, so its runtime and short id.
LA="docker ${ID_A:0:12}"
LB="docker ${ID_B:0:12}"
ok "two containers ($LA, main $MAIN_A; $LB, main $MAIN_B)"

# --- The node view at 160x60 ---------------------------------------------------
# --all shows every mount namespace of the machine (other tests' too): only
# ours are looked at, and the tree is narrowed with the filter where needed.
tui_start 160 60 --all
tui_wait "node view" 10
tui_wait "^$LA /dev/shm" 15
tui_keys '*' # every branch collapsed: one row per container
tui_wait "container $LA" 15
tui_wait "container $LB" 15
ok "the title says node view; the tree has a row per container"

# One gauge per mount, labelled, the critical one (B, nearly full) before A's.
# (--all also shows every other mount namespace of the machine: only the
# order of ours is asserted.)
screen=$(tui_cap)
g_b=$(row_in "$screen" "^$LB /dev/shm .*[0-9]\.[0-9]%")
g_a=$(row_in "$screen" "^$LA /dev/shm .*[0-9]\.[0-9]%")
g_h=$(row_in "$screen" "^host /dev/shm .*[0-9]\.[0-9]%")
[ "$g_b" -gt 0 ] && [ "$g_a" -gt 0 ] && [ "$g_h" -gt 0 ] ||
    { tui_dump; fail "no gauge line for each of B's, A's and the host's mount"; }
[ "$g_b" -lt "$g_a" ] || { tui_dump; fail "B's critical mount is not before A's"; }
sed -n "$((g_b + 1))p" <<<"$screen" | grep -qE ' 9[5-9]\.[0-9]%' ||
    { tui_dump; fail "B's gauge does not show its fill (over 95%)"; }
ok "a gauge per mount labelled with its container, B's critical one before A's"
screen=$(tui_cap)
row_b=$(row_in "$screen" "container $LB")
row_a=$(row_in "$screen" "container $LA")
[ "$row_b" -ge 0 ] && [ "$row_b" -lt "$row_a" ] || { tui_dump; fail "container B (critical) is not listed before A"; }
ok "the more critical container first in the tree"
tui_keys '*' / "${ID_A:0:16}" Enter
tui_gone "container $LB" 20

# container -> group -> worker -> segments, each under its own container.
tui_wait "worker $WORKER_A " 15
screen=$(tui_cap)
row_main_a=$(row_in "$screen" "main $MAIN_A ")
row_main_b=$(row_in "$screen" "main $MAIN_B ")
row_worker_a=$(row_in "$screen" "worker $WORKER_A ")
row_a=$(row_in "$screen" "container $LA")
[ "$row_main_b" -lt 0 ] || { tui_dump; fail "B's group shows under the filter for A"; }
[ "$row_main_a" -gt "$row_a" ] && [ "$row_worker_a" -gt "$row_main_a" ] ||
    { tui_dump; fail "A's group and worker are not under A's row"; }
sed -n "$((row_worker_a + 2))p" <<<"$screen" | grep -qE "torch_[0-9]+_[0-9]+" ||
    { tui_dump; fail "no segment row under A's worker"; }
ok "tree: container -> group (main $MAIN_A) -> worker $WORKER_A -> segments"

# The budget line follows the selected container.
tui_keys Home # the filter leaves A's subtree: its first row is A's
tui_wait "^Budget $LA" 15
tui_keys b
tui_wait "the budget of $LA" 15
tui_wait "^  limit +512 MiB" 15
# Its app figure names the memory.stat key it is, of the cgroup's version.
if [ "$MEMCG_VERSION" = 1 ]; then key=total_rss; else key=anon; fi
tui_wait "^  app .*anonymous memory charged to the cgroup \(memory\.stat $key\)" 15
ok "the budget page is the selected container's (A, its 512 MiB limit; app from $key)"
tui_wait "The DataLoader of main pid $MAIN_A, as its segments show it" 15
tui_wait "and [0-9]+ under this memory limit \(512 MiB\)" 15
ok "the budget page has A's own DataLoader and the workers that fit under A's limit"
tui_keys q
tui_keys Escape / "${ID_B:0:16}" Enter
tui_wait "container $LB" 15
tui_keys Home
tui_wait "^Budget $LB" 15
tui_keys b
tui_wait "the budget of $LB" 15
tui_wait "^  limit +256 MiB" 15
ok "another container selected, another budget (B, 256 MiB)"
tui_wait "The DataLoader of main pid $MAIN_B, as its segments show it" 15
tui_wait "workers that fit at that factor: [0-9]+ in this /dev/shm \(32\.0 MiB\)" 15
ok "B's budget page: B's own DataLoader, against B's 32 MiB /dev/shm"
tui_keys q
tui_keys Escape / "${ID_A:0:16}" Enter
tui_wait "container $LA" 15
tui_keys Home # the filter leaves A's subtree: its first row is A's
tui_keys Enter
tui_wait "^ *id +$ID_A" 15
tui_wait "docker-$ID_A.scope" 15
ok "Enter on a container: its details (full id, cgroup)"
tui_keys q
# Space on a container: refused; the title counts only marks an action acts on.
tui_keys Space
tui_wait "a container cannot be marked: mark its rows" 15
! tui_cap | grep -qE "[0-9]+ marked" || fail "a container's row was counted as marked"
ok "Space on a container: refused, nothing marked"

# n: the own view (the host's mounts and processes alone), and back.
tui_keys Escape n
tui_wait "own view" 15
tui_gone "container $LA" 15
tui_gone "^$LB /dev/shm" 15
tui_gone "main $MAIN_A " 15
ok "n: the own view shows neither the containers' mounts nor their processes"
# The host's gauge and the budget line name the same mount: this namespace's
# 16 MiB tmpfs, the host of the node view inside it.
tui_wait "^host /dev/shm .*[0-9]\.[0-9]% +[0-9.]+[BKMG]?/16M " 15
tui_wait "^Budget .* shm [0-9.]+[BKMG]?/16M " 15
ok "the host's gauge and the budget line both show this namespace's 16 MiB mount"
tui_keys n
tui_wait "node view" 15
tui_wait "^$LB /dev/shm" 15
tui_keys / "${ID_A:0:16}" Enter
tui_wait "container $LA" 15
tui_wait "main $MAIN_A " 15
tui_keys Escape
ok "n again: the node view"
tui_keys h
tui_wait "^ +n +with --all: switch between the node view" 15
ok "the help page lists n"
tui_keys q
tui_sane "160x60 node view"
tui_quit

# --- An action acts in the selected container's mount -----------------------------
# A's orphan is removed through A's mount namespace (as --pid does: the mount
# opened through a process's root, its device checked); files of the same
# name in B's and in the host's /dev/shm stay.
MANIFEST=$MAN_A
orphan=$(unhex "$(manifest_segments orphan | awk '{ print $5 }' | head -n 1)")
[ -n "$orphan" ] && [ -f "/proc/$MAIN_A/root/dev/shm/$orphan" ] || fail "A has no orphan file"
MAIN_B_ROOT=/proc/$MAIN_B/root
echo decoy >"/dev/shm/$orphan"
echo decoy >"$MAIN_B_ROOT/dev/shm/$orphan"
tui_start 160 60 --all
tui_wait "^$LA /dev/shm" 15
tui_keys / "${ID_A:0:16}" Enter
tui_wait "$orphan +orphan " 10
tui_keys End # the last row of A's subtree: its orphans section's last segment
tui_keys Enter
tui_wait "^ *mount +$LA /dev/shm" 15
tui_keys q
ok "a segment's details name its container's mount"
tui_keys d
tui_wait "Unlink 1 orphan" 15
tui_wait "${ID_A:0:12}: /dev/shm/$orphan " 15 # the plan names the container
tui_keys y
wait_for '[ ! -e "/proc/$MAIN_A/root/dev/shm/$orphan" ]' 10 ||
    { tui_dump; fail "d on A's orphan did not remove it from A's /dev/shm"; }
[ "$(cat "/dev/shm/$orphan")" = decoy ] || fail "the host's file of the same name was touched"
[ "$(cat "$MAIN_B_ROOT/dev/shm/$orphan")" = decoy ] || fail "B's file of the same name was touched"
ok "d in the node view removed A's orphan $orphan in A's mount; B's and the host's namesakes stay"
tui_quit

# --- The own view's actions stay in the own view ------------------------------------
# D (every orphan) in the own view of --all plans and removes the host's
# orphans alone: an orphan of the same name in A's /dev/shm is neither in the
# plan nor touched, though the node view would show it.
rm -f "/dev/shm/$orphan" # the last section's decoy: an orphan here too
dead=$(dead_pid)
own_orphan=torch_${dead}_9
echo host >"/dev/shm/$own_orphan"
echo ctr >"/proc/$MAIN_A/root/dev/shm/$own_orphan"
tui_start 160 60 --all --orphan-min-age 0
tui_wait "^$LA /dev/shm" 15
tui_keys n
tui_wait "own view" 15
tui_keys D
tui_wait "Unlink 1 orphan" 15
tui_wait "host: /dev/shm/$own_orphan " 15
if tui_cap | grep -q "${ID_A:0:12}"; then tui_dump; fail "the own view's D plans in container A"; fi
tui_keys y
wait_for '[ ! -e "/dev/shm/$own_orphan" ]' 10 || { tui_dump; fail "D in the own view did not remove the host's orphan"; }
[ "$(cat "/proc/$MAIN_A/root/dev/shm/$own_orphan")" = ctr ] ||
    fail "D in the own view removed A's orphan of the same name"
ok "D in the own view removed the host's orphan $own_orphan alone; A's namesake stays"
# K (reap) in the own view leaves A's zombie out (other zombies of this host
# may be offered); in the node view it offers it, through A's view.
tui_keys K
wait_for 'tui_cap | grep -qE "nothing to reap|and help [0-9]+ zombie"' 15 ||
    { tui_dump; fail "K in the own view neither planned nor said why not"; }
if tui_cap | grep -q "pid $ZOMBIE_A "; then tui_dump; fail "K in the own view offers container A's zombie"; fi
if tui_cap | grep -qE "and help [0-9]+ zombie"; then tui_keys n; fi
tui_keys n
tui_wait "node view" 15
tui_keys K
tui_wait "zombie pid $ZOMBIE_A " 15
tui_keys n
ok "K in the own view leaves container A's zombie $ZOMBIE_A out; the node view offers it"
tui_quit
rm -f "/proc/$MAIN_A/root/dev/shm/$own_orphan"

# --- More mounts than gauge lines ------------------------------------------------
# At 9 lines two are left for gauges: the most critical mount's, then one
# that counts the others (the host's and A's at least, with B's shown) and
# gives the fill of the fullest of them. Two more namespaces with a /dev/shm
# of their own make five mounts, more than the lines.
ns_holder C
ns_holder D
tui_start 160 9 --all
tui_wait '^\+[0-9]+ more mounts, the fullest [0-9]+\.[0-9]%: the tree lists every one' 15
screen=$(tui_cap)
more=$(row_in "$screen" '^\+[0-9]+ more mounts')
hidden=$(sed -n "$((more + 1))p" <<<"$screen" | sed -E 's/^\+([0-9]+) .*/\1/')
[ "$more" -ge 2 ] && sed -n "${more}p" <<<"$screen" | grep -qE ' [0-9]+\.[0-9]% ' ||
    { tui_dump; fail "no gauge line above the line that counts the other mounts"; }
[ "$hidden" -ge 2 ] || { tui_dump; fail "the count says $hidden more mounts, not the host's and A's at least"; }
ok "more mounts than gauge lines: the last line counts the $hidden not shown"
tui_quit

# --- A plain mount namespace: no runtime, a label too long for the budget line -------
# Its label is "mntns N (pid P)", longer than the budget line's 20 columns
# for it: cut with an ellipsis; its details say it has no runtime.
ns_holder C
hc=$HOLDER
tui_start 160 60 --all
tui_wait "container mntns [0-9]+ \(pid $hc\)" 15
tui_select "container mntns [0-9]+ \(pid $hc\)"
tui_wait "^Budget mntns [0-9]+ \(p… +[A-Z]+ " 15
ok "the budget line cuts a long container label with an ellipsis"
tui_keys Enter
tui_wait "^Container mntns [0-9]+ \(pid $hc\)" 15
tui_wait "^  runtime +-$" 15
tui_cap | grep -q "(null)" && { tui_dump; fail "a detail of a plain mount namespace reads (null)"; }
ok "Enter on a plain mount namespace: runtime -, nothing reads (null)"
tui_keys q
tui_quit

# --- A container on the host's /dev/shm (--ipc=host) ------------------------------
# A container's mount namespace that shows the host's tmpfs at /dev/shm, as
# --ipc=host or -v /dev/shm:/dev/shm gives it: the host's gauge says that one
# more container sees the host's mount, as a container's gauge does.
ctr_cgroup 268435456
ready=$SHMTEST_TMP/hostipc.ready
unshare -m --propagation private bash -c 'echo $$ >"$1/cgroup.procs" && : >"$2" && exec sleep 600' \
    _ "$MEMCG_DIR" "$ready" </dev/null >/dev/null 2>&1 &
hostipc=$!
on_exit "kill -KILL $hostipc 2>/dev/null; wait $hostipc 2>/dev/null"
wait_for "[ -e $ready ]" 30 || fail "the --ipc=host container did not start"
tui_start 160 60 --all
tui_keys '*' # every branch collapsed: one row per container
tui_wait "container docker ${CTR_ID:0:12}" 15
tui_wait "^host \+1 /dev/shm .*[0-9]\.[0-9]% " 15
ok "the host's gauge counts the container that shares its /dev/shm (host +1)"
tui_select "container docker ${CTR_ID:0:12}"
tui_keys Enter
tui_wait "^  none of its own: it sees host \+1 /dev/shm \(device [0-9]+:[0-9]+\)" 15
ok "its details name the mount it sees, the host's"
tui_keys q
tui_quit
kill -KILL "$hostipc" 2>/dev/null
wait "$hostipc" 2>/dev/null

# --- A container before another goes away ------------------------------------------
# Containers are kept in the order the walk of /proc meets them: C's (started
# first) before D's. With D's row selected and its details open, C ends: the
# details stay D's, and so does the selection, though D's place in the list
# of containers moved up by one.
scene_ctr C 268435456 16m --workers 1 --per-worker 1 --size 64K
scene_ctr D 268435456 16m --workers 1 --per-worker 1 --size 64K
LC="docker ${ID_C:0:12}"
LD="docker ${ID_D:0:12}"
tui_start 160 60 --all
tui_wait "^$LD /dev/shm" 15
tui_keys '*' # every branch collapsed: one row per container
tui_wait "container $LC" 15
tui_select "container $LD"
tui_keys Enter
tui_wait "^ *id +$ID_D" 15
init_c=$(pgrep -P "$OUTER_C" | head -n 1)
[ -n "$init_c" ] || fail "C's pid namespace has no init to end"
kill -KILL "$init_c"
wait_for "! kill -0 $init_c 2>/dev/null" 10 || fail "C did not end"
# Its gauge goes at the next scan: the page is left to see it.
tui_keys q
tui_gone "^$LC /dev/shm" 20
tui_wait "container $LD" 5
[[ "$(tui_style "container $LD")" == *bg=46* ]] ||
    { tui_dump; fail "the selection left D's row when C, before it, went away"; }
tui_keys Enter
tui_wait "^ *id +$ID_D" 15
ok "a container before another ends: the selection and the details stay with the other"
tui_keys q
tui_quit

# --- Tiny terminals --------------------------------------------------------------
for size in 60x14 30x8 12x4; do
    w=${size%x*}
    h=${size#*x}
    tui_start "$w" "$h" --all
    wait_for '[ "$(tui_row_of "node|container|host|Budget|scan")" -ge 0 ] || [ "$TUI_W" -lt 20 ]' 10
    # It fits from the start and through the first scans.
    stays_false '! tui_fits' 1 || { tui_dump; fail "$size: the node view does not fit"; }
    for k in n n b q Enter q '*' Down Down Enter q; do
        tui_keys "$k"
        tui_sane "$size: after $k"
    done
    tui_quit
    ok "$size: the node view and its keys neither crash nor draw past the edge"
done

# --- Without --all --------------------------------------------------------------
tui_start 120 30
tui_wait "^/dev/shm " 10
tui_keys n
tui_wait "needs shmwatch --all" 15
ok "without --all, n says the node view needs --all"
tui_quit
