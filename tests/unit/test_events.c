/* Events (model/events.c) from hand-made facts, their JSON lines
 * (report/eventjson.c), and the process connector's parser fed bytes
 * (collect/proccn.c). */
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "fake_scene.h"
#include "collect/proccn.h"
#include "model/events.h"
#include "report/report.h"
#include "util/xalloc.h"


/* A state of n processes (pids given, roles worker of main 100 but the
 * first, the main), one cgroup with kills, and one mount (used of 64 MiB). */
static void make_state(struct ev_state *st, const pid_t *pids, size_t n, uint64_t kills,
                       uint64_t used)
{
    memset(st, 0, sizeof(*st));
    st->valid = true;
    st->procs = xcalloc(n ? n : 1, sizeof(*st->procs));
    st->alive = xcalloc(n ? n : 1, sizeof(*st->alive));
    for (size_t i = 0; i < n; i++) {
        struct ev_proc *p = &st->procs[st->nprocs++];
        p->pid = pids[i];
        p->start_ticks = 1000 + (unsigned long long)pids[i];
        snprintf(p->comm, sizeof(p->comm), i ? "pt_data_worker" : "python3");
        p->role = i ? ROLE_WORKER : ROLE_MAIN;
        p->group = 100;
        p->ctr_id = xstrdup("abc123");
        p->ctr_name = xstrdup("trainer");
        p->cg = 0;
        st->alive[st->nalive].pid = pids[i];
        st->alive[st->nalive].start_ticks = p->start_ticks;
        st->nalive++;
    }
    st->cgroups = xcalloc(1, sizeof(*st->cgroups));
    st->ncgroups = 1;
    st->cgroups[0].path = xstrdup("/docker/abc123");
    st->cgroups[0].dir = xstrdup("/sys/fs/cgroup/memory/docker/abc123");
    st->cgroups[0].version = 1;
    st->cgroups[0].known = true;
    st->cgroups[0].kills = kills;
    st->cgroups[0].ctr_id = xstrdup("abc123");
    st->cgroups[0].ctr_name = xstrdup("trainer");
    st->mounts = xcalloc(1, sizeof(*st->mounts));
    st->nmounts = 1;
    snprintf(st->mounts[0].id, sizeof(st->mounts[0].id), "0:52");
    st->mounts[0].path = xstrdup("/dev/shm");
    st->mounts[0].ctr_id = xstrdup("abc123");
    st->mounts[0].ctr_name = xstrdup("trainer");
    st->mounts[0].size_known = true;
    st->mounts[0].size = 64 * MiB;
    st->mounts[0].used = used;
    st->mounts[0].used_pct = 100.0 * (double)used / (double)(64 * MiB);
    st->mounts[0].level = fill_level_of(st->mounts[0].used_pct, 80, 95);
}

static const pid_t group_pids[] = {100, 101, 102};

static void test_exit_causes(void **state)
{
    (void)state;
    struct ev_state st;
    make_state(&st, group_pids, 3, 0, 0);
    struct event_list l = {0};
    assert_true(events_exit(&st, 101, SIGBUS, 5.0, false, &l));           /* killed by SIGBUS */
    assert_true(events_exit(&st, 102, SIGKILL, 5.0, true, &l));           /* with the OOM count */
    assert_true(events_exit(&st, 100, 3 << 8, 5.0, false, &l));          /* exit(3) */
    assert_false(events_exit(&st, 4242, SIGKILL, 5.0, false, &l));        /* not a known process */
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[0].cause, CAUSE_SIGBUS);
    assert_int_equal(l.items[0].signal, SIGBUS);
    assert_int_equal(l.items[0].role, ROLE_WORKER);
    assert_int_equal(l.items[0].group, 100);
    assert_string_equal(l.items[0].container_name, "trainer");
    assert_false(l.items[0].has_exit_code);
    assert_int_equal(l.items[1].cause, CAUSE_OOM_KILL);
    assert_int_equal(l.items[2].cause, CAUSE_EXIT);
    assert_true(l.items[2].has_exit_code);
    assert_int_equal(l.items[2].exit_code, 3);
    assert_int_equal(l.items[2].signal, 0);
    event_list_clear(&l);
    /* SIGKILL without a rise of the count is someone's kill -9; a core flag. */
    assert_true(events_exit(&st, 101, SIGKILL, 5.0, false, &l));
    assert_true(events_exit(&st, 102, SIGSEGV | 0x80, 5.0, false, &l));
    assert_int_equal(l.items[0].cause, CAUSE_SIGNAL);
    assert_int_equal(l.items[1].cause, CAUSE_SIGNAL);
    assert_true(l.items[1].core);
    event_list_free(&l);
    /* No model yet: nothing is known. */
    st.valid = false;
    assert_false(events_exit(&st, 101, SIGBUS, 5.0, false, &l));
    st.valid = true;
    ev_state_free(&st);
}

/* A worker a scan read between its fork and its first batch held only
 * what its main held (a multiprocessing lock's semaphore): both holders,
 * libtorch mapped. Its death other than by exit 0 is its main's worker's;
 * a holder of another program, of another process group, whose parent the
 * scan did not know, or that maps no libtorch, stays one. */
static void test_exit_of_unmarked_worker(void **state)
{
    (void)state;
    static const pid_t pids[] = {100, 101, 102, 103};
    struct ev_state st;
    make_state(&st, pids, 4, 0, 0);
    for (size_t i = 0; i < st.nprocs; i++) {
        struct ev_proc *p = &st.procs[i];
        snprintf(p->comm, sizeof(p->comm), i == 2 ? "cat" : "python3");
        p->role = ROLE_HOLDER;
        p->group = 0;
        p->ppid = i == 0 ? 1 : 100;
        p->pgid = i == 3 ? 103 : 100;
        p->torch = true;
    }
    struct event_list l = {0};
    assert_true(events_exit(&st, 101, SIGBUS, 5.0, false, &l));
    assert_true(events_exit(&st, 101, 0, 5.0, false, &l)); /* exit 0: no end to explain */
    assert_true(events_exit(&st, 102, SIGBUS, 5.0, false, &l));
    assert_true(events_exit(&st, 103, SIGBUS, 5.0, false, &l)); /* a group of its own */
    assert_true(events_exit(&st, 100, SIGBUS, 5.0, false, &l)); /* forked by init */
    st.procs[1].torch = false; /* two processes of one program sharing a file */
    assert_true(events_exit(&st, 101, SIGBUS, 5.0, false, &l));
    assert_int_equal(l.n, 6);
    assert_int_equal(l.items[0].pid, 101);
    assert_int_equal(l.items[0].role, ROLE_WORKER);
    assert_int_equal(l.items[0].group, 100);
    assert_int_equal(l.items[0].cause, CAUSE_SIGBUS);
    assert_string_equal(l.items[0].comm, "python3");
    assert_string_equal(l.items[0].container_name, "trainer");
    for (size_t i = 1; i < 6; i++) {
        assert_int_equal(l.items[i].role, ROLE_HOLDER);
        assert_int_equal(l.items[i].group, 0);
    }
    event_list_free(&l);
    ev_state_free(&st);
}

/* A holder named as the main of a worker no scan read (its exit told as
 * the forker's worker) is a main from then: its own exit says so, in this
 * state and, through ev_state_carry, in the next scan's, where the same
 * process is again read as a holder; another process on its pid is not. */
static void test_holder_named_main(void **state)
{
    (void)state;
    static const pid_t pids[] = {100, 101};
    struct ev_state st;
    make_state(&st, pids, 2, 0, 0);
    st.procs[0].role = ROLE_HOLDER;
    st.procs[0].group = 0;
    st.procs[0].torch = true;
    struct ev_child c = {.pid = 105, .ppid = 100, .pgid = 100};
    snprintf(c.comm, sizeof(c.comm), "pt_data_worker");
    struct event_list l = {0};
    events_exit_child(&c, &st.procs[0], SIGBUS, 5.0, false, &l);
    assert_int_equal(l.items[0].group, 100);
    ev_state_note_mains(&st, &l, 0);
    assert_int_equal(st.procs[0].role, ROLE_MAIN);
    assert_int_equal(st.procs[0].group, 100);

    /* The next scan reads it a holder again (its workers gone). */
    struct ev_state next, other;
    make_state(&next, pids, 2, 0, 0);
    make_state(&other, pids, 2, 0, 0);
    for (struct ev_state *x = &next; x; x = x == &next ? &other : NULL) {
        x->procs[0].role = ROLE_HOLDER;
        x->procs[0].group = 0;
    }
    other.procs[0].start_ticks++; /* another process on pid 100 */
    ev_state_carry(&next, &st);
    ev_state_carry(&other, &st);
    assert_true(events_exit(&next, 100, 1 << 8, 6.0, false, &l));
    assert_true(events_exit(&other, 100, 1 << 8, 6.0, false, &l));
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[1].role, ROLE_MAIN);
    assert_int_equal(l.items[1].group, 100);
    assert_int_equal(l.items[2].role, ROLE_HOLDER);
    event_list_free(&l);
    ev_state_free(&st);
    ev_state_free(&next);
    ev_state_free(&other);
}

/* A DataLoader's main whose workers are gone (between epochs, or at its
 * end) is read by the next scan as a holder: it stays a main there, and its
 * exit is a main's. */
static void test_main_without_workers(void **state)
{
    (void)state;
    static const pid_t pids[] = {100, 101};
    struct ev_state prev, cur;
    make_state(&prev, pids, 2, 0, 0); /* main 100, worker 101 */
    make_state(&cur, pids, 1, 0, 0);  /* 100 alone, a holder now */
    cur.procs[0].role = ROLE_HOLDER;
    cur.procs[0].group = 0;
    ev_state_carry(&cur, &prev);
    struct event_list l = {0};
    assert_true(events_exit(&cur, 100, 0, 6.0, false, &l));
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].role, ROLE_MAIN);
    assert_int_equal(l.items[0].group, 100);
    event_list_free(&l);
    ev_state_free(&prev);
    ev_state_free(&cur);
}

static void test_oom_rise_is_told_once(void **state)
{
    (void)state;
    struct ev_state prev, cur;
    make_state(&prev, group_pids, 3, 2, 0);
    struct event_list l = {0};
    /* The count read at a SIGKILL: rose by 1, the victim named. */
    assert_true(events_oom(&prev, 0, true, 3, 102, "pt_data_worker", 7.0, &l));
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].kind, EV_OOM_KILL);
    assert_int_equal(l.items[0].kills, 1);
    assert_int_equal(l.items[0].victim, 102);
    assert_string_equal(l.items[0].victim_comm, "pt_data_worker");
    assert_string_equal(l.items[0].cgroup, "/docker/abc123");
    /* The same count again: nothing. */
    assert_false(events_oom(&prev, 0, true, 3, 0, NULL, 7.5, &l));
    event_list_clear(&l);
    /* The next scan sees 3: already told. A later one sees 5: two more, no victim. */
    make_state(&cur, group_pids, 3, 3, 0);
    events_scan(&prev, &cur, NULL, 0, NULL, 0, 1.0, 8.0, &l);
    assert_int_equal(l.n, 0);
    ev_state_free(&prev);
    make_state(&prev, group_pids, 3, 5, 0);
    events_scan(&cur, &prev, NULL, 0, NULL, 0, 1.0, 9.0, &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].kills, 2);
    assert_int_equal(l.items[0].victim, 0);
    /* A count that falls (the cgroup made anew) is a baseline. */
    event_list_clear(&l);
    assert_false(events_oom(&prev, 0, true, 1, 0, NULL, 10.0, &l));
    assert_int_equal(prev.cgroups[0].kills, 1);
    assert_int_equal(l.n, 0);
    event_list_free(&l);
    ev_state_free(&prev);
    ev_state_free(&cur);
}

static void test_gone_between_scans(void **state)
{
    (void)state;
    struct ev_state prev, cur;
    make_state(&prev, group_pids, 3, 0, 0);
    const pid_t left[] = {100};
    make_state(&cur, left, 1, 0, 0);
    struct event_list l = {0};
    /* 101 was told by the kernel; 102 is only gone: cause unknown. */
    const pid_t reported[] = {101};
    events_scan(&prev, &cur, reported, 1, NULL, 0, 1.0, 3.0, &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].kind, EV_EXIT);
    assert_int_equal(l.items[0].pid, 102);
    assert_int_equal(l.items[0].cause, CAUSE_UNKNOWN);
    assert_int_equal(l.items[0].signal, 0);
    event_list_clear(&l);
    /* A pid alive again as another process (a new start time) has ended too. */
    cur.alive[0].start_ticks = 1;
    events_scan(&prev, &cur, reported, 1, NULL, 0, 1.0, 3.0, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.items[0].pid, 100);
    /* A first scan tells nothing of processes. */
    event_list_clear(&l);
    prev.valid = false;
    events_scan(&prev, &cur, NULL, 0, NULL, 0, 1.0, 3.0, &l);
    assert_int_equal(l.n, 0);
    event_list_free(&l);
    ev_state_free(&prev);
    ev_state_free(&cur);
}

static void test_mounts_fill_and_churn(void **state)
{
    (void)state;
    struct ev_state a, b;
    make_state(&a, NULL, 0, 0, 10 * MiB);
    make_state(&b, NULL, 0, 0, 62 * MiB); /* 96.9 %: critical */
    struct event_list l = {0};
    struct ev_churn ch[] = {{"0:52", 12, 10}, {"0:99", 1, 1}};
    events_scan(&a, &b, NULL, 0, ch, 2, 2.0, 4.0, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.items[0].kind, EV_FILL);
    assert_int_equal(l.items[0].level, FILL_CRITICAL);
    assert_int_equal(l.items[0].used, 62 * MiB);
    assert_int_equal(l.items[1].kind, EV_SEGMENTS);
    assert_int_equal(l.items[1].created, 12);
    assert_int_equal(l.items[1].removed, 10);
    assert_true(l.items[1].interval_s == 2.0);
    assert_string_equal(l.items[1].container, "abc123");
    /* Each names its mount's container by name too, as an exit does. */
    assert_string_equal(l.items[0].container_name, "trainer");
    assert_string_equal(l.items[1].container_name, "trainer");
    struct buf js;
    buf_init(&js);
    report_event_json(&js, &l.items[0]);
    assert_string_equal(js.data, "{\"event\":\"fill\",\"time\":\"1970-01-01T00:00:04Z\","
                                 "\"mount_id\":\"0:52\",\"mount\":\"/dev/shm\","
                                 "\"container\":\"abc123\",\"container_name\":\"trainer\","
                                 "\"used_bytes\":65011712,\"size_bytes\":67108864,"
                                 "\"used_pct\":96.875,\"level\":\"critical\","
                                 "\"containerd_namespace\":null}");
    buf_free(&js);
    event_list_clear(&l);
    /* The same level again, and a churn of 0: nothing. */
    struct ev_churn none[] = {{"0:52", 0, 0}};
    events_scan(&b, &b, NULL, 0, none, 1, 2.0, 5.0, &l);
    assert_int_equal(l.n, 0);
    /* A mount going, another appearing. */
    snprintf(b.mounts[0].id, sizeof(b.mounts[0].id), "0:53");
    events_scan(&a, &b, NULL, 0, NULL, 0, 2.0, 6.0, &l);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[0].kind, EV_MOUNT);
    assert_false(l.items[0].appeared);
    assert_string_equal(l.items[0].mount_id, "0:52");
    assert_int_equal(l.items[1].kind, EV_MOUNT);
    assert_true(l.items[1].appeared);
    assert_string_equal(l.items[1].mount_id, "0:53");
    assert_int_equal(l.items[2].kind, EV_FILL); /* the new one is critical already */
    event_list_free(&l);
    ev_state_free(&a);
    ev_state_free(&b);
    assert_int_equal(fill_level_of(79.9, 80, 95), FILL_OK);
    assert_int_equal(fill_level_of(80, 80, 95), FILL_WARN);
    assert_int_equal(fill_level_of(95, 80, 95), FILL_CRITICAL);
}

/* A tmpfs ends and a new one, another container's, takes its device
 * number before the next scan (the kernel hands out the lowest free one):
 * the birth time of its root tells the two apart. */
static void test_mount_device_reused(void **state)
{
    (void)state;
    struct ev_state a, b;
    make_state(&a, NULL, 0, 0, 62 * MiB);
    make_state(&b, NULL, 0, 0, 62 * MiB); /* both critical */
    a.mounts[0].born_known = b.mounts[0].born_known = true;
    a.mounts[0].born = (struct timespec){1764991927, 216087979};
    b.mounts[0].born = (struct timespec){1764991927, 748087979};
    free(b.mounts[0].ctr_id);
    b.mounts[0].ctr_id = xstrdup("def456");
    struct event_list l = {0};
    events_scan(&a, &b, NULL, 0, NULL, 0, 0.5, 6.0, &l);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[0].kind, EV_MOUNT);
    assert_false(l.items[0].appeared);
    assert_string_equal(l.items[0].mount_id, "0:52");
    assert_string_equal(l.items[0].container, "abc123");
    assert_int_equal(l.items[1].kind, EV_MOUNT);
    assert_true(l.items[1].appeared);
    assert_string_equal(l.items[1].mount_id, "0:52");
    assert_string_equal(l.items[1].container, "def456");
    assert_int_equal(l.items[2].kind, EV_FILL); /* the new one's level is news */
    assert_string_equal(l.items[2].container, "def456");
    event_list_clear(&l);
    /* The same birth: the same mount, nothing to tell. */
    b.mounts[0].born = a.mounts[0].born;
    events_scan(&a, &b, NULL, 0, NULL, 0, 0.5, 6.5, &l);
    assert_int_equal(l.n, 0);
    /* A birth one scan could not read: the device decides. */
    b.mounts[0].born.tv_nsec = 1;
    b.mounts[0].born_known = false;
    events_scan(&a, &b, NULL, 0, NULL, 0, 0.5, 7.0, &l);
    assert_int_equal(l.n, 0);
    event_list_free(&l);
    ev_state_free(&a);
    ev_state_free(&b);
}

/* A scan that names no container for a mount (read while the container's
 * last processes exit) does not take it from the mount: its going is the
 * container's. Another mount on the same device is not given it. */
static void test_mount_keeps_its_container(void **state)
{
    (void)state;
    struct ev_state a, b, c, d;
    make_state(&a, NULL, 0, 0, MiB);
    make_state(&b, NULL, 0, 0, MiB);
    make_state(&c, NULL, 0, 0, MiB); /* the mount gone */
    free(c.mounts[0].path);
    free(c.mounts[0].ctr_id);
    free(c.mounts[0].ctr_name);
    c.nmounts = 0;
    free(b.mounts[0].ctr_id);
    free(b.mounts[0].ctr_name);
    b.mounts[0].ctr_id = b.mounts[0].ctr_name = NULL;
    struct event_list l = {0};
    events_scan(&a, &b, NULL, 0, NULL, 0, 0.5, 6.0, &l);
    assert_int_equal(l.n, 0);
    ev_state_carry(&b, &a);
    assert_non_null(b.mounts[0].ctr_id);
    assert_string_equal(b.mounts[0].ctr_id, "abc123");
    assert_string_equal(b.mounts[0].ctr_name, "trainer");
    events_scan(&b, &c, NULL, 0, NULL, 0, 0.5, 6.5, &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].kind, EV_MOUNT);
    assert_false(l.items[0].appeared);
    assert_string_equal(l.items[0].container, "abc123");
    assert_string_equal(l.items[0].container_name, "trainer");
    event_list_clear(&l);
    /* A new tmpfs on the device (another birth) is not the old one's. */
    make_state(&d, NULL, 0, 0, MiB);
    free(d.mounts[0].ctr_id);
    free(d.mounts[0].ctr_name);
    d.mounts[0].ctr_id = d.mounts[0].ctr_name = NULL;
    a.mounts[0].born_known = d.mounts[0].born_known = true;
    a.mounts[0].born = (struct timespec){1764991927, 216087979};
    d.mounts[0].born = (struct timespec){1764991927, 748087979};
    ev_state_carry(&d, &a);
    assert_null(d.mounts[0].ctr_id);
    event_list_free(&l);
    ev_state_free(&a);
    ev_state_free(&b);
    ev_state_free(&c);
    ev_state_free(&d);
}

static void test_event_lines(void **state)
{
    (void)state;
    struct ev_state st;
    make_state(&st, group_pids, 3, 0, 0);
    snprintf(st.procs[1].comm, sizeof(st.procs[1].comm), "a\"b\n");
    struct event_list l = {0};
    events_exit(&st, 101, SIGBUS, 1764991927.25, false, &l);
    events_recorder(&l, 1764991927.0, "events_off", "no \"privilege\"");
    struct buf b;
    buf_init(&b);
    report_event_json(&b, &l.items[0]);
    assert_string_equal(b.data,
                        "{\"event\":\"exit\",\"time\":\"2025-12-06T03:32:07.250Z\",\"pid\":101,"
                        "\"comm\":\"a\\\"b\\n\",\"role\":\"worker\",\"group\":100,"
                        "\"container\":\"abc123\",\"container_name\":\"trainer\","
                        "\"exit_code\":null,\"signal\":\"SIGBUS\",\"core\":false,"
                        "\"cause\":\"sigbus\",\"containerd_namespace\":null}");
    buf_reset(&b);
    report_event_json(&b, &l.items[1]);
    assert_string_equal(b.data, "{\"event\":\"recorder\",\"time\":\"2025-12-06T03:32:07Z\","
                                "\"what\":\"events_off\",\"detail\":\"no \\\"privilege\\\"\"}");
    buf_free(&b);
    /* The exporter's counters. */
    struct death_counts dc = {0};
    death_counts_add(&dc, &l);
    death_counts_add(&dc, &l);
    assert_int_equal(dc.n, 1);
    assert_string_equal(dc.items[0].signal, "SIGBUS");
    assert_int_equal(dc.items[0].n, 2);
    buf_init(&b);
    report_prometheus_deaths(&b, &dc);
    assert_non_null(strstr(
        b.data, "shmwatch_process_deaths_total{signal=\"SIGBUS\",role=\"worker\",container=\"trainer\"} 2\n"));
    buf_free(&b);
    death_counts_free(&dc);
    event_list_free(&l);
    ev_state_free(&st);
}

/* The facts of the shared scene's model: its interesting processes (the
 * zombie left out: it has ended), every live process of the scan, its
 * mount with the fill level, its cgroup; the zombies a main forked, as its
 * group's worker or shm manager. */
static void test_state_from_model(void **state)
{
    (void)state;
    struct scan *s = fake_scene();
    fake_add_proc(s, 31, 10, 10, 'Z', "torch_shm_manag", NULL); /* main 10's */
    fake_add_proc(s, 32, 5, 5, 'Z', "python3", NULL);           /* no main's */
    procs_sort(&s->procs);
    fake_cgroup(&s->cgroup, "/docker/abc", 512 * MiB, 100 * MiB);
    s->cgroup.dir = xstrdup("/sys/fs/cgroup/memory/docker/abc");
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(s, &mo, &m);
    struct ev_state st;
    ev_state_from_model(&st, &m, 50, 95); /* 40 of 64 MiB: 62.5 %, warn */
    assert_true(st.valid);
    const struct ev_proc *w = ev_state_proc(&st, 11);
    assert_non_null(w);
    assert_int_equal(w->role, ROLE_WORKER);
    assert_int_equal(w->group, 10);
    assert_int_equal(w->cg, 0);
    assert_non_null(ev_state_proc(&st, 10));
    assert_true(ev_state_proc(&st, 20)->torch); /* it maps libtorch */
    assert_false(ev_state_proc(&st, 40)->torch);
    assert_null(ev_state_proc(&st, 30)); /* the zombie */
    assert_null(ev_state_proc(&st, 5));  /* the launcher is no holder */
    /* The zombies, with who forked them: a worker (the main's program) and
     * a shm manager (torch's name) of main 10; the launcher 5, no main
     * (no holder: unknown), forked none; nor does a main fork a worker as
     * another program. */
    const struct ev_child *z = ev_state_zombie(&st, 30);
    assert_non_null(z);
    assert_int_equal(z->ppid, 10);
    assert_int_equal(z->pgid, 10);
    assert_string_equal(z->comm, "python3");
    assert_ptr_equal(ev_state_forker(&st, z), ev_state_proc(&st, 10));
    assert_ptr_equal(ev_state_forker(&st, ev_state_zombie(&st, 31)), ev_state_proc(&st, 10));
    assert_null(ev_state_forker(&st, ev_state_zombie(&st, 32)));
    assert_null(ev_state_zombie(&st, 11)); /* alive */
    struct ev_child git = {.pid = 50, .ppid = 10, .pgid = 10, .comm = "git"};
    assert_null(ev_state_forker(&st, &git));
    /* Nor does a holder that maps no libtorch (cat 40) fork any. */
    struct ev_child cat = {.pid = 55, .ppid = 40, .pgid = 40, .comm = "cat"};
    assert_null(ev_state_forker(&st, &cat));
    cat.comm_inherited = true;
    assert_null(ev_state_forker(&st, &cat));
    /* A process of the model with no live worker (orphan 20, in process
     * group 19) forked one of its program in its process group, not one
     * in another. */
    struct ev_child lone = {.pid = 51, .ppid = 20, .pgid = 19, .comm = "python3"};
    assert_ptr_equal(ev_state_forker(&st, &lone), ev_state_proc(&st, 20));
    lone.pgid = 51;
    assert_null(ev_state_forker(&st, &lone));
    /* Reaped before its stat was read, told by the kernel: one that took no
     * name of its own runs its forker's program (taken to be in its
     * process group); one that ran another program (no name: exec) forks
     * no worker of anyone; one that named itself as torch names workers
     * is main 10's worker. */
    struct ev_child inherited = {.pid = 52, .ppid = 20, .comm_inherited = true};
    assert_ptr_equal(ev_state_forker(&st, &inherited), ev_state_proc(&st, 20));
    struct ev_child ran = {.pid = 53, .ppid = 10};
    assert_null(ev_state_forker(&st, &ran));
    struct ev_child named = {.pid = 54, .ppid = 10, .comm = "pt_data_worker"};
    assert_ptr_equal(ev_state_forker(&st, &named), ev_state_proc(&st, 10));
    named.ppid = 20; /* a holder, no main: its process group unknown, the holder's */
    assert_ptr_equal(ev_state_forker(&st, &named), ev_state_proc(&st, 20));
    inherited.ppid = 99; /* a parent the model does not know */
    assert_null(ev_state_forker(&st, &inherited));
    inherited.ppid = 10;
    /* Their exits: the worker's and the manager's of main 10's group, in
     * its container. */
    struct event_list ended = {0};
    events_exit_child(z, ev_state_proc(&st, 10), SIGBUS, 5, false, &ended); /* the wait status */
    events_exit_child(ev_state_zombie(&st, 31), ev_state_proc(&st, 10), 1 << 8, 5, false, &ended);
    events_exit_child(&inherited, ev_state_proc(&st, 10), SIGBUS, 5, false, &ended);
    assert_int_equal(ended.n, 3);
    assert_int_equal(ended.items[0].pid, 30);
    assert_int_equal(ended.items[0].role, ROLE_WORKER);
    assert_int_equal(ended.items[0].group, 10);
    assert_int_equal(ended.items[0].cause, CAUSE_SIGBUS);
    assert_int_equal(ended.items[1].role, ROLE_SHM_MANAGER);
    assert_string_equal(ended.items[1].comm, "torch_shm_manag");
    assert_int_equal(ended.items[1].exit_code, 1);
    /* The inherited name is the forker's. */
    assert_int_equal(ended.items[2].pid, 52);
    assert_string_equal(ended.items[2].comm, "python3");
    assert_int_equal(ended.items[2].role, ROLE_WORKER);
    assert_int_equal(ended.items[2].group, 10);
    event_list_free(&ended);
    assert_int_equal(st.ncgroups, 1);
    assert_int_equal(st.cgroups[0].kills, 3);
    assert_true(st.cgroups[0].known);
    assert_int_equal(st.nmounts, 1);
    assert_string_equal(st.mounts[0].path, "/dev/shm");
    assert_int_equal(st.mounts[0].level, FILL_WARN);
    assert_false(st.mounts[0].born_known); /* the scan read no birth time */
    ev_state_free(&st);
    /* A birth time the scan read is the mount's. */
    s->ns.ndevs = 1;
    s->ns.reach = xcalloc(1, sizeof(*s->ns.reach));
    s->ns.reach[0].btime_ok = true;
    s->ns.reach[0].btime = (struct timespec){1764991927, 748087979};
    ev_state_from_model(&st, &m, 50, 95);
    assert_true(st.mounts[0].born_known);
    assert_int_equal(st.mounts[0].born.tv_sec, 1764991927);
    assert_int_equal(st.mounts[0].born.tv_nsec, 748087979);
    /* Every process but the zombie is alive: nothing is gone against itself. */
    struct event_list l = {0};
    events_scan(&st, &st, NULL, 0, NULL, 0, 1, 1, &l);
    assert_int_equal(l.n, 0);
    event_list_free(&l);
    ev_state_free(&st);
    model_free(&m);
    scan_free(s);
    free(s);
}

/* --- The connector's messages ------------------------------------------- */

/* Appends one netlink message carrying a connector message of an event
 * (what, pid, tgid, exit code) to buf at *len. */
static void put_event(unsigned char *buf, size_t *len, unsigned what, pid_t pid, pid_t tgid,
                      unsigned code, unsigned idx, const char *comm)
{
    struct nlmsghdr h = {0};
    struct cn_msg cn = {0};
    struct proc_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.what = what;
    ev.timestamp_ns = 123456789;
    ev.event_data.exit.process_pid = pid;
    ev.event_data.exit.process_tgid = tgid;
    ev.event_data.exit.exit_code = code;
    ev.event_data.exit.exit_signal = SIGCHLD;
    ev.event_data.exit.parent_pid = 4000;
    ev.event_data.exit.parent_tgid = 4000;
    if (comm) /* comm's name lies where exit's code does */
        snprintf(ev.event_data.comm.comm, sizeof(ev.event_data.comm.comm), "%s", comm);
    cn.id.idx = idx;
    cn.id.val = CN_VAL_PROC;
    cn.len = sizeof(ev);
    h.nlmsg_len = (unsigned)(NLMSG_HDRLEN + sizeof(cn) + sizeof(ev));
    h.nlmsg_type = NLMSG_DONE;
    memcpy(buf + *len, &h, sizeof(h));
    memcpy(buf + *len + NLMSG_HDRLEN, &cn, sizeof(cn));
    memcpy(buf + *len + NLMSG_HDRLEN + sizeof(cn), &ev, sizeof(ev));
    *len += NLMSG_ALIGN(h.nlmsg_len);
}

static void test_connector_parse(void **state)
{
    (void)state;
    unsigned char buf[4096];
    size_t len = 0;
    put_event(buf, &len, PROC_EVENT_EXIT, 4242, 4242, SIGBUS, CN_IDX_PROC, NULL);
    put_event(buf, &len, PROC_EVENT_EXIT, 4243, 4242, 0, CN_IDX_PROC, NULL);    /* a thread */
    put_event(buf, &len, PROC_EVENT_FORK, 4244, 4244, 0, CN_IDX_PROC, NULL);    /* not an exit */
    put_event(buf, &len, PROC_EVENT_EXIT, 4245, 4245, 0, CN_IDX_PROC + 1, NULL); /* another index */
    put_event(buf, &len, PROC_EVENT_EXIT, 4246, 4246, 1 << 8, CN_IDX_PROC, NULL);
    /* Renames: a name taken, a new program, a thread's name (left out). */
    put_event(buf, &len, PROC_EVENT_COMM, 4247, 4247, 0, CN_IDX_PROC, "pt_data_worker");
    put_event(buf, &len, PROC_EVENT_EXEC, 4248, 4248, 0, CN_IDX_PROC, NULL);
    put_event(buf, &len, PROC_EVENT_COMM, 4249, 4247, 0, CN_IDX_PROC, "pt_thread");
    struct proc_exits x = {0};
    assert_int_equal(proccn_parse(buf, len, &x), 4);
    assert_int_equal(x.n, 2);
    assert_int_equal(x.items[0].pid, 4242);
    assert_int_equal(x.items[0].parent, 4000);
    assert_int_equal(x.items[0].status, SIGBUS);
    assert_int_equal(x.items[0].exit_signal, SIGCHLD);
    assert_int_equal(x.items[0].timestamp_ns, 123456789);
    assert_int_equal(x.items[1].pid, 4246);
    assert_int_equal(x.items[1].status, 1 << 8);
    assert_int_equal(x.nrenames, 2);
    assert_true(x.renames[0].pid == 4247 && !x.renames[0].exec);
    assert_string_equal(x.renames[0].comm, "pt_data_worker");
    assert_true(x.renames[1].pid == 4248 && x.renames[1].exec && !x.renames[1].comm[0]);
    /* Every cut of the bytes is safe, and never reads a cut message. */
    for (size_t cut = 0; cut < len; cut++) {
        struct proc_exits y = {0};
        size_t n = proccn_parse(buf, cut, &y);
        assert_true(n <= 4);
        proc_exits_free(&y);
    }
    /* A header whose length lies. */
    struct nlmsghdr h = {.nlmsg_len = 100000, .nlmsg_type = NLMSG_DONE};
    memcpy(buf, &h, sizeof(h));
    struct proc_exits z = {0};
    assert_int_equal(proccn_parse(buf, len, &z), 0);
    h.nlmsg_len = 2;
    memcpy(buf, &h, sizeof(h));
    assert_int_equal(proccn_parse(buf, len, &z), 0);
    proc_exits_free(&z);
    proc_exits_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_causes),
        cmocka_unit_test(test_exit_of_unmarked_worker),
        cmocka_unit_test(test_holder_named_main),
        cmocka_unit_test(test_main_without_workers),
        cmocka_unit_test(test_oom_rise_is_told_once),
        cmocka_unit_test(test_gone_between_scans),
        cmocka_unit_test(test_mounts_fill_and_churn),
        cmocka_unit_test(test_mount_device_reused),
        cmocka_unit_test(test_mount_keeps_its_container),
        cmocka_unit_test(test_event_lines),
        cmocka_unit_test(test_state_from_model),
        cmocka_unit_test(test_connector_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
