/* model/why.c and report/whyreport.c on recordings written by hand: JSON
 * lines as the recorder writes them (doc/recording.md), cut to the fields
 * why reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/budget.h"
#include "model/capacity.h"
#include "model/why.h"
#include "report/whyreport.h"
#include "util/jsondoc.h"

#define MiB (UINT64_C(1) << 20)
#define T0 1764900000.0 /* 2025-12-05T02:00:00Z */

/* A recording in memory: lines parsed at once, a NULL document where a
 * line is not JSON (a damaged record). */
struct rec_set {
    struct why_rec recs[64];
    struct jd *docs[64];
    char events[64][16];
    size_t n;
};

static const struct jd *load(void *ctx, size_t i)
{
    struct rec_set *s = ctx;
    return s->docs[i];
}

__attribute__((format(printf, 3, 4))) static void add(struct rec_set *s, double t,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = str_vprintf(fmt, ap);
    va_end(ap);
    char err[128];
    size_t i = s->n++;
    s->docs[i] = jd_parse(line, strlen(line), err, sizeof(err));
    s->recs[i].t = t;
    const char *ev = s->docs[i] ? jd_getstr(s->docs[i], "event", NULL) : NULL;
    snprintf(s->events[i], sizeof(s->events[i]), "%s", ev ? ev : "");
    s->recs[i].snapshot = s->docs[i] ? jd_get(s->docs[i], "schema") != NULL : false;
    s->recs[i].event = s->events[i];
    free(line);
}

static void set_free(struct rec_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        jd_free(s->docs[i]);
}

static void find(struct rec_set *s, const struct why_filter *f, struct why_result *r)
{
    struct why_source src = {.recs = s->recs, .n = s->n, .doc = load, .ctx = s};
    struct why_filter none = {0};
    why_find(&src, f ? f : &none, r);
}

/* A snapshot of one mount "m1", 64 MiB at /dev/shm, under a 512 MiB
 * cgroup limit (or the machine's 512 MiB, limit_source "memtotal"); what is
 * not set is empty (no container, no segment, process or group, no loader,
 * reason "interval"). */
struct snap {
    const char *reason;
    const char *ctr;          /* the mount's container's id, named trainer */
    const char *ctr_host;     /* else nameless, with this hostname */
    uint64_t used, pending;
    const char *segs, *procs, *groups; /* the members of JSON arrays */
    uint64_t app;
    const char *loader;       /* the budget's loader: a JSON object */
    uint64_t rec_shm, rec_mem;
    const char *limit_source; /* NULL: "cgroup" */
    uint64_t other;           /* the other shm mounts' used bytes the headroom counts */
};

static void snapshot(struct rec_set *s, double t, struct snap p)
{
    char containers[256];
    if (p.ctr && p.ctr_host)
        snprintf(containers, sizeof(containers),
                 "[{\"id\":\"%s\",\"name\":null,\"hostname\":\"%s\",\"pod\":null,\"pid\":7}]",
                 p.ctr, p.ctr_host);
    else if (p.ctr)
        snprintf(containers, sizeof(containers),
                 "[{\"id\":\"%s\",\"name\":\"trainer\",\"pod\":null,\"pid\":7}]", p.ctr);
    else
        snprintf(containers, sizeof(containers), "[]");
    add(s, t,
        "{\"schema\":1,\"time\":\"x\",\"reason\":\"%s\",\"mounts\":[{\"id\":\"m1\","
        "\"path\":\"/dev/shm\",\"size_bytes\":%llu,\"used_bytes\":%llu,\"pending_bytes\":%llu,"
        "\"containers\":%s,\"cgroup\":{\"version\":1,\"path\":\"/test/job\"},"
        "\"budget\":{\"limit_bytes\":%llu,\"limit_source\":\"%s\",\"shm_used_bytes\":%llu,"
        "\"app_bytes\":%llu,\"headroom_bytes\":%llu,\"recommended_shm_size_bytes\":%llu,"
        "\"recommended_memory_bytes\":%llu,\"loader\":%s,\"shm_other_bytes\":%llu}}],"
        "\"segments\":[%s],\"processes\":[%s],\"groups\":[%s],\"budget\":null,\"cgroup\":null}",
        p.reason ? p.reason : "interval", (unsigned long long)(64 * MiB),
        (unsigned long long)p.used, (unsigned long long)p.pending, containers,
        (unsigned long long)(512 * MiB), p.limit_source ? p.limit_source : "cgroup",
        (unsigned long long)p.used, (unsigned long long)p.app,
        (unsigned long long)(512 * MiB - p.used - p.app - p.other), (unsigned long long)p.rec_shm,
        (unsigned long long)p.rec_mem, p.loader ? p.loader : "null", (unsigned long long)p.other,
        p.segs ? p.segs : "",
        p.procs ? p.procs : "", p.groups ? p.groups : "");
}

/* An exit event; what is not set is null. */
struct exit_ev {
    int pid;
    const char *comm, *role;
    int group;                /* its DataLoader main, 0: null */
    const char *ctr, *ctr_name;
    const char *code;         /* the exit status as JSON */
    const char *signal, *cause;
};

static void exit_event(struct rec_set *s, double t, struct exit_ev e)
{
    char group[24] = "null", ctr[80] = "null", name[40] = "null", sig[24] = "null";
    if (e.group)
        snprintf(group, sizeof(group), "%d", e.group);
    if (e.ctr)
        snprintf(ctr, sizeof(ctr), "\"%s\"", e.ctr);
    if (e.ctr_name)
        snprintf(name, sizeof(name), "\"%s\"", e.ctr_name);
    if (e.signal)
        snprintf(sig, sizeof(sig), "\"%s\"", e.signal);
    add(s, t,
        "{\"event\":\"exit\",\"time\":\"x\",\"pid\":%d,\"comm\":\"%s\",\"role\":\"%s\","
        "\"group\":%s,\"container\":%s,\"container_name\":%s,\"exit_code\":%s,"
        "\"signal\":%s,\"core\":false,\"cause\":\"%s\"}",
        e.pid, e.comm, e.role, group, ctr, name, e.code ? e.code : "null", sig, e.cause);
}

/* How many ends why finds in s with filter f. */
static size_t count_ends(struct rec_set *s, const struct why_filter *f)
{
    struct why_result r;
    find(s, f, &r);
    size_t n = r.n;
    why_result_free(&r);
    return n;
}

/* r as why reports it over T0 - 60 .. T0 + 60: the text into text (a new
 * buf, the caller's to free), the JSON parsed (the caller's to free; NULL
 * when it does not parse). */
static struct jd *report(const struct why_result *r, struct buf *text)
{
    struct whyreport_in in = {.r = r, .from = T0 - 60, .to = T0 + 60};
    buf_init(text);
    whyreport_text(text, &in);
    struct buf b;
    buf_init(&b);
    whyreport_json(&b, &in);
    char err[128];
    struct jd *j = jd_parse(b.data, b.len, err, sizeof(err));
    buf_free(&b);
    return j;
}

static const char *const job_procs =
    "{\"pid\":100,\"comm\":\"python3\",\"role\":\"main\",\"group\":100,\"container\":null},"
    "{\"pid\":101,\"comm\":\"pt_data_worker\",\"role\":\"worker\",\"group\":100,"
    "\"container\":null},"
    "{\"pid\":102,\"comm\":\"pt_data_worker\",\"role\":\"worker\",\"group\":100,"
    "\"container\":null}";
static const char *const job_group =
    "{\"main_pid\":100,\"workers\":[101,102],\"shm_managers\":[],\"shm_bytes\":67000000}";
/* The group after worker 101 has gone. */
static const char *const one_worker = "{\"main_pid\":100,\"workers\":[102],\"shm_managers\":[]}";
/* The job's batches: 63 MiB made by worker 101, held by its main. */
static const char *const job_segment =
    "{\"mount_id\":\"m1\",\"name\":\"torch_100_1\",\"alloc_bytes\":66060288,"
    "\"state\":\"hidden\",\"creator_pid\":101,\"holders\":[{\"pid\":100}],\"group\":100}";
/* The loader with five batches of 12.6 MiB in flight. */
static const char *const loader_five =
    "{\"main_pid\":100,\"batch_shm_bytes\":13250560,\"workers\":2,\"batches_in_flight\":5,"
    "\"prefetch_factor\":2}";

/* A worker's Bus error on a full 64 MiB mount, then its main's exit. */
static void sigbus_job(struct rec_set *s, const char *ctr)
{
    const char *loader = "{\"main_pid\":100,\"batch_shm_bytes\":13246464,\"workers\":2,"
                         "\"batches_in_flight\":5,\"prefetch_factor\":2}";
    snapshot(s, T0, (struct snap){.ctr = ctr, .used = 40 * MiB, .segs = job_segment,
                                  .procs = job_procs, .groups = job_group, .app = 2 * MiB,
                                  .loader = loader, .rec_shm = 96 * MiB, .rec_mem = 118 * MiB});
    snapshot(s, T0 + 1, (struct snap){.ctr = ctr, .used = 64 * MiB - 8192, .segs = job_segment,
                                      .procs = job_procs, .groups = job_group, .app = 3 * MiB,
                                      .loader = loader, .rec_shm = 96 * MiB, .rec_mem = 119 * MiB});
    add(s, T0 + 1.5,
        "{\"event\":\"fill\",\"time\":\"x\",\"mount_id\":\"m1\",\"used_bytes\":%llu,"
        "\"size_bytes\":%llu,\"level\":\"critical\"}",
        (unsigned long long)(64 * MiB), (unsigned long long)(64 * MiB));
    exit_event(s, T0 + 1.7, (struct exit_ev){.pid = 101, .comm = "pt_data_worker", .role = "worker",
                                             .group = 100, .ctr = ctr,
                                             .ctr_name = ctr ? "trainer" : NULL, .signal = "SIGBUS",
                                             .cause = "sigbus"});
    snapshot(s, T0 + 1.8, (struct snap){.ctr = ctr, .used = 50 * MiB, .segs = job_segment,
                                        .procs = job_procs, .groups = job_group, .app = 3 * MiB,
                                        .loader = loader, .rec_shm = 96 * MiB,
                                        .rec_mem = 119 * MiB});
    /* Its worker 102, ended by the main's shutdown: a clean exit. */
    exit_event(s, T0 + 2.0, (struct exit_ev){.pid = 102, .comm = "pt_data_worker", .role = "worker",
                                             .group = 100, .code = "0", .cause = "exit"});
    exit_event(s, T0 + 2.1, (struct exit_ev){.pid = 100, .comm = "python3", .role = "main",
                                             .group = 100, .code = "1", .cause = "exit"});
    snapshot(s, T0 + 3, (struct snap){.ctr = ctr, .app = 1 * MiB, .rec_shm = 96 * MiB,
                                      .rec_mem = 119 * MiB});
}

/* A budget whose headroom counts the cgroup's other shm mounts (30 MiB on
 * a /run/shm beside it): the budget then keeps them, with the app and shm
 * the most of the snapshots before and at the end, and says them. */
static void test_budget_other_shm(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0, (struct snap){.used = 20 * MiB, .app = 10 * MiB, .other = 30 * MiB,
                                   .procs = job_procs});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 100, .comm = "python3", .role = "main",
                                            .signal = "SIGKILL", .cause = "oom_kill"});
    snapshot(&s, T0 + 2, (struct snap){.used = 20 * MiB, .app = 12 * MiB, .other = 28 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    const struct why_death *d = &r.d[0];
    assert_true(d->has_budget);
    assert_int_equal(d->app, 12 * MiB);
    assert_int_equal(d->shm_other, 30 * MiB);
    assert_int_equal(d->headroom, 512 * MiB - 12 * MiB - 20 * MiB - 30 * MiB);
    struct buf b;
    struct jd *j = report(&r, &b);
    if (!strstr(b.data, "budget then: app 12.0 MiB + shm 20.0 MiB + other shm 30.0 MiB of 512 MiB") ||
        !strstr(b.data, "headroom 450 MiB"))
        fail_msg("the budget then leaves the other shm out: %s", b.data);
    buf_free(&b);
    jd_free(j);
    why_result_free(&r);
    set_free(&s);
}

/* Times are said with four digits of year, whatever the year. */
static void test_fmt_time(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(why_fmt_time(b, sizeof(b), 1796440327.0), "2026-12-05 03:12:07 UTC");
    assert_string_equal(why_fmt_time(b, sizeof(b), -59042995200.0), "0099-01-01 00:00:00 UTC");
}

static void test_sigbus(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    sigbus_job(&s, NULL);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    const struct why_death *d = &r.d[0];
    assert_true(d->has_pid);
    assert_int_equal(d->pid, 101);
    assert_string_equal(d->role, "worker");
    assert_int_equal(d->group, 100);
    assert_string_equal(d->cause, "sigbus");
    assert_true(d->has_mount);
    assert_string_equal(d->mount_path, "/dev/shm");
    assert_int_equal(d->used_before, 64 * MiB - 8192);
    assert_int_equal(d->used_at, 50 * MiB);
    assert_int_equal(d->used_peak, 64 * MiB); /* the fill event's */
    assert_true(d->full);
    assert_non_null(strstr(d->diagnosis,
                           "/dev/shm was full, 64.0 of 64.0 MiB: a worker writing a batch touched "
                           "a page the tmpfs could not give, which is the Bus error"));
    /* The group, biggest on the mount. */
    assert_int_equal(d->ntop, 1);
    assert_int_equal(d->top[0].main_pid, 100);
    assert_int_equal(d->top[0].workers, 2);
    /* The advice: the loader's arithmetic, as plan --observe makes it. */
    struct capacity_input in = {.observed_batch_shm = 13246464, .workers = 2, .prefetch = 2};
    struct capacity_result cr;
    char *cause = NULL;
    assert_int_equal(capacity_compute(&in, &cr, &cause), 0);
    assert_true(d->from_loader);
    assert_int_equal(d->need_shm, cr.shm_peak);
    assert_int_equal(d->rec_shm, cr.rec_shm_size);
    assert_true(d->rec_shm > 64 * MiB);
    uint64_t margin;
    assert_int_equal(d->rec_memory, budget_rec_memory(3 * MiB, cr.rec_shm_size, &margin));
    /* The main's exit follows it; the clean exit of the other worker is no
     * abnormal end. */
    const struct why_death *m = &r.d[1];
    assert_int_equal(m->pid, 100);
    assert_string_equal(m->cause, "exit");
    assert_int_equal(m->exit_code, 1);
    assert_int_equal(m->after_pid, 101);
    assert_non_null(strstr(m->diagnosis, "exited with status 1"));
    assert_non_null(strstr(m->diagnosis, "followed the end of 101 (SIGBUS)"));
    /* Nothing left behind: the last snapshot has no segment. */
    assert_true(d->has_left);
    assert_int_equal(d->left_segments, 0);
    why_result_free(&r);
    set_free(&s);
}

static void test_sigbus_container(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    sigbus_job(&s, id);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.d[0].container, id);
    assert_string_equal(r.d[0].container_name, "trainer");
    assert_non_null(strstr(r.d[0].diagnosis, "the /dev/shm of trainer was full, 64.0 of 64.0 MiB"));
    why_result_free(&r);

    /* --container by name, by an id's prefix; a stranger's name finds
     * nothing. --pid: the main's job takes its worker's end too. */
    static const struct {
        struct why_filter f;
        size_t n;
    } filters[] = {
        {{.container = "trainer"}, 1},
        {{.container = "0123456789abcdef"}, 1},
        {{.container = "0123456789a"}, 0}, /* too short to be a prefix */
        {{.container = "other"}, 0},
        {{.pid = 100}, 2},
        {{.pid = 101}, 1},
    };
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        assert_int_equal(count_ends(&s, &filters[i].f), filters[i].n);
    /* The window's start cuts. */
    struct why_filter w = {.from = T0 + 2.05};
    find(&s, &w, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.d[0].pid, 100);
    why_result_free(&r);
    set_free(&s);
}

static void test_oom(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *procs = "{\"pid\":300,\"comm\":\"writer\",\"role\":\"holder\",\"group\":null}";
    char segs[256];
    snprintf(segs, sizeof(segs),
             "{\"mount_id\":\"m1\",\"name\":\"big\",\"alloc_bytes\":%llu,\"state\":\"in_use\","
             "\"creator_pid\":null,\"holders\":[{\"pid\":300}],\"group\":null}",
             (unsigned long long)(56 * MiB));
    snapshot(&s, T0, (struct snap){.used = 56 * MiB, .segs = segs, .procs = procs, .app = 7 * MiB,
                                   .rec_shm = 84 * MiB, .rec_mem = 110 * MiB});
    add(&s, T0 + 0.4,
        "{\"event\":\"oom_kill\",\"time\":\"x\",\"cgroup\":\"/test/oom\",\"container\":null,"
        "\"container_name\":null,\"kills\":1,\"victim\":300,\"victim_comm\":\"writer\"}");
    exit_event(&s, T0 + 0.5, (struct exit_ev){.pid = 300, .comm = "writer", .role = "holder",
                                              .signal = "SIGKILL", .cause = "oom_kill"});
    snapshot(&s, T0 + 0.6, (struct snap){.used = 56 * MiB, .app = 1 * MiB, .rec_shm = 84 * MiB,
                                         .rec_mem = 110 * MiB});
    /* An OOM kill whose victim the recorder did not know: a death of its own. */
    add(&s, T0 + 5,
        "{\"event\":\"oom_kill\",\"time\":\"x\",\"cgroup\":\"/test/oom\",\"container\":null,"
        "\"container_name\":null,\"kills\":1,\"victim\":null,\"victim_comm\":null}");
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    const struct why_death *d = &r.d[0];
    assert_int_equal(d->pid, 300);
    assert_string_equal(d->cause, "oom_kill");
    assert_string_equal(d->cgroup, "/test/oom");
    assert_true(d->has_budget);
    assert_int_equal(d->app, 7 * MiB);
    assert_int_equal(d->shm_used, 56 * MiB);
    assert_non_null(strstr(d->diagnosis, "the OOM killer of cgroup /test/oom fired with app "
                                         "7.0 MiB + shm 56.0 MiB of 512 MiB"));
    assert_int_equal(d->rec_shm, 84 * MiB);
    assert_int_equal(d->rec_memory, 110 * MiB);
    assert_false(r.d[1].has_pid);
    assert_string_equal(r.d[1].cause, "oom_kill");
    why_result_free(&r);
    set_free(&s);
}

/* An OOM kill event is its victim's exit's when within 10 s of it, before
 * or after; one further off is an end of its own. */
static void test_oom_near(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *oom = "{\"event\":\"oom_kill\",\"time\":\"x\",\"cgroup\":\"%s\",\"kills\":1,"
                      "\"victim\":%d,\"victim_comm\":\"eater\"}";
    add(&s, T0, oom, "/far", 999);
    exit_event(&s, T0 + 20, (struct exit_ev){.pid = 600, .comm = "eater", .role = "holder",
                                             .signal = "SIGKILL", .cause = "oom_kill"});
    add(&s, T0 + 25, oom, "/near", 600);
    add(&s, T0 + 40, oom, "/late", 600);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    static const struct {
        int64_t pid;
        const char *cgroup;
    } want[] = {{999, "/far"}, {600, "/near"}, {600, "/late"}};
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.d[i].pid, want[i].pid);
        assert_string_equal(r.d[i].cgroup, want[i].cgroup);
    }
    why_result_free(&r);
    set_free(&s);
}

/* The diagnoses' plainer forms: a Bus error whose mount no snapshot shows,
 * an OOM kill no record names the cgroup of, and one under the machine's
 * memory rather than a cgroup's limit. */
static void test_without_facts(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    exit_event(&s, T0, (struct exit_ev){.pid = 400, .comm = "writer", .role = "holder",
                                        .signal = "SIGBUS", .cause = "sigbus"});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 401, .comm = "eater", .role = "holder",
                                            .signal = "SIGKILL", .cause = "oom_kill"});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    assert_non_null(strstr(r.d[0].diagnosis, "a Bus error (SIGBUS), and no snapshot before it "
                                             "shows its /dev/shm; on a tmpfs it is a page the "
                                             "tmpfs could not give"));
    assert_int_equal(r.d[1].pid, 401);
    assert_true(strncmp(r.d[1].diagnosis, "the OOM killer fired", 20) == 0 &&
                !strstr(r.d[1].diagnosis, " with app "));
    why_result_free(&r);
    set_free(&s);

    s = (struct rec_set){.n = 0};
    const char *procs = "{\"pid\":300,\"comm\":\"writer\",\"role\":\"holder\",\"group\":null}";
    const char *segs = "{\"mount_id\":\"m1\",\"name\":\"big\",\"alloc_bytes\":8388608,"
                       "\"state\":\"in_use\",\"creator_pid\":null,\"holders\":[{\"pid\":300}],"
                       "\"group\":null}";
    snapshot(&s, T0, (struct snap){.used = 8 * MiB, .segs = segs, .procs = procs, .app = 400 * MiB,
                                   .limit_source = "memtotal"});
    add(&s, T0 + 0.4,
        "{\"event\":\"oom_kill\",\"time\":\"x\",\"cgroup\":null,\"container\":null,"
        "\"container_name\":null,\"kills\":1,\"victim\":300,\"victim_comm\":\"writer\"}");
    exit_event(&s, T0 + 0.5, (struct exit_ev){.pid = 300, .comm = "writer", .role = "holder",
                                              .signal = "SIGKILL", .cause = "oom_kill"});
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_non_null(strstr(r.d[0].diagnosis, "the OOM killer of cgroup /test/job fired with "
                                             "app 400 MiB + shm 8.0 MiB (the machine's 512 MiB)"));
    why_result_free(&r);
    set_free(&s);
}

/* A file_system job: main 200, worker 201, shm manager 202. */
static const char fs_job_procs[] =
    "{\"pid\":200,\"comm\":\"python3\",\"role\":\"main\",\"group\":200},"
    "{\"pid\":201,\"comm\":\"python3\",\"role\":\"worker\",\"group\":200},"
    "{\"pid\":202,\"comm\":\"torch_shm_manag\",\"role\":\"shm_manager\",\"group\":200}";
static const char fs_job_group[] = "{\"main_pid\":200,\"workers\":[201],\"shm_managers\":[202]}";

/* A file_system job killed with SIGKILL: main, worker, shm manager; its
 * named batches stay behind as orphans. */
static void test_killed_leftovers(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    char held[512], left[512];
    snprintf(held, sizeof(held),
             "{\"mount_id\":\"m1\",\"name\":\"torch_201_1\",\"alloc_bytes\":%llu,\"state\":"
             "\"in_use\",\"creator_pid\":201,\"holders\":[{\"pid\":200}],\"group\":200},"
             "{\"mount_id\":\"m1\",\"name\":\"torch_201_2\",\"alloc_bytes\":%llu,\"state\":"
             "\"in_use\",\"creator_pid\":201,\"holders\":[{\"pid\":200}],\"group\":200}",
             (unsigned long long)(4 * MiB), (unsigned long long)(4 * MiB));
    snprintf(left, sizeof(left),
             "{\"mount_id\":\"m1\",\"name\":\"torch_201_1\",\"alloc_bytes\":%llu,\"state\":"
             "\"orphan\",\"creator_pid\":201,\"holders\":[],\"group\":null},"
             "{\"mount_id\":\"m1\",\"name\":\"torch_201_2\",\"alloc_bytes\":%llu,\"state\":"
             "\"unheld\",\"creator_pid\":201,\"holders\":[],\"group\":null},"
             "{\"mount_id\":\"m1\",\"name\":\"psm_12345678\",\"alloc_bytes\":4096,\"state\":"
             "\"unheld\",\"creator_pid\":null,\"holders\":[],\"group\":null}",
             (unsigned long long)(4 * MiB), (unsigned long long)(4 * MiB));
    snapshot(&s, T0, (struct snap){.used = 8 * MiB, .segs = held, .procs = fs_job_procs,
                                   .groups = fs_job_group, .app = MiB, .rec_shm = 64 * MiB,
                                   .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 200, .comm = "python3", .role = "main",
                                            .group = 200, .signal = "SIGKILL", .cause = "signal"});
    exit_event(&s, T0 + 1.01, (struct exit_ev){.pid = 201, .comm = "python3", .role = "worker",
                                               .group = 200, .signal = "SIGKILL",
                                               .cause = "signal"});
    exit_event(&s, T0 + 1.02, (struct exit_ev){.pid = 202, .comm = "torch_shm_manag",
                                               .role = "shm_manager", .group = 200,
                                               .signal = "SIGKILL", .cause = "signal"});
    /* A damaged line between them is left out. */
    add(&s, T0 + 1.03, "{\"event\":\"exit\",\"time\":");
    snapshot(&s, T0 + 1.1, (struct snap){.used = 8 * MiB, .segs = left, .app = MiB,
                                         .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    snapshot(&s, T0 + 3, (struct snap){.used = 8 * MiB, .segs = left, .app = MiB,
                                       .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    const struct why_death *m = &r.d[0];
    assert_int_equal(m->pid, 200);
    assert_string_equal(m->cause, "signal");
    assert_string_equal(m->signal, "SIGKILL");
    assert_int_equal(m->after_pid, 0);
    assert_int_equal(m->left_segments, 2);
    assert_int_equal(m->left_bytes, 8 * MiB);
    assert_non_null(strstr(m->diagnosis, "killed by SIGKILL"));
    assert_non_null(strstr(m->diagnosis, "Its job left 2 segments (8.0 MiB) that nobody holds: "
                                         "orphans since 02:00:01"));
    const struct why_death *g = &r.d[2];
    assert_string_equal(g->role, "shm_manager");
    assert_int_equal(g->after_pid, 200);
    assert_non_null(strstr(g->diagnosis, "The shm manager died: its job's 8.0 MiB of batches are "
                                         "orphans since 02:00:01"));
    /* The worker follows the main and does not repeat the leftovers. */
    assert_null(strstr(r.d[1].diagnosis, "orphans"));

    /* The report: the paragraph in words and the JSON fields. */
    struct buf b;
    struct jd *j = report(&r, &b);
    assert_non_null(strstr(b.data, "3 abnormal ends between"));
    assert_non_null(strstr(b.data, "main 200 (python3): killed by SIGKILL at 2025-12-05 02:00:01 UTC"));
    assert_non_null(strstr(b.data, "left behind: 2 segments, 8.0 MiB, nobody holding them, since "
                                   "02:00:01"));
    buf_free(&b);
    assert_non_null(j);
    const struct jd *d0 = jd_at(jd_get(j, "deaths"), 0);
    static const char *const fields[] = {"pid", "comm", "role", "group", "container", "pod",
                                         "time", "cause", "signal", "mount", "budget_at",
                                         "diagnosis", "left_behind", "advice"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        assert_non_null(jd_get(d0, fields[i]));
    assert_string_equal(jd_getstr(d0, "time", ""), "2025-12-05T02:00:01Z");
    assert_int_equal(jd_getint(jd_get(d0, "left_behind"), "segments", 0), 2);
    assert_int_equal(jd_getint(jd_get(d0, "left_behind"), "bytes", 0), 8 * MiB);
    assert_int_equal(jd_getint(jd_get(d0, "mount"), "used_bytes_before", 0), 8 * MiB);
    assert_int_equal(jd_getint(jd_get(d0, "advice"), "recommended_shm_size_bytes", 0), 64 * MiB);
    assert_string_equal(jd_getstr(jd_get(j, "window"), "from", ""), "2025-12-05T01:59:00Z");
    assert_int_equal(jd_get(j, "warnings")->type, JD_ARR);
    jd_free(j);
    why_result_free(&r);
    set_free(&s);
}

/* The recording stops during the scan under way when the job's shm manager
 * dies: the manager's end sorts after that scan's snapshot and none follows.
 * That snapshot shows the job ended (no group of its main): its leftovers
 * are the manager's; one that still shows the group tells nothing of them. */
static void manager_in_last_scan(bool group_shown, uint64_t want_left)
{
    struct rec_set s = {.n = 0};
    const char *held = "{\"mount_id\":\"m1\",\"name\":\"torch_201_1\",\"alloc_bytes\":4194304,"
                       "\"state\":\"in_use\",\"creator_pid\":201,\"holders\":[{\"pid\":200}],"
                       "\"group\":200}";
    const char *left = "{\"mount_id\":\"m1\",\"name\":\"torch_201_1\",\"alloc_bytes\":4194304,"
                       "\"state\":\"unheld\",\"creator_pid\":201,\"holders\":[],\"group\":null}";
    snapshot(&s, T0, (struct snap){.used = 4 * MiB, .segs = held, .procs = fs_job_procs,
                                   .groups = fs_job_group, .app = MiB});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 200, .comm = "python3", .role = "main",
                                            .group = 200, .signal = "SIGKILL", .cause = "signal"});
    snapshot(&s, T0 + 1.05, (struct snap){.reason = "event", .used = 4 * MiB, .segs = left,
                                          .groups = group_shown ? fs_job_group : NULL, .app = MiB});
    exit_event(&s, T0 + 1.2, (struct exit_ev){.pid = 202, .comm = "torch_shm_manag",
                                              .role = "shm_manager", .group = 200,
                                              .signal = "SIGKILL", .cause = "signal"});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    const struct why_death *g = &r.d[1];
    assert_string_equal(g->role, "shm_manager");
    assert_int_equal(g->left_segments, want_left);
    assert_int_equal(g->left_bytes, want_left * 4 * MiB);
    assert_true(!strstr(g->diagnosis,
                        "The shm manager died: its job's 4.0 MiB of batches are orphans "
                        "since 02:00:01") == !want_left);
    why_result_free(&r);
    set_free(&s);
}

static void test_manager_dies_in_last_scan(void **state)
{
    (void)state;
    manager_in_last_scan(false, 1);
    manager_in_last_scan(true, 0);
}

/* What is no abnormal end, and a cause the recorder could not see. */
static void test_normal_and_unknown(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0, (struct snap){.procs = job_procs, .groups = job_group, .app = MiB,
                                   .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 100, .comm = "python3", .role = "main",
                                            .group = 100, .code = "0", .cause = "exit"});
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 400, .comm = "cat", .role = "holder",
                                            .cause = "unknown"});
    add(&s, T0 + 1,
        "{\"event\":\"segments\",\"time\":\"x\",\"mount_id\":\"m1\",\"created\":3,\"removed\":3}");
    exit_event(&s, T0 + 2, (struct exit_ev){.pid = 102, .comm = "pt_data_worker", .role = "worker",
                                            .group = 100, .cause = "unknown"});
    add(&s, T0 + 3, "{\"event\":\"exit\",\"time\":\"x\",\"pid\":5,\"cause\":\"strange\"}");
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.d[0].pid, 102);
    assert_string_equal(r.d[0].cause, "unknown");
    assert_non_null(strstr(r.d[0].diagnosis, "the cause is unknown"));
    assert_null(strstr(r.d[0].diagnosis, "likely")); /* the mount was not full */
    /* No snapshot after it: nothing to say about leftovers. */
    assert_false(r.d[0].has_left);
    why_result_free(&r);
    set_free(&s);
}

/* A loader that dies at its first batches: its worker 101's SIGBUS comes
 * before any snapshot showed it (the mount was empty), the snapshot taken
 * for it shows loader (rec_shm its budget's recommendation), and worker
 * 102's SIGBUS follows. */
static void dying_job(struct rec_set *s, const char *loader, uint64_t rec_shm)
{
    snapshot(s, T0, (struct snap){.app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    exit_event(s, T0 + 0.5, (struct exit_ev){.pid = 101, .comm = "pt_data_worker",
                                              .role = "worker", .group = 100, .signal = "SIGBUS",
                                              .cause = "sigbus"});
    snapshot(s, T0 + 0.6, (struct snap){.reason = "event", .used = 60 * MiB,
                                        .segs = job_segment, .procs = job_procs,
                                        .groups = one_worker, .app = 3 * MiB, .loader = loader,
                                        .rec_shm = rec_shm, .rec_mem = rec_shm + 24 * MiB});
    exit_event(s, T0 + 0.7, (struct exit_ev){.pid = 102, .comm = "pt_data_worker",
                                              .role = "worker", .group = 100, .signal = "SIGBUS",
                                              .cause = "sigbus"});
}

/* The ends of one job get one advice, the most any of them asks: the
 * first worker's, before the loader was seen, asks for what the second's
 * learnt; the main's end follows. */
static void test_one_advice_per_job(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    dying_job(&s, loader_five, 96 * MiB);
    exit_event(&s, T0 + 0.8, (struct exit_ev){.pid = 100, .comm = "python3", .role = "main",
                                               .group = 100, .code = "1", .cause = "exit"});
    snapshot(&s, T0 + 1, (struct snap){.app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.d[0].pid, 101);
    assert_int_equal(r.d[1].after_pid, 101);
    assert_int_equal(r.d[2].after_pid, 101);
    for (size_t i = 0; i < r.n; i++) {
        assert_true(r.d[i].has_advice);
        assert_true(r.d[i].from_loader); /* the second snapshot's loader */
        assert_true(r.d[i].rec_shm > 64 * MiB);
        assert_int_equal(r.d[i].rec_shm, r.d[1].rec_shm);
        assert_int_equal(r.d[i].rec_memory, r.d[1].rec_memory);
    }
    why_result_free(&r);
    set_free(&s);
}

/* A loader read only while its job was dying: the snapshot taken for the
 * first worker's SIGBUS shows one worker left, with one batch; the advice
 * counts both workers the job lost and torch's default prefetch factor. */
static void test_loader_read_while_dying(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    dying_job(&s,
              "{\"main_pid\":100,\"batch_shm_bytes\":13250560,\"workers\":1,"
              "\"batches_in_flight\":3,\"prefetch_factor\":1}",
              90 * MiB);
    snapshot(&s, T0 + 1, (struct snap){.app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    struct capacity_input in = {.observed_batch_shm = 13250560, .workers = 2, .prefetch = 2};
    struct capacity_result cr;
    char *cause = NULL;
    assert_int_equal(capacity_compute(&in, &cr, &cause), 0);
    for (size_t i = 0; i < r.n; i++) {
        assert_true(r.d[i].from_loader);
        assert_int_equal(r.d[i].loader_workers, 2);
        assert_int_equal(r.d[i].loader_prefetch, 2);
        assert_int_equal(r.d[i].need_shm, cr.shm_peak);
        assert_int_equal(r.d[i].rec_shm, cr.rec_shm_size);
    }
    why_result_free(&r);
    set_free(&s);
}

/* Names from the recording reach neither the terminal nor the JSON raw. */
static void test_hostile_names(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    add(&s, T0,
        "{\"event\":\"exit\",\"time\":\"x\",\"pid\":9,\"comm\":\"ev\\u001b[31mil\\n\","
        "\"role\":\"worker\",\"group\":8,\"container\":\"abc\",\"container_name\":"
        "\"x\\u001b]0;pwn\\u0007\\u202e\",\"exit_code\":null,\"signal\":\"SIGSEGV\","
        "\"cause\":\"signal\"}");
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_non_null(strstr(r.d[0].diagnosis, "crashed with SIGSEGV"));
    assert_false(r.d[0].has_mount);
    struct whyreport_in in = {.r = &r, .from = T0 - 1, .to = T0 + 1};
    struct buf b;
    buf_init(&b);
    whyreport_text(&b, &in);
    for (size_t i = 0; i < b.len; i++)
        assert_true(b.data[i] == '\n' || (unsigned char)b.data[i] >= 0x20);
    assert_non_null(strstr(b.data, "ev\\e[31mil\\n"));
    assert_null(strstr(b.data, "\xe2\x80\xae"));
    buf_free(&b);
    buf_init(&b);
    whyreport_json(&b, &in);
    assert_null(memchr(b.data, 0x1b, b.len));
    char err[128];
    struct jd *j = jd_parse(b.data, b.len, err, sizeof(err));
    assert_non_null(j);
    assert_string_equal(jd_getstr(jd_at(jd_get(j, "deaths"), 0), "comm", ""), "ev\x1b[31mil\n");
    jd_free(j);
    buf_free(&b);
    why_result_free(&r);
    set_free(&s);
}

/* Ends a tenth of a second apart, each followed by the snapshot the
 * recorder took at once (recorded times have milliseconds): each end's
 * moment is read from the snapshots on either side of it, the group that
 * filled the mount from the one before, with both its workers. */
static void test_event_snapshot_order(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0 + 0.1, (struct snap){.used = 63 * MiB, .segs = job_segment, .procs = job_procs,
                                         .groups = job_group, .app = MiB, .rec_shm = 64 * MiB,
                                         .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 0.291, (struct exit_ev){.pid = 101, .comm = "w", .role = "worker",
                                                .group = 100, .signal = "SIGBUS",
                                                .cause = "sigbus"});
    snapshot(&s, T0 + 0.3, (struct snap){.reason = "event", .used = 64 * MiB, .segs = job_segment,
                                         .procs = job_procs, .groups = one_worker, .app = MiB,
                                         .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 0.39, (struct exit_ev){.pid = 102, .comm = "w", .role = "worker",
                                               .group = 100, .code = "0", .cause = "exit"});
    snapshot(&s, T0 + 0.4, (struct snap){.reason = "event", .used = 50 * MiB, .app = MiB,
                                         .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    snapshot(&s, T0 + 0.45, (struct snap){.used = 25 * MiB, .app = MiB, .rec_shm = 64 * MiB,
                                          .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_true(r.d[0].has_before && r.d[0].has_at);
    assert_int_equal(r.d[0].used_before, 63 * MiB);
    assert_int_equal(r.d[0].used_at, 64 * MiB);
    assert_true(r.d[0].full);
    assert_int_equal(r.d[0].ntop, 1);
    assert_int_equal(r.d[0].top[0].main_pid, 100);
    assert_int_equal(r.d[0].top[0].workers, 2);
    why_result_free(&r);
    set_free(&s);
}

/* A Bus error with less free than one of the loader's batches: full,
 * though no snapshot saw the last page go. */
static void test_full_for_a_batch(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0, (struct snap){.used = 5 * 13250560ull, .procs = job_procs, .groups = job_group,
                                   .app = MiB, .loader = loader_five, .rec_shm = 96 * MiB,
                                   .rec_mem = 120 * MiB});
    exit_event(&s, T0 + 0.5, (struct exit_ev){.pid = 101, .comm = "w", .role = "worker",
                                              .group = 100, .signal = "SIGBUS", .cause = "sigbus"});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_true(r.d[0].full);
    assert_non_null(strstr(r.d[0].diagnosis, "/dev/shm was full, 63.2 of 64.0 MiB with less free "
                                             "than one batch (12.6 MiB): a worker writing"));
    why_result_free(&r);
    /* The same end seen only as gone (no process events): its likely cause. */
    exit_event(&s, T0 + 0.6, (struct exit_ev){.pid = 102, .comm = "w", .role = "worker",
                                              .group = 100, .cause = "unknown"});
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.d[1].cause, "unknown");
    assert_non_null(strstr(r.d[1].diagnosis, "/dev/shm was full just before, 63.2 of 64.0 MiB: "
                                             "the likely cause is the Bus error"));
    why_result_free(&r);
    set_free(&s);
}

/* A Bus error between two snapshots that saw the mount three quarters
 * full: the mount filled all the same, so the advice counts its size as
 * the peak (1.5 x 48 MiB would be a --shm-size the job fills again); with
 * the loader read before, its arithmetic decides. */
static void test_bus_between_snapshots(void **state)
{
    (void)state;
    uint64_t margin;
    bool floored;
    uint64_t rec64 = budget_rec_shm(64 * MiB, &margin, &floored);
    for (int with_loader = 0; with_loader < 2; with_loader++) {
        struct rec_set s = {.n = 0};
        snapshot(&s, T0,
                 (struct snap){.used = 48 * MiB,
                               .procs = job_procs,
                               .groups = job_group,
                               .app = 2 * MiB,
                               .loader = with_loader ? loader_five : NULL,
                               .rec_shm = 72 * MiB,
                               .rec_mem = 90 * MiB});
        exit_event(&s, T0 + 0.5,
                   (struct exit_ev){.pid = 101,
                                    .comm = "pt_data_worker",
                                    .role = "worker",
                                    .group = 100,
                                    .signal = "SIGBUS",
                                    .cause = "sigbus"});
        snapshot(&s, T0 + 0.6,
                 (struct snap){.reason = "event",
                               .used = 30 * MiB,
                               .app = 2 * MiB,
                               .rec_shm = 72 * MiB,
                               .rec_mem = 90 * MiB});
        struct why_result r;
        find(&s, NULL, &r);
        assert_int_equal(r.n, 1);
        const struct why_death *d = &r.d[0];
        assert_false(d->full); /* what the snapshots saw */
        assert_int_equal(d->used_peak, 48 * MiB);
        assert_non_null(strstr(d->diagnosis, "it filled up between two snapshots"));
        struct buf b;
        struct jd *j = report(&r, &b);
        const struct jd *adv = jd_get(jd_at(jd_get(j, "deaths"), 0), "advice");
        if (!with_loader) {
            assert_true(d->from_size);
            assert_false(d->from_loader);
            assert_int_equal(d->need_shm, 64 * MiB);
            assert_int_equal(d->rec_shm, rec64);
            assert_int_equal(d->rec_memory, budget_rec_memory(2 * MiB, rec64, &margin));
            assert_non_null(strstr(b.data, "(the mount's 64.0 MiB as its peak, which the Bus "
                                           "error shows it reached;"));
            assert_string_equal(jd_getstr(adv, "from", ""), "peaks");
        } else {
            struct capacity_input in = {
                .observed_batch_shm = 13250560, .workers = 2, .prefetch = 2};
            struct capacity_result cr;
            char *cause = NULL;
            assert_int_equal(capacity_compute(&in, &cr, &cause), 0);
            assert_true(d->from_loader);
            assert_false(d->from_size);
            assert_int_equal(d->need_shm, cr.shm_peak);
            assert_int_equal(d->rec_shm, cr.rec_shm_size);
            assert_string_equal(jd_getstr(adv, "from", ""), "loader");
        }
        assert_int_equal(jd_getint(adv, "recommended_shm_size_bytes", 0), d->rec_shm);
        assert_int_equal(jd_getint(adv, "shm_need_bytes", 0), d->need_shm);
        jd_free(j);
        buf_free(&b);
        why_result_free(&r);
        set_free(&s);
    }
}

/* Workers born and dead between two snapshots, whose exits name their main
 * (the recorder's rule for an unseen child): no snapshot shows the group,
 * and the main's exit, recorded as a holder's, is still their main's, and
 * follows the first of them. */
static void test_main_of_unseen_workers(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0,
             (struct snap){.used = MiB,
                           .procs = "{\"pid\":100,\"comm\":\"python3\","
                                    "\"role\":\"holder\",\"group\":null}",
                           .app = MiB,
                           .rec_shm = 64 * MiB,
                           .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 1,
               (struct exit_ev){.pid = 101,
                                .comm = "python3",
                                .role = "worker",
                                .group = 100,
                                .signal = "SIGBUS",
                                .cause = "sigbus"});
    exit_event(&s, T0 + 1.1,
               (struct exit_ev){.pid = 102,
                                .comm = "python3",
                                .role = "worker",
                                .group = 100,
                                .signal = "SIGBUS",
                                .cause = "sigbus"});
    exit_event(&s, T0 + 1.4,
               (struct exit_ev){
                   .pid = 100, .comm = "python3", .role = "holder", .code = "1", .cause = "exit"});
    snapshot(&s, T0 + 2, (struct snap){.app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    const struct why_death *m = &r.d[2];
    assert_int_equal(m->pid, 100);
    assert_string_equal(m->role, "main");
    assert_int_equal(m->after_pid, 101);
    assert_non_null(strstr(m->diagnosis, "followed the end of 101 (SIGBUS)"));
    why_result_free(&r);
    /* A holder whose exit no worker's names is a holder still. */
    struct rec_set t = {.n = 0};
    snapshot(&t, T0,
             (struct snap){.procs = "{\"pid\":100,\"comm\":\"python3\","
                                    "\"role\":\"holder\",\"group\":null}",
                           .app = MiB,
                           .rec_shm = 64 * MiB,
                           .rec_mem = 80 * MiB});
    exit_event(&t, T0 + 1,
               (struct exit_ev){.pid = 101,
                                .comm = "python3",
                                .role = "worker",
                                .group = 300,
                                .signal = "SIGBUS",
                                .cause = "sigbus"});
    exit_event(&t, T0 + 1.4,
               (struct exit_ev){
                   .pid = 100, .comm = "python3", .role = "holder", .code = "1", .cause = "exit"});
    find(&t, NULL, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.d[1].role, "holder");
    assert_int_equal(r.d[1].after_pid, 0);
    why_result_free(&r);
    set_free(&t);
    set_free(&s);
}

/* A job's main and worker that one scan found gone (no process events):
 * both carry that scan's time, and neither is said to follow the other. */
static void test_gone_in_one_scan(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0,
             (struct snap){.procs = job_procs,
                           .groups = job_group,
                           .app = MiB,
                           .rec_shm = 64 * MiB,
                           .rec_mem = 80 * MiB});
    exit_event(
        &s, T0 + 1,
        (struct exit_ev){
            .pid = 100, .comm = "python3", .role = "main", .group = 100, .cause = "unknown"});
    exit_event(&s, T0 + 1,
               (struct exit_ev){.pid = 101,
                                .comm = "pt_data_worker",
                                .role = "worker",
                                .group = 100,
                                .cause = "unknown"});
    /* A later end of the job follows them. */
    exit_event(&s, T0 + 2,
               (struct exit_ev){.pid = 102,
                                .comm = "pt_data_worker",
                                .role = "worker",
                                .group = 100,
                                .signal = "SIGKILL",
                                .cause = "signal"});
    snapshot(&s, T0 + 3, (struct snap){.app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.d[0].after_pid, 0);
    assert_int_equal(r.d[1].pid, 101);
    assert_int_equal(r.d[1].after_pid, 0);
    assert_null(strstr(r.d[1].diagnosis, "followed"));
    assert_int_equal(r.d[2].after_pid, 100);
    why_result_free(&r);
    set_free(&s);
}

/* A killed job whose worker 201 the snapshot before did not show in its
 * group (a zombie then, or born since): the batches it made count among
 * the leftovers of its main's end, as its exit event names it the job's. */
static void test_left_by_a_zombie_worker(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *held = "{\"mount_id\":\"m1\",\"name\":\"torch_202_1\",\"alloc_bytes\":4194304,"
                       "\"state\":\"in_use\",\"creator_pid\":203,\"holders\":[{\"pid\":200}],"
                       "\"group\":200}";
    const char *left = "{\"mount_id\":\"m1\",\"name\":\"torch_201_1\",\"alloc_bytes\":4194304,"
                       "\"state\":\"orphan\",\"creator_pid\":201,\"holders\":[],\"group\":null},"
                       "{\"mount_id\":\"m1\",\"name\":\"torch_202_1\",\"alloc_bytes\":4194304,"
                       "\"state\":\"orphan\",\"creator_pid\":203,\"holders\":[],\"group\":null}";
    snapshot(&s, T0,
             (struct snap){.used = 8 * MiB,
                           .segs = held,
                           .procs = "{\"pid\":200,\"comm\":\"python3\",\"role\":\"main\","
                                    "\"group\":200},"
                                    "{\"pid\":203,\"comm\":\"python3\",\"role\":\"worker\","
                                    "\"group\":200}",
                           .groups = "{\"main_pid\":200,\"workers\":[203],"
                                     "\"shm_managers\":[]}",
                           .app = MiB});
    exit_event(&s, T0 + 0.5,
               (struct exit_ev){.pid = 200,
                                .comm = "python3",
                                .role = "main",
                                .group = 200,
                                .signal = "SIGKILL",
                                .cause = "signal"});
    exit_event(&s, T0 + 0.6,
               (struct exit_ev){.pid = 201,
                                .comm = "python3",
                                .role = "worker",
                                .group = 200,
                                .signal = "SIGKILL",
                                .cause = "signal"});
    snapshot(&s, T0 + 2, (struct snap){.used = 8 * MiB, .segs = left, .app = MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 2);
    const struct why_death *d = &r.d[0];
    assert_int_equal(d->pid, 200);
    assert_non_null(strstr(d->diagnosis, "Its job left 2 segments (8.0 MiB)"));
    assert_int_equal(d->left_segments, 2);
    assert_int_equal(d->left_bytes, 8 * MiB);
    why_result_free(&r);
    set_free(&s);
}

/* A job in a container, its own pid namespace: a dead worker's batch names
 * the worker's pid there (4), not the host's (2004); it is the job's
 * leftover all the same. */
static void test_left_in_a_container(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *procs =
        "{\"pid\":2001,\"nspid\":1,\"comm\":\"python3\",\"role\":\"main\",\"group\":2001},"
        "{\"pid\":2004,\"nspid\":4,\"comm\":\"pt_data_worker\",\"role\":\"worker\","
        "\"group\":2001}";
    const char *group = "{\"main_pid\":2001,\"workers\":[2004],\"shm_managers\":[]}";
    const char *held = "{\"mount_id\":\"m1\",\"name\":\"torch_4_0\",\"alloc_bytes\":786432,"
                       "\"state\":\"in_use\",\"creator_pid\":2004,\"holders\":[{\"pid\":2004}],"
                       "\"group\":2001}";
    const char *left = "{\"mount_id\":\"m1\",\"name\":\"torch_4_0\",\"alloc_bytes\":786432,"
                       "\"state\":\"orphan\",\"creator_pid\":4,\"holders\":[],\"group\":null},"
                       "{\"mount_id\":\"m2\",\"name\":\"torch_4_9\",\"alloc_bytes\":4096,"
                       "\"state\":\"orphan\",\"creator_pid\":4,\"holders\":[],\"group\":null}";
    snapshot(&s, T0,
             (struct snap){.ctr = "c0ffee",
                           .used = MiB,
                           .segs = held,
                           .procs = procs,
                           .groups = group,
                           .app = MiB});
    exit_event(&s, T0 + 1,
               (struct exit_ev){.pid = 2004,
                                .comm = "pt_data_worker",
                                .role = "worker",
                                .group = 2001,
                                .ctr = "c0ffee",
                                .signal = "SIGBUS",
                                .cause = "sigbus"});
    snapshot(&s, T0 + 2, (struct snap){.ctr = "c0ffee", .used = MiB, .segs = left, .app = MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.d[0].mount_id, "m1");
    /* The one on its mount; not the other mount's, whose 4 is another's. */
    assert_int_equal(r.d[0].left_segments, 1);
    assert_int_equal(r.d[0].left_bytes, 786432);
    why_result_free(&r);
    set_free(&s);
}

/* A container that no runtime names, only its hostname: its deaths are
 * named and found by it, as the report heads it. */
static void test_container_by_hostname(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *procs = "{\"pid\":101,\"comm\":\"w\",\"role\":\"worker\",\"group\":100,"
                        "\"container\":\"c0ffee\"}";
    snapshot(&s, T0,
             (struct snap){
                 .ctr = "c0ffee", .ctr_host = "oomer", .used = MiB, .procs = procs, .app = MiB});
    exit_event(&s, T0 + 1,
               (struct exit_ev){.pid = 101,
                                .comm = "w",
                                .role = "worker",
                                .group = 100,
                                .ctr = "c0ffee",
                                .signal = "SIGKILL",
                                .cause = "signal"});
    struct why_filter f = {.container = "oomer"};
    struct why_result r;
    find(&s, &f, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.d[0].container_name, "oomer");
    why_result_free(&r);
    set_free(&s);
}

/* A death told from the scans comes with the scan that missed the process:
 * the snapshot before it is the last one that still shows it. */
static void test_before_shows_it(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    snapshot(&s, T0, (struct snap){.used = 60 * MiB, .procs = job_procs, .groups = job_group,
                                   .app = MiB, .rec_shm = 96 * MiB, .rec_mem = 120 * MiB});
    snapshot(&s, T0 + 1, (struct snap){.used = 10 * MiB, .app = MiB, .rec_shm = 96 * MiB,
                                       .rec_mem = 120 * MiB});
    exit_event(&s, T0 + 1.2, (struct exit_ev){.pid = 101, .comm = "w", .role = "worker",
                                              .group = 100, .cause = "unknown"});
    snapshot(&s, T0 + 2, (struct snap){.used = 10 * MiB, .app = MiB, .rec_shm = 96 * MiB,
                                       .rec_mem = 120 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.d[0].used_before, 60 * MiB);
    assert_true(r.d[0].t_before == T0);
    assert_int_equal(r.d[0].used_at, 10 * MiB);
    why_result_free(&r);
    set_free(&s);
}

/* Each end's snapshots, as the index of the records finds them: ends before
 * the first snapshot, between two, between two with a snapshot that cannot
 * be read (skipped) and a fill event, and after the last. */
static void test_snapshots_around(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    struct exit_ev crash = {.comm = "w", .role = "holder", .signal = "SIGSEGV", .cause = "signal"};
    crash.pid = 501;
    exit_event(&s, T0, crash);
    snapshot(&s, T0 + 1, (struct snap){.used = 10 * MiB});
    crash.pid = 502;
    exit_event(&s, T0 + 2, crash);
    add(&s, T0 + 2.5, "{\"schema\":1,\"time\":");
    s.recs[s.n - 1].snapshot = true; /* a snapshot's line, damaged */
    add(&s, T0 + 2.7,
        "{\"event\":\"fill\",\"time\":\"x\",\"mount_id\":\"m1\",\"used_bytes\":%llu,"
        "\"size_bytes\":%llu,\"level\":\"warn\"}",
        (unsigned long long)(30 * MiB), (unsigned long long)(64 * MiB));
    snapshot(&s, T0 + 3, (struct snap){.used = 20 * MiB});
    crash.pid = 503;
    exit_event(&s, T0 + 4, crash);
    crash.pid = 504;
    exit_event(&s, T0 + 4.5, crash);
    snapshot(&s, T0 + 5, (struct snap){.used = 25 * MiB});
    crash.pid = 505;
    exit_event(&s, T0 + 6, crash);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 5);
    static const struct {
        bool before, at;
        double t_before, t_at;
        uint64_t used_before, used_at, peak;
    } want[] = {
        {false, true, 0, 1, 0, 10, 10},  /* before the first snapshot */
        {true, true, 1, 3, 10, 20, 30},  /* the damaged one skipped; the fill between */
        {true, true, 3, 5, 20, 25, 25},  /* the fill before the one before: not counted */
        {true, true, 3, 5, 20, 25, 25},
        {true, false, 5, 0, 25, 0, 25},  /* after the last */
    };
    for (size_t i = 0; i < r.n; i++) {
        const struct why_death *d = &r.d[i];
        assert_int_equal(d->pid, 501 + (int64_t)i);
        assert_true(d->has_mount);
        assert_int_equal(d->has_before, want[i].before);
        assert_int_equal(d->has_at, want[i].at);
        if (d->has_before)
            assert_true(d->t_before == T0 + want[i].t_before);
        if (d->has_at)
            assert_true(d->t_at == T0 + want[i].t_at);
        assert_int_equal(d->used_before, want[i].used_before * MiB);
        assert_int_equal(d->used_at, want[i].used_at * MiB);
        assert_int_equal(d->used_peak, want[i].peak * MiB);
        assert_true(d->has_left);
    }
    why_result_free(&r);
    set_free(&s);
}

/* A worker that dies while a scan is under way: that snapshot sorts before
 * its end (its time is when the scan began) but shows it a zombie, out of
 * its group, and its loader one batch short. The moment is the snapshot
 * before, and the loader the most of the last ones. */
static void test_died_during_scan(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const uint64_t batch = 13250560;
    const char *four = "{\"main_pid\":100,\"batch_shm_bytes\":13250560,\"workers\":2,"
                       "\"batches_in_flight\":4,\"prefetch_factor\":1}";
    const char *zombie =
        "{\"pid\":100,\"comm\":\"python3\",\"role\":\"main\",\"group\":100,\"container\":null},"
        "{\"pid\":101,\"comm\":\"pt_data_worker\",\"role\":\"zombie\",\"group\":null,"
        "\"container\":null},"
        "{\"pid\":102,\"comm\":\"pt_data_worker\",\"role\":\"worker\",\"group\":100,"
        "\"container\":null}";
    snapshot(&s, T0, (struct snap){.used = 5 * batch, .procs = job_procs, .groups = job_group,
                                   .app = MiB, .loader = loader_five, .rec_shm = 96 * MiB,
                                   .rec_mem = 120 * MiB});
    snapshot(&s, T0 + 0.9, (struct snap){.used = 5 * batch, .procs = zombie, .groups = one_worker,
                                         .app = MiB, .loader = four, .rec_shm = 96 * MiB,
                                         .rec_mem = 120 * MiB});
    exit_event(&s, T0 + 1.0, (struct exit_ev){.pid = 101, .comm = "w", .role = "worker",
                                              .group = 100, .signal = "SIGBUS", .cause = "sigbus"});
    snapshot(&s, T0 + 1.1, (struct snap){.reason = "event", .used = 4 * batch, .procs = zombie,
                                         .groups = one_worker, .app = MiB, .loader = four,
                                         .rec_shm = 96 * MiB, .rec_mem = 120 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_true(r.d[0].t_before == T0);
    assert_true(r.d[0].full);
    assert_string_equal(r.d[0].role, "worker");
    assert_int_equal(r.d[0].loader_prefetch, 2);
    assert_true(r.d[0].from_loader);
    assert_int_equal(r.d[0].need_shm, 6 * batch); /* one batch x (2 workers x 2 + 2) */
    why_result_free(&r);
    set_free(&s);
}

/* The scan before a death missed the process's container (its namespace's
 * processes exiting while it was read): the death told against it names
 * none, and neither does that snapshot; the one before names it. */
static void test_container_before(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char seg[256], in_ctr[256];
    snprintf(seg, sizeof(seg),
             "{\"mount_id\":\"m1\",\"name\":\"batch\",\"alloc_bytes\":%llu,\"state\":"
             "\"in_use\",\"creator_pid\":300,\"holders\":[{\"pid\":300}],\"group\":null}",
             (unsigned long long)(32 * MiB));
    snprintf(in_ctr, sizeof(in_ctr),
             "{\"pid\":300,\"comm\":\"python3\",\"role\":\"holder\",\"group\":null,"
             "\"container\":\"%s\"}",
             id);
    const char *no_ctr = "{\"pid\":300,\"comm\":\"python3\",\"role\":\"holder\","
                         "\"group\":null,\"container\":null}";
    snapshot(&s, T0, (struct snap){.ctr = id, .used = 32 * MiB, .segs = seg, .procs = in_ctr,
                                   .app = MiB, .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    snapshot(&s, T0 + 1, (struct snap){.used = 32 * MiB, .segs = seg, .procs = no_ctr, .app = MiB,
                                       .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    exit_event(&s, T0 + 1.5, (struct exit_ev){.pid = 300, .comm = "python3", .role = "holder",
                                              .signal = "SIGBUS", .cause = "sigbus"});
    snapshot(&s, T0 + 2, (struct snap){.ctr = id, .used = 64 * MiB, .segs = seg, .app = MiB,
                                       .rec_shm = 64 * MiB, .rec_mem = 80 * MiB});
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.d[0].container, id);
    assert_string_equal(r.d[0].container_name, "trainer");
    why_result_free(&r);
    assert_int_equal(count_ends(&s, &(struct why_filter){.container = "trainer"}), 1);
    set_free(&s);
}

/* Snapshots of two mounts, the host's /dev/shm and container abc's: a
 * death in a container neither belongs to, with no segment on either, has
 * no mount that can be named (the first, the host's, would be a guess); a
 * host process's is the host's, and segments tie a process to their mount. */
static void test_mount_not_known(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    const char *two = "{\"schema\":1,\"time\":\"x\",\"reason\":\"interval\",\"mounts\":["
                      "{\"id\":\"m1\",\"path\":\"/dev/shm\",\"size_bytes\":67108864,"
                      "\"used_bytes\":1048576,\"containers\":[]},"
                      "{\"id\":\"m2\",\"path\":\"/run/abc/shm\",\"size_bytes\":67108864,"
                      "\"used_bytes\":8388608,\"containers\":[{\"id\":\"abc\",\"name\":\"web\"}]}],"
                      "\"segments\":[{\"mount_id\":\"m2\",\"name\":\"s\",\"alloc_bytes\":8388608,"
                      "\"state\":\"in_use\",\"holders\":[{\"pid\":802}],\"group\":null}],"
                      "\"processes\":[{\"pid\":800,\"comm\":\"lost\",\"role\":\"holder\","
                      "\"container\":\"zzz\"}],\"groups\":[],\"budget\":null,\"cgroup\":null}";
    add(&s, T0, "%s", two);
    struct exit_ev bus = {.comm = "w", .role = "holder", .signal = "SIGBUS", .cause = "sigbus"};
    bus.pid = 800;
    bus.ctr = "zzz";
    exit_event(&s, T0 + 1, bus);
    bus.pid = 801;
    bus.ctr = NULL;
    exit_event(&s, T0 + 1.1, bus);
    bus.pid = 802;
    bus.ctr = "zzz";
    exit_event(&s, T0 + 1.2, bus);
    add(&s, T0 + 2, "%s", two);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 3);
    const struct why_death *d = &r.d[0];
    assert_false(d->has_mount);
    assert_true(d->mount_unknown);
    assert_null(d->mount_path);
    assert_false(d->has_budget);
    assert_non_null(strstr(d->diagnosis, "a Bus error (SIGBUS) on a /dev/shm that is not known "
                                         "(the snapshots show several mounts, and nothing ties "
                                         "it to one)"));
    assert_true(r.d[1].has_mount);
    assert_string_equal(r.d[1].mount_id, "m1");
    assert_true(r.d[2].has_mount);
    assert_string_equal(r.d[2].mount_id, "m2");

    /* Said plainly in the text, and a null mount in the JSON. */
    struct buf b;
    struct jd *j = report(&r, &b);
    assert_non_null(strstr(b.data, "holder 800 (w), container zzz: killed by SIGBUS (Bus error) "
                                   "at 2025-12-05 02:00:01 UTC\n"
                                   "  its /dev/shm is not known: the snapshots around it show "
                                   "several mounts, and nothing ties it to one\n"
                                   "  why: a Bus error (SIGBUS) on a /dev/shm that is not known"));
    buf_free(&b);
    assert_non_null(j);
    assert_true(jd_is(jd_get(jd_at(jd_get(j, "deaths"), 0), "mount"), JD_NULL));
    assert_string_equal(jd_getstr(jd_get(jd_at(jd_get(j, "deaths"), 2), "mount"), "id", ""), "m2");
    jd_free(j);
    why_result_free(&r);
    set_free(&s);
}

/* Snapshots of ctr's "web" in the containerd namespaces probe (its
 * /dev/shm full, m1) and other (m2), with no segment to tie the death to a
 * mount: a Bus error in other/web is told with other/web's mount, its text
 * names other/web and its JSON says the namespace, and --container
 * other/web finds it; one whose records do not say the namespace (an older
 * recording) is told with the first mount of the id, as in web. */
static void test_same_id_two_namespaces(void **state)
{
    (void)state;
    for (int older = 0; older < 2; older++) {
        /* The namespace of a process and of an event: a member, or none. */
        const char *ns_other = older ? "" : ",\"containerd_namespace\":\"other\"";
        struct rec_set s = {.n = 0};
        char snap[1024];
        snprintf(snap, sizeof(snap),
                 "{\"schema\":1,\"time\":\"x\",\"reason\":\"interval\",\"mounts\":["
                 "{\"id\":\"m1\",\"path\":\"/dev/shm\",\"size_bytes\":67108864,"
                 "\"used_bytes\":67108864,\"containers\":[{\"id\":\"web\",\"name\":\"web\","
                 "\"pid\":7,\"containerd_namespace\":\"probe\"}]},"
                 "{\"id\":\"m2\",\"path\":\"/dev/shm\",\"size_bytes\":67108864,"
                 "\"used_bytes\":8388608,\"containers\":[{\"id\":\"web\",\"name\":\"web\","
                 "\"pid\":8,\"containerd_namespace\":\"other\"}]}],\"segments\":[],"
                 "\"processes\":[{\"pid\":201,\"comm\":\"w\",\"role\":\"holder\","
                 "\"container\":\"web\"%s}],\"groups\":[],\"budget\":null,\"cgroup\":null}",
                 ns_other);
        add(&s, T0, "%s", snap);
        add(&s, T0 + 1,
            "{\"event\":\"exit\",\"time\":\"x\",\"pid\":201,\"comm\":\"w\",\"role\":"
            "\"holder\",\"group\":null,\"container\":\"web\",\"container_name\":\"web\","
            "\"exit_code\":null,\"signal\":\"SIGBUS\",\"core\":false,\"cause\":\"sigbus\"%s}",
            ns_other);
        add(&s, T0 + 2, "%s", snap);
        struct why_result r;
        find(&s, NULL, &r);
        assert_int_equal(r.n, 1);
        assert_true(r.d[0].has_mount);
        assert_string_equal(r.d[0].mount_id, older ? "m1" : "m2");
        assert_int_equal(r.d[0].container_ns_known, !older);
        struct buf b;
        struct jd *j = report(&r, &b);
        /* The text names the container with its namespace where the
         * records say it. */
        const char *who = older ? ", container web: " : ", container other/web: ";
        const char *mount = older ? "the /dev/shm of web" : "the /dev/shm of other/web";
        if (!strstr(b.data, who) || !strstr(b.data, mount))
            fail_msg("no \"%s\" or \"%s\" in %s", who, mount, b.data);
        buf_free(&b);
        assert_non_null(j);
        const struct jd *d0 = jd_at(jd_get(j, "deaths"), 0);
        if (older)
            assert_true(jd_is(jd_get(d0, "containerd_namespace"), JD_NULL));
        else
            assert_string_equal(jd_getstr(d0, "containerd_namespace", ""), "other");
        jd_free(j);
        why_result_free(&r);
        /* --container: NAMESPACE/NAME picks the one of that namespace (of
         * none where the records do not say it); the name alone any. */
        const struct {
            const char *name;
            size_t n;
        } filters[] = {
            {"web", 1}, {"other/web", !older}, {"probe/web", 0}, {"other/", 0}, {"/web", 0},
        };
        for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
            struct why_filter f = {.container = filters[i].name};
            if (count_ends(&s, &f) != filters[i].n)
                fail_msg("--container %s: not %zu ends", filters[i].name, filters[i].n);
        }
        set_free(&s);
    }
}

/* A damaged or foreign snapshot whose lists are strings, numbers or
 * objects: read as empty lists, never walked as arrays. */
static void test_lists_of_other_types(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    add(&s, T0,
        "{\"schema\":1,\"time\":\"x\",\"processes\":\"abcdefgh\",\"groups\":\"xyzxyz\","
        "\"mounts\":\"mmmmmmmm\",\"segments\":\"ssss\"}");
    add(&s, T0 + 0.5,
        "{\"schema\":1,\"time\":\"x\",\"processes\":{\"a\":1},"
        "\"groups\":[{\"main_pid\":100,\"workers\":\"wwwwwwww\",\"shm_managers\":7}],"
        "\"mounts\":[{\"id\":\"m1\",\"containers\":\"cccc\"}],"
        "\"segments\":[{\"mount_id\":\"m1\",\"group\":100,\"holders\":\"hhhh\"}]}");
    exit_event(&s, T0 + 1, (struct exit_ev){.pid = 101, .comm = "pt_data_worker", .role = "worker",
                                            .group = 100, .ctr = "abc", .signal = "SIGBUS",
                                            .cause = "sigbus"});
    add(&s, T0 + 2,
        "{\"schema\":1,\"time\":\"x\",\"processes\":12,\"groups\":{\"g\":[1]},"
        "\"mounts\":[{\"id\":\"m1\",\"containers\":{\"id\":\"abc\"}}],\"segments\":true}");
    assert_int_equal(count_ends(&s, NULL), 1);
    set_free(&s);
}

/* Pids no process can have (0, negative, past pid_t) are not known:
 * neither the process nor its group is named by them. */
static void test_impossible_pids(void **state)
{
    (void)state;
    struct rec_set s = {.n = 0};
    static const char *const lines[] = {
        "{\"event\":\"exit\",\"time\":\"x\",\"pid\":0,\"role\":\"worker\",\"group\":-1,"
        "\"signal\":\"SIGKILL\",\"cause\":\"signal\"}",
        "{\"event\":\"exit\",\"time\":\"x\",\"pid\":-1,\"role\":\"worker\",\"group\":2147483648,"
        "\"signal\":\"SIGKILL\",\"cause\":\"signal\"}",
        "{\"event\":\"exit\",\"time\":\"x\",\"pid\":18446744073709551616,\"role\":\"worker\","
        "\"group\":0,\"signal\":\"SIGKILL\",\"cause\":\"signal\"}",
        "{\"event\":\"oom_kill\",\"time\":\"x\",\"cgroup\":\"/x\",\"kills\":1,"
        "\"victim\":4294967297}"};
    for (int i = 0; i < 4; i++)
        add(&s, T0 + 20 * i, "%s", lines[i]);
    struct why_result r;
    find(&s, NULL, &r);
    assert_int_equal(r.n, 4);
    for (size_t i = 0; i < r.n; i++) {
        assert_false(r.d[i].has_pid);
        assert_false(r.d[i].has_group);
    }
    struct whyreport_in in = {.r = &r, .from = T0 - 1, .to = T0 + 61};
    struct buf b;
    buf_init(&b);
    whyreport_text(&b, &in);
    static const char *const never[] = {"worker 0", "worker -1", "main", "2147483648",
                                        "4294967297"};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        assert_null(strstr(b.data, never[i]));
    buf_free(&b);
    why_result_free(&r);
    set_free(&s);
}

static void test_formats(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(why_fmt_clock(b, sizeof(b), T0 + 3723), "03:02:03");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_time),
        cmocka_unit_test(test_sigbus),
        cmocka_unit_test(test_sigbus_container),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_oom_near),
        cmocka_unit_test(test_killed_leftovers),
        cmocka_unit_test(test_manager_dies_in_last_scan),
        cmocka_unit_test(test_normal_and_unknown),
        cmocka_unit_test(test_one_advice_per_job),
        cmocka_unit_test(test_loader_read_while_dying),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_event_snapshot_order),
        cmocka_unit_test(test_full_for_a_batch),
        cmocka_unit_test(test_bus_between_snapshots),
        cmocka_unit_test(test_main_of_unseen_workers),
        cmocka_unit_test(test_gone_in_one_scan),
        cmocka_unit_test(test_left_by_a_zombie_worker),
        cmocka_unit_test(test_left_in_a_container),
        cmocka_unit_test(test_container_by_hostname),
        cmocka_unit_test(test_before_shows_it),
        cmocka_unit_test(test_snapshots_around),
        cmocka_unit_test(test_died_during_scan),
        cmocka_unit_test(test_container_before),
        cmocka_unit_test(test_mount_not_known),
        cmocka_unit_test(test_same_id_two_namespaces),
        cmocka_unit_test(test_budget_other_shm),
        cmocka_unit_test(test_without_facts),
        cmocka_unit_test(test_lists_of_other_types),
        cmocka_unit_test(test_impossible_pids),
        cmocka_unit_test(test_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
