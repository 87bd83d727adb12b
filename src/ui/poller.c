#include "ui/poller.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "collect/scanjob.h"
#include "config/config.h"
#include "live/evwatch.h"
#include "live/recwrite.h"
#include "model/evline.h"
#include "util/clock.h"
#include "util/thread.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/xalloc.h"

struct poller {
    struct poller_cfg cfg;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int pipe[2];         /* a byte on it tells the drawing thread of something new */
    int ctl[2];          /* a byte on it wakes the thread from its wait on the events */
    /* Under lock. */
    bool stop, scan_requested;
    struct scan_job *job; /* the running scan's job (its start and beacon: how long, where) */
    bool abandoned;      /* stop came during a scan that had not ended */
    struct snap *snap;    /* newest, not yet taken */
    struct gauges gauges; /* newest */
    bool gauges_new;
    int target_gone; /* enum scan_target: not OK once the --pid process is gone */
    time_t target_gone_at;
    struct poller_event *events; /* told, not yet taken */
    size_t nevents, events_cap;
    /* The thread's own. */
    struct evwatch ew;            /* the events' sources, the last scan's facts */
    struct event_list got;        /* the events as they come, for take_events */
    struct buf rec;               /* --record: the record being written */
    struct mount_list ml; /* the mounts of the last scan, for statvfs */
    struct node_gauge *gauge_fds; /* --all: each one's view (collect/node.h) */
    size_t ngauge_fds;
    uint64_t peak_shm, peak_app;
    struct worker_memory workers; /* workers seen so far: orphans keep their group */
    struct group_peaks group_peaks; /* each DataLoader group's peaks so far */
    struct oom_watch oom;         /* the cgroup's OOM kills, scan to scan */
    struct mount_memory mount_mem; /* each mount's own OOM kills and peaks (its budget's) */
};

void snap_free(struct snap *s)
{
    if (!s)
        return;
    model_free(&s->model);
    scan_free(&s->scan);
    free(s);
}

void gauges_free(struct gauges *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->items[i].path);
        free(g->items[i].key);
    }
    free(g->items);
    memset(g, 0, sizeof(*g));
}

/* Writes a byte to fd, the write end of p->pipe or p->ctl. */
static void poke(int fd)
{
    ssize_t rc = write(fd, "x", 1);
    (void)rc; /* a full pipe already holds a byte that says it */
}

/* Empties a pipe (non-blocking) of its bytes. */
static void drain(int fd)
{
    char b[64];
    while (read(fd, b, sizeof(b)) > 0)
        ;
}

/* Sets the thread's flag (p->stop or p->scan_requested) and wakes the
 * thread, whether it waits on the condition or on the control pipe. */
static void wake(struct poller *p, bool *flag)
{
    pthread_mutex_lock(&p->lock);
    *flag = true;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    poke(p->ctl[1]);
}

/* Under lock: one line for the dashboard; announce: said at once on the
 * message line too. */
static void publish_event(struct poller *p, double t, bool critical, bool announce,
                          const char *text)
{
    struct poller_event *e = VEC_PUSH(p->events, p->nevents, p->events_cap);
    e->t = t;
    e->critical = critical;
    e->announce = announce;
    snprintf(e->text, sizeof(e->text), "%s", text);
}

static void copy_mounts(struct mount_list *dst, const struct mount_list *src)
{
    mounts_free(dst);
    for (size_t i = 0; i < src->n; i++) {
        struct shm_mount *m = VEC_PUSH(dst->items, dst->n, dst->cap);
        *m = src->items[i];
        m->path = xstrdup(src->items[i].path);
        m->fstype = xstrdup(src->items[i].fstype);
    }
}

/* The first mount's highest use so far, from each reading once: a scan's
 * own (before its model) or a gauge refresh's. */
static void note_peak(struct poller *p, const struct mount_list *ml)
{
    if (ml->n && ml->items[0].used > p->peak_shm)
        p->peak_shm = ml->items[0].used;
}

void gauges_read(struct gauges *g, const struct mount_list *ml, double t)
{
    gauges_free(g);
    g->t = t;
    g->n = ml->n;
    g->items = xcalloc(ml->n, sizeof(*g->items));
    for (size_t i = 0; i < ml->n; i++) {
        const struct shm_mount *mt = &ml->items[i];
        struct gauge *gg = &g->items[i];
        gg->path = xstrdup(mt->path);
        gg->dev = mt->dev;
        gg->key = mt->dev ? str_printf("%u:%u", major(mt->dev), minor(mt->dev)) : xstrdup(mt->path);
        gg->ok = mt->stat_ok;
        gg->size = mt->size;
        gg->used = mt->used;
    }
}

static void take_events(struct poller *p);

/* Called unlocked: --record writes p->rec, a record of time t; a failed
 * write is said as a line. */
static void record_put(struct poller *p, double t)
{
    char m[512];
    recwrite_put(p->cfg.store, t, &p->rec, m, sizeof(m));
    if (m[0]) {
        char line[560];
        snprintf(line, sizeof(line), "--record: %s", m);
        pthread_mutex_lock(&p->lock);
        publish_event(p, clock_wall(), true, true, line);
        pthread_mutex_unlock(&p->lock);
    }
}

/* --record: a stalled scan recorded as `shmwatch record` records it (a
 * "stalled" record; no snapshot, whose empty lists would read as every
 * mount and process gone). The title says it on screen. */
static void record_stall(struct poller *p, struct scan_job *job)
{
    struct scan st; /* the stand-in: its warning says where the scan is */
    scan_stalled(&st, &p->cfg.scan, clock_now() - scan_job_started(job), scan_job_beacon(job));
    struct event_list l = {0};
    events_stalled(&l, clock_wall(), st.warn.msg[0], st.stalled_s, st.stalled_pid, st.stalled_fd);
    scan_free(&st);
    buf_reset(&p->rec);
    report_event_json(&p->rec, &l.items[0]);
    record_put(p, l.items[0].t);
    event_list_free(&l);
}

/* Runs a scan as a job of its own into *out and waits for it; scan_run's
 * status, or -ECANCELED when stop came while it was stalled (the job
 * abandoned). While a scan runs past scan_stall_limit the thread goes on:
 * the kernel's exits are told (and recorded) as they come, and --record
 * records the stall at each interval. */
static int run_scan(struct poller *p, struct scan *out)
{
    struct scan_job *job = scan_job_start(&p->cfg.scan);
    if (!job) /* no thread for it: the scan runs in this one */
        return scan_run(&p->cfg.scan, out);
    pthread_mutex_lock(&p->lock);
    p->job = job;
    pthread_mutex_unlock(&p->lock);
    double stalled_at = scan_job_started(job) + scan_stall_limit(p->cfg.set->scan_interval_s);
    /* --record: the stall is recorded at each interval from stalled_at;
     * else nothing is said between the looks at the scan and the events. */
    double next_said = p->cfg.store ? stalled_at : DBL_MAX;
    for (;;) {
        double now = clock_now();
        bool done;
        if (now < stalled_at) {
            double until = now + 0.2 < stalled_at ? now + 0.2 : stalled_at;
            done = scan_job_wait(job, until);
        } else {
            if (now >= next_said) {
                record_stall(p, job);
                next_said = now + p->cfg.set->scan_interval_s;
            }
            double until = now + 0.2 < next_said ? now + 0.2 : next_said;
            if (evwatch_wait(&p->ew, until, p->ctl[0], &p->got))
                drain(p->ctl[0]);
            take_events(p);
            done = scan_job_wait(job, clock_now());
        }
        pthread_mutex_lock(&p->lock);
        bool stop = p->stop && !done && clock_now() >= stalled_at;
        if (done || stop)
            p->job = NULL;
        p->abandoned = stop;
        pthread_mutex_unlock(&p->lock);
        if (done)
            return scan_job_finish(job, out);
        if (stop) {
            scan_job_abandon(job);
            return -ECANCELED;
        }
    }
}

/* A new snapshot, or NULL when the watched process has gone (said in
 * *gone): the last snapshot is then the last word about it. NULL with
 * *gone SCAN_TARGET_OK when stop came during the scan. */
static struct snap *take_scan(struct poller *p, int *gone)
{
    struct snap *s = xcalloc(1, sizeof(*s));
    int rc = run_scan(p, &s->scan);
    /* An abandoned scan (-ECANCELED) wrote nothing: its state is OK. */
    if (rc == -ECANCELED || (rc < 0 && s->scan.target_state != SCAN_TARGET_OK)) {
        *gone = s->scan.target_state;
        snap_free(s);
        return NULL;
    }
    /* Any other failure (the watched process's namespaces cannot be read:
     * not ours) leaves a scan whose warnings say it: shown as it is. */
    struct model_opts mo;
    model_opts_default(&mo);
    mo.warn_pct = p->cfg.set->warn_pct;
    mo.crit_pct = p->cfg.set->crit_pct;
    mo.orphan_min_age_s = p->cfg.set->orphan_min_age_s;
    mo.trust_pids = p->cfg.set->trust_pids;
    note_peak(p, &s->scan.mounts);
    mo.peak_shm = p->peak_shm;
    mo.peak_app = p->peak_app;
    mo.memory = &p->workers;
    mo.peaks = &p->group_peaks;
    double now = clock_now();
    const struct cgroup_info *cg = &s->scan.cgroup;
    s->oom_new = oom_watch_add(&p->oom, now, cg->present && cg->has_oom_kills, cg->oom_kills);
    mo.oom_recent = oom_watch_recent(&p->oom, now);
    mount_memory_observe(&p->mount_mem, &s->scan, now);
    mo.mount_memory = &p->mount_mem;
    model_build(&s->scan, &mo, &s->model);
    /* The segments hold a copy of each file's facts: the records are read
     * no more, and the dashboard holds two snapshots while the next is
     * built (one on screen, one new). */
    files_drop_records(&s->scan.files);
    worker_memory_learn(&p->workers, &s->model);
    group_peaks_learn(&p->group_peaks, &s->model);
    mount_memory_learn(&p->mount_mem, &s->model);
    for (size_t i = 0; !s->oom_mount_new && i < s->scan.mounts.n; i++) {
        if (!node_owner(&s->scan.node, i))
            continue;
        char key[sizeof(p->mount_mem.items->key)];
        const struct mount_mem *e =
            mount_memory_find(&p->mount_mem, mount_memory_key(&s->scan, i, key, sizeof(key)));
        if (e && e->oom_new) {
            s->oom_mount = i;
            s->oom_mount_new = e->oom_new;
        }
    }
    if (s->model.budget.app > p->peak_app)
        p->peak_app = s->model.budget.app;
    return s;
}

/* Reads the watched mounts' fill again (statvfs; --all: each below the
 * root it was read through) and publishes it. Called unlocked. */
static void refresh_gauges(struct poller *p)
{
    if (p->gauge_fds)
        node_gauges_refresh(p->gauge_fds, p->cfg.scan.sys, &p->ml);
    else
        mounts_refresh(p->cfg.scan.sys, &p->ml);
    note_peak(p, &p->ml);
    double now = clock_now();
    pthread_mutex_lock(&p->lock);
    gauges_read(&p->gauges, &p->ml, now);
    p->gauges_new = true;
    pthread_mutex_unlock(&p->lock);
}

/* An exit's mount as the last scan saw it, with the fill read just now
 * when a reading of it is there (a Bus error is told with the fill at that
 * moment, not at the last scan). */
static bool fresh_mount(const struct poller *p, const struct event *e, struct ev_mount *out)
{
    const struct ev_mount *mt = evline_mount(&p->ew.prev, e);
    if (!mt)
        return false;
    *out = *mt;
    for (size_t i = 0; i < p->ml.n; i++) {
        const struct shm_mount *m = &p->ml.items[i];
        char id[32];
        snprintf(id, sizeof(id), "%u:%u", major(m->dev), minor(m->dev));
        if (strcmp(id, mt->id) == 0 && m->stat_ok && m->size)
            ev_mount_fill(out, m, p->cfg.set->warn_pct, p->cfg.set->crit_pct);
    }
    return true;
}

/* Called unlocked: the events got (p->got), each written to the store
 * (--record) and published as a line; the watcher's lost events and a
 * failed write said as lines too. */
static void take_events(struct poller *p)
{
    const struct event_list *got = &p->got;
    bool bus = false;
    for (size_t i = 0; i < got->n && !bus; i++)
        bus = got->items[i].kind == EV_EXIT && got->items[i].cause == CAUSE_SIGBUS;
    if (bus)
        refresh_gauges(p);
    char msg[560] = "";
    for (size_t i = 0; i < got->n; i++) {
        const struct event *e = &got->items[i];
        if (p->cfg.store) {
            buf_reset(&p->rec);
            report_event_json(&p->rec, e);
            char m[512];
            recwrite_put(p->cfg.store, e->t, &p->rec, m, sizeof(m));
            if (m[0])
                snprintf(msg, sizeof(msg), "--record: %s", m);
        }
        struct ev_mount mt;
        bool has_mt = e->kind == EV_EXIT && fresh_mount(p, e, &mt);
        char text[320];
        evline_text(e, has_mt ? &mt : NULL, text, sizeof(text));
        pthread_mutex_lock(&p->lock);
        /* An OOM kill and its victim's end are said on the message line
         * by the budget's own "OOM KILL: N new in ..." (ui.c), once for
         * the kill: not a second time here. */
        bool oom = e->kind == EV_OOM_KILL || (e->kind == EV_EXIT && e->cause == CAUSE_OOM_KILL);
        publish_event(p, e->t, evline_critical(e), evline_critical(e) && !oom, text);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_lock(&p->lock);
    if (msg[0])
        publish_event(p, clock_wall(), true, true, msg);
    if (got->n || msg[0])
        poke(p->pipe[1]);
    pthread_mutex_unlock(&p->lock);
    event_list_clear(&p->got);
}

/* Called unlocked, after a complete scan s (before its snapshot is published):
 * --record writes it (reason: an interval's, or by_event the one taken at
 * once after a death); the events it tells follow, the interval's churn
 * with them when on_time. */
static void scan_events(struct poller *p, struct snap *s, bool by_event, bool on_time)
{
    double t = clock_seconds(s->scan.time);
    if (p->cfg.store) {
        buf_reset(&p->rec);
        report_json_record(&p->rec, &s->model, by_event ? "event" : "interval");
        record_put(p, t);
    }
    struct ev_state cur;
    ev_state_from_model(&cur, &s->model, p->cfg.set->warn_pct, p->cfg.set->crit_pct);
    evwatch_scan(&p->ew, &s->scan, &cur, t, on_time, &p->got);
    take_events(p);
}

static void *run(void *arg)
{
    struct poller *p = arg;
    double next_scan = 0, next_gauge = clock_now() + p->cfg.set->gauge_interval_s;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        double now = clock_now();
        /* A death or an OOM kill: a snapshot at once (recorded as "event",
         * also when the interval's comes due with it). */
        bool by_event = evwatch_take_death(&p->ew);
        bool on_time = !by_event || now >= next_scan;
        if (p->scan_requested || now >= next_scan || by_event) {
            p->scan_requested = false;
            pthread_mutex_unlock(&p->lock);
            int gone;
            struct snap *s = take_scan(p, &gone);
            if (!s) {
                pthread_mutex_lock(&p->lock);
                if (gone == SCAN_TARGET_OK)
                    break; /* stop came during it */
                /* Nothing more to watch: the last snapshot and gauges stay. */
                p->target_gone = gone;
                p->target_gone_at = time(NULL);
                poke(p->pipe[1]);
                while (!p->stop)
                    pthread_cond_wait(&p->cond, &p->lock);
                continue;
            }
            copy_mounts(&p->ml, &s->scan.mounts);
            if (s->scan.node.read && s->scan.mounts.n) {
                node_gauges_update(&p->gauge_fds, &p->ngauge_fds, s->scan.node.read,
                                   p->cfg.scan.sys, &p->ml);
            } else {
                node_gauges_free(&p->gauge_fds, &p->ngauge_fds);
            }
            /* Recorded, and its events told, before the drawing thread may
             * take it. */
            scan_events(p, s, by_event, on_time);
            now = clock_now();
            pthread_mutex_lock(&p->lock);
            snap_free(p->snap);
            p->snap = s;
            gauges_read(&p->gauges, &p->ml, now);
            p->gauges_new = true;
            if (on_time)
                next_scan = now + p->cfg.set->scan_interval_s;
            next_gauge = now + p->cfg.set->gauge_interval_s;
            poke(p->pipe[1]);
            continue;
        }
        if (now >= next_gauge) {
            /* --pid: the watched process gone (not a check that cannot be
             * made, out of fds) leaves its mounts out of reach: the scan
             * says so, and keeps the last readings on screen. */
            if (sysroot_pid_check(p->cfg.scan.sys) == 0) {
                p->scan_requested = true;
                continue;
            }
            pthread_mutex_unlock(&p->lock);
            refresh_gauges(p);
            now = clock_now();
            pthread_mutex_lock(&p->lock);
            next_gauge = now + p->cfg.set->gauge_interval_s;
            poke(p->pipe[1]);
            continue;
        }
        /* Until the next scan or gauge reading, or a request (the control
         * pipe): the kernel's exits and the churn taken as they come. */
        pthread_mutex_unlock(&p->lock);
        double until = next_scan < next_gauge ? next_scan : next_gauge;
        if (evwatch_wait(&p->ew, until, p->ctl[0], &p->got))
            drain(p->ctl[0]);
        take_events(p);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Everything a started poller holds, its thread not running (never
 * started, or joined). */
static void release(struct poller *p)
{
    evwatch_close(&p->ew);
    event_list_free(&p->got);
    buf_free(&p->rec);
    free(p->events);
    close(p->ctl[0]);
    close(p->ctl[1]);
    snap_free(p->snap);
    gauges_free(&p->gauges);
    mounts_free(&p->ml);
    node_gauges_free(&p->gauge_fds, &p->ngauge_fds);
    worker_memory_free(&p->workers);
    group_peaks_free(&p->group_peaks);
    mount_memory_free(&p->mount_mem);
    close(p->pipe[0]);
    close(p->pipe[1]);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

struct poller *poller_start(const struct poller_cfg *cfg)
{
    struct poller *p = xcalloc(1, sizeof(*p));
    p->cfg = *cfg;
    if (pipe2(p->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(p);
        return NULL;
    }
    if (pipe2(p->ctl, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(p->pipe[0]);
        close(p->pipe[1]);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    clock_cond_init(&p->cond);
    buf_init(&p->rec);
    /* The events' sources; what is missing is said once, as a line (and a
     * record with --record, after the recorder's start). */
    if (p->cfg.store)
        events_recorder(&p->got, clock_wall(), "start", "the recorder started");
    evwatch_open(&p->ew, p->cfg.scan.sys, &p->got);
    take_events(p);
    /* Signals stay with the drawing thread. */
    int rc = thread_start(&p->thread, "shmwatch-poll", run, p);
    if (rc != 0) {
        release(p);
        errno = rc;
        return NULL;
    }
    return p;
}

bool poller_stop(struct poller *p)
{
    wake(p, &p->stop);
    pthread_join(p->thread, NULL);
    bool abandoned = p->abandoned;
    if (p->cfg.store) { /* the recording's last word */
        events_recorder(&p->got, clock_wall(), "stop", "the recorder was stopped");
        take_events(p);
    }
    release(p);
    return !abandoned;
}

bool poller_stalled(struct poller *p, double *running_s, char *where, size_t n)
{
    /* Under lock: the poller's thread ends the job only under it. */
    pthread_mutex_lock(&p->lock);
    double run = p->job ? clock_now() - scan_job_started(p->job) : 0;
    bool stalled = p->job && run >= scan_stall_limit(p->cfg.set->scan_interval_s);
    if (stalled) {
        pid_t pid;
        int fd;
        *running_s = run;
        scan_beacon_describe(scan_job_beacon(p->job), p->cfg.scan.sys, where, n, &pid, &fd);
    }
    pthread_mutex_unlock(&p->lock);
    return stalled;
}

int poller_fd(const struct poller *p)
{
    return p->pipe[0];
}

void poller_drain(struct poller *p)
{
    drain(p->pipe[0]);
}

int poller_target_gone(struct poller *p, time_t *when)
{
    pthread_mutex_lock(&p->lock);
    int gone = p->target_gone;
    *when = p->target_gone_at;
    pthread_mutex_unlock(&p->lock);
    return gone;
}

void poller_request_scan(struct poller *p)
{
    wake(p, &p->scan_requested);
}

size_t poller_take_events(struct poller *p, struct poller_event **out)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->nevents;
    *out = p->events;
    p->events = NULL;
    p->nevents = p->events_cap = 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}

struct snap *poller_take_snap(struct poller *p)
{
    pthread_mutex_lock(&p->lock);
    struct snap *s = p->snap;
    p->snap = NULL;
    pthread_mutex_unlock(&p->lock);
    return s;
}

bool poller_take_gauges(struct poller *p, struct gauges *out)
{
    pthread_mutex_lock(&p->lock);
    bool fresh = p->gauges_new;
    if (fresh) {
        gauges_free(out);
        *out = p->gauges;
        memset(&p->gauges, 0, sizeof(p->gauges));
        p->gauges_new = false;
    }
    pthread_mutex_unlock(&p->lock);
    return fresh;
}
