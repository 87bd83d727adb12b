/* Events in one line (model/evline.c): a worker's Bus error with the fill of
 * its container's /dev/shm, full or not, an OOM kill, an exit of unknown
 * cause, what stands out, and which mount an exit is told with (of
 * containerd's containers of one id, its own container's). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"
#include "model/evline.h"
#include "model/evload.h"
#include "report/report.h"
#include "util/jsondoc.h"
#include "util/xalloc.h"

/* A state of a main (100) and a worker (101) in container "abc" (NULL: the
 * host's), and two mounts: the host's /dev/shm and the container's, used of
 * 64 MiB each. */
static void make_state(struct ev_state *st, const char *ctr, uint64_t host_used,
                       uint64_t ctr_used)
{
    memset(st, 0, sizeof(*st));
    st->valid = true;
    st->procs = xcalloc(2, sizeof(*st->procs));
    for (int i = 0; i < 2; i++) {
        struct ev_proc *p = &st->procs[st->nprocs++];
        p->pid = 100 + i;
        snprintf(p->comm, sizeof(p->comm), i ? "pt_data_worker" : "python3");
        p->role = i ? ROLE_WORKER : ROLE_MAIN;
        p->group = 100;
        p->ctr_id = ctr ? xstrdup(ctr) : NULL;
        p->ctr_name = ctr ? xstrdup("trainer") : NULL;
        p->cg = SIZE_MAX;
    }
    st->mounts = xcalloc(2, sizeof(*st->mounts));
    const uint64_t used[2] = {host_used, ctr_used};
    for (int i = 0; i < 2; i++) {
        struct ev_mount *m = &st->mounts[st->nmounts++];
        snprintf(m->id, sizeof(m->id), "0:%d", 40 + i);
        m->path = xstrdup("/dev/shm");
        m->ctr_id = i ? xstrdup("abc") : NULL;
        m->ctr_name = i ? xstrdup("trainer") : NULL;
        m->size_known = true;
        m->size = 64ull << 20;
        m->used = used[i];
        m->used_pct = 100.0 * (double)m->used / (double)m->size;
        m->level = fill_level_of(m->used_pct, 80, 95);
    }
}

static void test_sigbus_full(void **state)
{
    (void)state;
    struct ev_state st;
    make_state(&st, "abc", 1 << 20, 64ull << 20);
    struct event_list l = {0};
    assert_true(events_exit(&st, 101, SIGBUS, 1000.0, false, &l));
    const struct ev_mount *mt = evline_mount(&st, &l.items[0]);
    assert_non_null(mt);
    assert_string_equal(mt->id, "0:41"); /* the container's, not the host's */
    char line[320];
    evline_text(&l.items[0], mt, line, sizeof(line));
    assert_string_equal(line, "worker 101 of main 100 died of SIGBUS: /dev/shm 64.0 of 64.0 MiB "
                              "full [trainer]");
    assert_true(evline_critical(&l.items[0]));
    event_list_free(&l);
    ev_state_free(&st);
}

static void test_sigbus_not_full_host(void **state)
{
    (void)state;
    struct ev_state st;
    make_state(&st, NULL, 900 << 10, 64ull << 20);
    struct event_list l = {0};
    assert_true(events_exit(&st, 101, SIGBUS, 1000.0, false, &l));
    const struct ev_mount *mt = evline_mount(&st, &l.items[0]);
    assert_non_null(mt);
    assert_string_equal(mt->id, "0:40"); /* the host's */
    char line[320];
    evline_text(&l.items[0], mt, line, sizeof(line));
    assert_string_equal(line,
                        "worker 101 of main 100 died of SIGBUS: /dev/shm 900 KiB of 64.0 MiB used");
    /* Sizes under a KiB (a hand-made recording) read as `why` says them. */
    st.mounts[0].size = 900;
    st.mounts[0].used = 512;
    evline_text(&l.items[0], &st.mounts[0], line, sizeof(line));
    assert_string_equal(line, "worker 101 of main 100 died of SIGBUS: /dev/shm 512 B of 900 B used");
    /* Without a mount the line still says the Bus error. */
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_non_null(strstr(line, "died of SIGBUS (a page the tmpfs could not give"));
    event_list_free(&l);
    ev_state_free(&st);
}

static void test_other_ends(void **state)
{
    (void)state;
    struct ev_state st;
    make_state(&st, NULL, 0, 0);
    struct event_list l = {0};
    char line[320];
    assert_true(events_exit(&st, 101, SIGKILL, 1000.0, true, &l));
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line, "worker 101 of main 100 was killed by the OOM killer: the memory "
                              "limit (-m) was hit");
    assert_true(evline_critical(&l.items[0]));
    event_list_clear(&l);
    assert_true(events_exit(&st, 100, 3 << 8, 1000.0, false, &l));
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line, "main 100 (python3) exited with status 3");
    assert_false(evline_critical(&l.items[0]));
    event_list_clear(&l);
    assert_true(events_exit(&st, 101, SIGTERM, 1000.0, false, &l));
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line, "worker 101 of main 100 was killed by SIGTERM");
    assert_false(evline_critical(&l.items[0]));
    event_list_clear(&l);
    /* Gone between two scans: cause unknown. */
    struct ev_state next = {.valid = true};
    events_scan(&st, &next, NULL, 0, NULL, 0, 1, 1001.0, &l);
    assert_true(l.n >= 2); /* both exits, and the mounts gone */
    assert_int_equal(l.items[0].kind, EV_EXIT);
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line, "main 100 (python3) exited, cause unknown");
    event_list_free(&l);
    ev_state_free(&st);
}

static void test_oom_and_recorder(void **state)
{
    (void)state;
    struct event_list l = {0};
    events_recorder(&l, 1.0, "events_off", "process events are not seen: no privilege");
    char line[320];
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line, "process events are not seen: no privilege");
    assert_false(evline_critical(&l.items[0]));
    event_list_free(&l);
    struct ev_state st = {.valid = true};
    st.cgroups = xcalloc(1, sizeof(*st.cgroups));
    st.ncgroups = 1;
    st.cgroups[0].path = xstrdup("/job");
    st.cgroups[0].dir = xstrdup("/sys/fs/cgroup/job");
    st.cgroups[0].known = true;
    st.cgroups[0].kills = 2;
    assert_true(events_oom(&st, 0, true, 3, 4242, "python3", 1.0, &l));
    evline_text(&l.items[0], NULL, line, sizeof(line));
    assert_string_equal(line,
                        "OOM kill in cgroup /job: 4242 (python3) killed, the memory limit was hit");
    assert_true(evline_critical(&l.items[0]));
    event_list_free(&l);
    ev_state_free(&st);
}

/* A recorded mount event may lack its mount's path (evload.h: NULL): the
 * line says '?' there, never hands printf a NULL. */
static void test_no_mount_path(void **state)
{
    (void)state;
    static const struct {
        const char *line, *text;
    } cases[] = {
        {"{\"event\":\"fill\",\"mount_id\":\"0:41\",\"used_bytes\":1024,"
         "\"size_bytes\":2048,\"used_pct\":50,\"level\":\"critical\"}",
         "? is critically full: 1.0 of 2.0 KiB (50.0%)"},
        {"{\"event\":\"segments\",\"mount\":7,\"created\":2,\"removed\":1,\"interval_s\":2}",
         "?: 2 segments created, 1 removed in 2 s"},
        /* An interval below a second is said as it is, not rounded to 0 or 1. */
        {"{\"event\":\"segments\",\"mount\":7,\"created\":2,\"removed\":1,\"interval_s\":0.5}",
         "?: 2 segments created, 1 removed in 0.5 s"},
        {"{\"event\":\"mount\",\"change\":\"appeared\"}", "mount ? appeared"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[128], line[320];
        struct jd *doc = jd_parse(cases[i].line, strlen(cases[i].line), err, sizeof(err));
        assert_non_null(doc);
        struct event e;
        assert_int_equal(evload_build(doc, 1.0, &e, err, sizeof(err)), 0);
        assert_null(e.mount);
        assert_string_equal(evline_text(&e, NULL, line, sizeof(line)), cases[i].text);
        event_clear(&e);
        jd_free(doc);
    }
}

/* In the node view a mount's events name its container, as an exit's do:
 * "/dev/shm is critically full" alone does not say which of a node's
 * containers is about to fail. The host's mount's lines name none. */
static void test_mount_lines_name_container(void **state)
{
    (void)state;
    struct ev_state a, b;
    make_state(&a, NULL, 1 << 20, 1 << 20);
    make_state(&b, NULL, 62ull << 20, 62ull << 20); /* both critical */
    struct ev_churn ch[] = {{"0:40", 1, 0}, {"0:41", 2, 0}};
    const pid_t told[] = {100, 101}; /* the processes' exits: told already */
    struct event_list l = {0};
    events_scan(&a, &b, told, 2, ch, 2, 1, 1000.0, &l);
    assert_int_equal(l.n, 4);
    char line[320];
    assert_string_equal(evline_text(&l.items[0], NULL, line, sizeof(line)),
                        "/dev/shm is critically full: 62.0 of 64.0 MiB (96.9%)");
    assert_string_equal(evline_text(&l.items[1], NULL, line, sizeof(line)),
                        "/dev/shm is critically full: 62.0 of 64.0 MiB (96.9%) [trainer]");
    assert_string_equal(evline_text(&l.items[2], NULL, line, sizeof(line)),
                        "/dev/shm: 1 segment created, 0 removed in 1 s");
    assert_string_equal(evline_text(&l.items[3], NULL, line, sizeof(line)),
                        "/dev/shm: 2 segments created, 0 removed in 1 s [trainer]");
    event_list_clear(&l);
    /* The container's mount goes: by its name, not its 64-digit id. */
    struct ev_state c = {.valid = true};
    events_scan(&a, &c, told, 2, NULL, 0, 1, 1001.0, &l);
    assert_int_equal(l.n, 2);
    assert_string_equal(evline_text(&l.items[0], NULL, line, sizeof(line)), "mount /dev/shm went away");
    assert_string_equal(evline_text(&l.items[1], NULL, line, sizeof(line)),
                        "mount /dev/shm went away in trainer");
    event_list_free(&l);
    ev_state_free(&a);
    ev_state_free(&b);
}

/* ctr's "web" in the namespaces probe (its /dev/shm full) and other (1 MiB
 * used): a Bus error in other/web is told with other/web's mount, not with
 * the fullest mount of the id; live, and read back from its line. A line
 * that does not say the namespace (an older recording) takes the fullest
 * mount of its container's id. */
static void test_same_id_two_namespaces(void **state)
{
    (void)state;
    struct ev_state st = {.valid = true};
    st.procs = xcalloc(1, sizeof(*st.procs));
    st.nprocs = 1;
    st.procs[0] = (struct ev_proc){.pid = 101,
                                   .comm = "pt_data_worker",
                                   .role = ROLE_WORKER,
                                   .group = 100,
                                   .ctr_id = xstrdup("web"),
                                   .ctr_name = xstrdup("web"),
                                   .ctr_ns = xstrdup("other"),
                                   .cg = SIZE_MAX};
    st.mounts = xcalloc(2, sizeof(*st.mounts));
    const char *const ns[] = {"probe", "other"};
    for (int i = 0; i < 2; i++) {
        struct ev_mount *m = &st.mounts[st.nmounts++];
        snprintf(m->id, sizeof(m->id), "0:%d", 41 + i);
        m->path = xstrdup("/dev/shm");
        m->ctr_id = xstrdup("web");
        m->ctr_name = xstrdup("web");
        m->ctr_ns = xstrdup(ns[i]);
        m->size_known = true;
        m->size = 64ull << 20;
        m->used = i ? 1ull << 20 : 64ull << 20;
        m->used_pct = 100.0 * (double)m->used / (double)m->size;
        m->level = fill_level_of(m->used_pct, 80, 95);
    }
    struct event_list l = {0};
    assert_true(events_exit(&st, 101, SIGBUS, 1000.0, false, &l));
    assert_string_equal(l.items[0].container_ns, "other");
    assert_string_equal(evline_mount(&st, &l.items[0])->id, "0:42");
    /* Its line names it with its namespace, as do the mounts' lines. */
    char text[320];
    assert_string_equal(evline_text(&l.items[0], evline_mount(&st, &l.items[0]), text, sizeof(text)),
                        "worker 101 of main 100 died of SIGBUS: /dev/shm 1.0 of 64.0 MiB used "
                        "[other/web]");
    struct ev_state gone = {.valid = true};
    const pid_t told[] = {101};
    struct event_list ml = {0};
    events_scan(&st, &gone, told, 1, NULL, 0, 1, 1001.0, &ml);
    assert_int_equal(ml.n, 2);
    assert_string_equal(evline_text(&ml.items[0], NULL, text, sizeof(text)),
                        "mount /dev/shm went away in probe/web");
    assert_string_equal(evline_text(&ml.items[1], NULL, text, sizeof(text)),
                        "mount /dev/shm went away in other/web");
    event_list_free(&ml);
    /* The exporter counts a death of each "web" on its own, its series
     * labelled with its namespace. */
    free(st.procs[0].ctr_ns);
    st.procs[0].ctr_ns = xstrdup("probe");
    assert_true(events_exit(&st, 101, SIGBUS, 1000.5, false, &l));
    free(st.procs[0].ctr_ns);
    st.procs[0].ctr_ns = NULL;
    assert_true(events_exit(&st, 101, SIGBUS, 1000.6, false, &l));
    struct death_counts dc = {0};
    death_counts_add(&dc, &l);
    assert_int_equal(dc.n, 3);
    struct buf prom;
    buf_init(&prom);
    report_prometheus_deaths(&prom, &dc);
    static const char *const series[] = {
        "\nshmwatch_process_deaths_total{signal=\"SIGBUS\",role=\"worker\",container=\"web\","
        "containerd_namespace=\"other\"} 1\n",
        "\nshmwatch_process_deaths_total{signal=\"SIGBUS\",role=\"worker\",container=\"web\","
        "containerd_namespace=\"probe\"} 1\n",
        "\nshmwatch_process_deaths_total{signal=\"SIGBUS\",role=\"worker\",container=\"web\"} 1\n",
    };
    for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++)
        if (!strstr(prom.data, series[i]))
            fail_msg("no %s in %s", series[i], prom.data);
    buf_free(&prom);
    death_counts_free(&dc);

    struct buf line;
    buf_init(&line);
    report_event_json(&line, &l.items[0]);
    assert_non_null(strstr(line.data, ",\"containerd_namespace\":\"other\"}"));
    char err[128];
    struct jd *doc = jd_parse(line.data, line.len, err, sizeof(err));
    assert_non_null(doc);
    struct event e;
    assert_int_equal(evload_build(doc, 1000.0, &e, err, sizeof(err)), 0);
    assert_true(e.container_ns_known);
    assert_string_equal(evline_mount(&st, &e)->id, "0:42");
    event_clear(&e);
    jd_free(doc);

    static const char older[] = "{\"event\":\"exit\",\"pid\":101,\"container\":\"web\","
                                "\"container_name\":\"web\",\"signal\":\"SIGBUS\","
                                "\"cause\":\"sigbus\"}";
    doc = jd_parse(older, strlen(older), err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(evload_build(doc, 1000.0, &e, err, sizeof(err)), 0);
    assert_false(e.container_ns_known);
    assert_string_equal(evline_mount(&st, &e)->id, "0:41");
    char *where = evline_where(&e); /* the namespace not said: by its name */
    assert_string_equal(where, "web");
    free(where);
    event_clear(&e);
    jd_free(doc);
    buf_free(&line);
    event_list_free(&l);
    ev_state_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigbus_full),
        cmocka_unit_test(test_sigbus_not_full_host),
        cmocka_unit_test(test_other_ends),
        cmocka_unit_test(test_oom_and_recorder),
        cmocka_unit_test(test_no_mount_path),
        cmocka_unit_test(test_mount_lines_name_container),
        cmocka_unit_test(test_same_id_two_namespaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
