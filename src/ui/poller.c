#include "ui/poller.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "model/history.h"
#include "collect/scanjob.h"
#include "util/clock.h"
#include "util/thread.h"
#include "util/buf.h"
#include "util/xalloc.h"

struct poller {
    struct poller_cfg cfg;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int pipe[2];
    /* Under lock. */
    bool stop, scan_requested;
    bool scanning;       /* a scan is under way, since scan_started (clock_now) */
    double scan_started;
    struct scan_beacon beacon; /* where it is (written by the thread, read by any) */
    struct snap *snap;    /* newest, not yet taken */
    struct gauges gauges; /* newest */
    bool gauges_new;
    int target_gone; /* enum scan_target: not OK once the --pid process is gone */
    time_t target_gone_at;
    /* The thread's own. */
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

static void wake(struct poller *p)
{
    ssize_t rc = write(p->pipe[1], "x", 1);
    (void)rc; /* a full pipe already says "something new" */
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

/* Under lock: the readings of ml as the newest gauges. */
static void publish_gauges(struct poller *p, const struct mount_list *ml, double t)
{
    gauges_free(&p->gauges);
    p->gauges.t = t;
    p->gauges.n = ml->n;
    p->gauges.items = xcalloc(ml->n ? ml->n : 1, sizeof(*p->gauges.items));
    for (size_t i = 0; i < ml->n; i++) {
        struct gauge *g = &p->gauges.items[i];
        g->path = xstrdup(ml->items[i].path);
        g->dev = ml->items[i].dev;
        g->key = ml->items[i].dev ? str_printf("%u:%u", major(g->dev), minor(g->dev))
                                  : xstrdup(ml->items[i].path);
        g->ok = ml->items[i].stat_ok;
        g->size = ml->items[i].size;
        g->used = ml->items[i].used;
    }
    p->gauges_new = true;
}

/* A new snapshot, or NULL when the watched process has gone (said in
 * *gone): the last snapshot is then the last word about it. */
static struct snap *take_scan(struct poller *p, int *gone)
{
    struct snap *s = xcalloc(1, sizeof(*s));
    *gone = SCAN_TARGET_OK;
    int rc = scan_run(&p->cfg.scan, &s->scan);
    if (rc < 0 && s->scan.target_state != SCAN_TARGET_OK) {
        *gone = s->scan.target_state;
        scan_free(&s->scan);
        free(s);
        return NULL;
    }
    /* Any other failure (the watched process's namespaces cannot be read:
     * not ours) leaves a scan whose warnings say it: shown as it is. */
    struct model_opts mo;
    model_opts_default(&mo);
    mo.warn_pct = p->cfg.warn_pct;
    mo.crit_pct = p->cfg.crit_pct;
    mo.orphan_min_age_s = p->cfg.orphan_min_age_s;
    mo.trust_pids = p->cfg.trust_pids;
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
    worker_memory_learn(&p->workers, &s->model);
    group_peaks_learn(&p->group_peaks, &s->model);
    mount_memory_learn(&p->mount_mem, &s->model);
    for (size_t i = 0; !s->oom_mount_new && i < s->scan.mounts.n; i++) {
        char key[sizeof(p->mount_mem.items->key)];
        const struct mount_mem *e =
            node_owner(&s->scan.node, i)
                ? mount_memory_find(&p->mount_mem, mount_memory_key(&s->scan, i, key, sizeof(key)))
                : NULL;
        if (e && e->oom_new) {
            s->oom_mount = i;
            s->oom_mount_new = e->oom_new;
        }
    }
    if (s->model.budget.app > p->peak_app)
        p->peak_app = s->model.budget.app;
    return s;
}

/* --pid: is the watched process still the one first seen? Yes too when
 * that cannot be told (out of fds): the scan it would ask for checks again,
 * and is no better placed to. */
static bool target_same(const struct poller *p)
{
    return sysroot_pid_check(p->cfg.scan.sys) != 0;
}

static void *run(void *arg)
{
    struct poller *p = arg;
    double next_scan = 0, next_gauge = clock_now() + p->cfg.gauge_interval_s;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        double now = clock_now();
        if (p->scan_requested || now >= next_scan) {
            p->scan_requested = false;
            p->scanning = true;
            p->scan_started = now;
            pthread_mutex_unlock(&p->lock);
            int gone;
            struct snap *s = take_scan(p, &gone);
            if (!s) {
                /* Nothing more to watch: the last snapshot and gauges stay. */
                pthread_mutex_lock(&p->lock);
                p->scanning = false;
                p->target_gone = gone;
                p->target_gone_at = time(NULL);
                wake(p);
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
            now = clock_now();
            pthread_mutex_lock(&p->lock);
            p->scanning = false;
            snap_free(p->snap);
            p->snap = s;
            publish_gauges(p, &p->ml, now);
            next_scan = now + p->cfg.scan_interval_s;
            next_gauge = now + p->cfg.gauge_interval_s;
            wake(p);
            continue;
        }
        if (now >= next_gauge && !target_same(p)) {
            /* The watched process is gone: its mounts are out of reach. The
             * scan says so, and keeps the last readings on screen. */
            p->scan_requested = true;
            continue;
        }
        if (now >= next_gauge) {
            pthread_mutex_unlock(&p->lock);
            if (p->gauge_fds) { /* --all: each mount below the root it was read through */
                node_gauges_refresh(p->gauge_fds, p->cfg.scan.sys, &p->ml);
            } else {
                mounts_refresh(p->cfg.scan.sys, &p->ml);
            }
            note_peak(p, &p->ml);
            now = clock_now();
            pthread_mutex_lock(&p->lock);
            publish_gauges(p, &p->ml, now);
            next_gauge = now + p->cfg.gauge_interval_s;
            wake(p);
            continue;
        }
        struct timespec ts = clock_deadline(next_scan < next_gauge ? next_scan : next_gauge);
        pthread_cond_timedwait(&p->cond, &p->lock, &ts);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

struct poller *poller_start(const struct poller_cfg *cfg)
{
    struct poller *p = xcalloc(1, sizeof(*p));
    p->cfg = *cfg;
    p->cfg.scan.beacon = &p->beacon;
    scan_beacon_at(&p->beacon, SCAN_IDLE, 0, -1);
    if (pipe2(p->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    clock_cond_init(&p->cond);
    int rc = thread_start(&p->thread, run, p); /* signals stay with the drawing thread */
    if (rc != 0) {
        close(p->pipe[0]);
        close(p->pipe[1]);
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        errno = rc;
        return NULL;
    }
    return p;
}

bool poller_stop(struct poller *p)
{
    if (!p)
        return true;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    bool stuck = p->scanning &&
                 clock_now() - p->scan_started >= scan_stall_limit(p->cfg.scan_interval_s);
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (stuck)
        return false;
    pthread_join(p->thread, NULL);
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
    return true;
}

bool poller_stalled(struct poller *p, double *running_s, char *where, size_t n)
{
    pthread_mutex_lock(&p->lock);
    double run = p->scanning ? clock_now() - p->scan_started : 0;
    pthread_mutex_unlock(&p->lock);
    if (run < scan_stall_limit(p->cfg.scan_interval_s))
        return false;
    *running_s = run;
    pid_t pid;
    int fd;
    scan_beacon_describe(&p->beacon, p->cfg.scan.sys, where, n, &pid, &fd);
    return true;
}

int poller_fd(const struct poller *p)
{
    return p->pipe[0];
}

void poller_drain(struct poller *p)
{
    char b[64];
    while (read(p->pipe[0], b, sizeof(b)) > 0)
        ;
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
    pthread_mutex_lock(&p->lock);
    p->scan_requested = true;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
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
