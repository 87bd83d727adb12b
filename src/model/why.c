/* The abnormal ends of a recording, explained (model/why.h). Each end is an
 * event; its moment is read from the snapshots around it in time order
 * (recorded snapshots and events both have milliseconds): the last one
 * before it and the first one after it. */
#include "model/why.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/budget.h"
#include "model/capacity.h"
#include "util/buf.h"
#include "util/units.h"
#include "util/xalloc.h"

/* An end this soon after another in its job is told as following it. */
#define WHY_FOLLOW_S 60.0

const char *why_fmt_time(char *dst, size_t n, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(dst, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return dst;
}

const char *why_fmt_clock(char *dst, size_t n, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(dst, n, "%H:%M:%S", &tm);
    return dst;
}

const char *why_fmt_of(char *dst, size_t n, uint64_t part, uint64_t whole)
{
    char a[32], b[32];
    fmt_size(a, sizeof(a), part);
    fmt_size(b, sizeof(b), whole);
    const char *ua = strchr(a, ' '), *ub = strchr(b, ' ');
    if (ua && ub && strcmp(ua, ub) == 0 && strcmp(ua, " B") != 0)
        snprintf(dst, n, "%.*s of %s", (int)(ua - a), a, b);
    else
        snprintf(dst, n, "%s of %s", a, b);
    return dst;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static uint64_t u64(const struct jd *v, const char *key)
{
    double x = jd_getnum(v, key, 0);
    return x > 0 && x < 1.8e19 ? (uint64_t)x : 0;
}

static bool has_num(const struct jd *v, const char *key)
{
    const struct jd *x = jd_get(v, key);
    return x && x->type == JD_NUM;
}

static const struct jd *snap_proc(const struct jd *s, int64_t pid);

static const struct jd *doc(const struct why_source *s, size_t i)
{
    return i < s->n ? s->doc(s->ctx, i) : NULL;
}

/* The snapshot nearest record i on one side: the last before (dir -1) or
 * the first after (dir +1); SIZE_MAX when none. */
static size_t snapshot_near(const struct why_source *s, size_t i, int dir)
{
    for (size_t j = i; dir < 0 ? j-- > 0 : ++j < s->n;)
        if (s->recs[j].snapshot && doc(s, j))
            return j;
    return SIZE_MAX;
}

/* The snapshot before an end is one that still shows the process running:
 * a death told from the scans (cause unknown) comes with the scan that
 * missed it, and a scan under way when the process died sorts before its
 * end (a snapshot's time is when its scan began) while it may show the
 * process a zombie and its segments gone. Up to this many snapshots back
 * are tried. */
#define WHY_BACK 5

/* Whether snapshot s shows pid running (listed, not a zombie). */
static bool shows_running(const struct jd *s, int64_t pid)
{
    const struct jd *p = snap_proc(s, pid);
    return p && strcmp(jd_getstr(p, "role", ""), "zombie") != 0;
}

static void around_pid(const struct why_source *s, size_t i, const struct why_death *d,
                       size_t *bi, size_t *ai)
{
    *bi = snapshot_near(s, i, -1);
    *ai = snapshot_near(s, i, +1);
    if (!d->has_pid || *bi == SIZE_MAX)
        return;
    size_t k = *bi;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(s, k, -1)) {
        if (shows_running(doc(s, k), d->pid)) {
            *bi = k;
            return;
        }
    }
}

/* The last snapshot after record i up to time to (0: the last of all). */
static size_t snapshot_last(const struct why_source *s, size_t i, double to)
{
    size_t best = SIZE_MAX;
    for (size_t j = i + 1; j < s->n; j++) {
        if (to > 0 && s->recs[j].t > to)
            break;
        if (s->recs[j].snapshot)
            best = j;
    }
    while (best != SIZE_MAX && best > i && !(s->recs[best].snapshot && doc(s, best)))
        best--;
    return best != SIZE_MAX && best > i ? best : SIZE_MAX;
}

static bool role_is_job(const char *role)
{
    return role && (!strcmp(role, "main") || !strcmp(role, "worker") ||
                    !strcmp(role, "shm_manager") || !strcmp(role, "orphan_worker"));
}

/* Whether exit event ev is an abnormal end; *cause its cause. */
static bool abnormal_exit(const struct jd *ev, const char **cause)
{
    const char *c = jd_getstr(ev, "cause", "");
    static const char *const kinds[] = {"sigbus", "oom_kill", "signal", "exit", "unknown"};
    *cause = NULL;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (!strcmp(c, kinds[k]))
            *cause = kinds[k];
    if (!*cause)
        return false;
    if (!strcmp(*cause, "exit"))
        return jd_getint(ev, "exit_code", 0) != 0;
    if (!strcmp(*cause, "unknown"))
        return role_is_job(jd_getstr(ev, "role", NULL));
    return true;
}

/* The process pid in snapshot s, or NULL. */
static const struct jd *snap_proc(const struct jd *s, int64_t pid)
{
    const struct jd *ps = jd_get(s, "processes");
    for (size_t i = 0; ps && i < ps->n; i++)
        if (jd_getint(&ps->items[i], "pid", -1) == pid)
            return &ps->items[i];
    return NULL;
}

static const struct jd *snap_group(const struct jd *s, int64_t main_pid)
{
    const struct jd *gs = jd_get(s, "groups");
    for (size_t i = 0; gs && i < gs->n; i++)
        if (jd_getint(&gs->items[i], "main_pid", -1) == main_pid)
            return &gs->items[i];
    return NULL;
}


/* Mount of snapshot s by id, else by path. */
static const struct jd *snap_mount(const struct jd *s, const char *id, const char *path)
{
    const struct jd *ms = jd_get(s, "mounts");
    for (size_t i = 0; id && ms && i < ms->n; i++) {
        const char *mid = jd_getstr(&ms->items[i], "id", NULL);
        if (mid && !strcmp(mid, id))
            return &ms->items[i];
    }
    for (size_t i = 0; path && ms && i < ms->n; i++) {
        const char *p = jd_getstr(&ms->items[i], "path", NULL);
        if (p && !strcmp(p, path))
            return &ms->items[i];
    }
    return NULL;
}

static const struct jd *mount_ctr(const struct jd *m, const char *ctr)
{
    const struct jd *cs = jd_get(m, "containers");
    for (size_t i = 0; ctr && cs && i < cs->n; i++) {
        const char *id = jd_getstr(&cs->items[i], "id", NULL);
        if (id && !strcmp(id, ctr))
            return &cs->items[i];
    }
    return NULL;
}

/* The pids of d's job as snapshot s knows them: the process, its main,
 * the main's workers and shm managers. */
struct pidset {
    int64_t p[256];
    size_t n;
};

static void pidset_add(struct pidset *ps, int64_t v)
{
    if (v <= 0 || ps->n == sizeof(ps->p) / sizeof(ps->p[0]))
        return;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i] == v)
            return;
    ps->p[ps->n++] = v;
}

static bool pidset_has(const struct pidset *ps, int64_t v)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i] == v)
            return true;
    return false;
}

/* The main of d's job: its group, or itself when it is a main. */
static int64_t job_of(const struct why_death *d)
{
    if (d->has_group)
        return d->group;
    if (d->has_pid && d->role && !strcmp(d->role, "main"))
        return d->pid;
    return 0;
}

static void job_pids(const struct why_death *d, const struct jd *s, struct pidset *ps)
{
    if (d->has_pid)
        pidset_add(ps, d->pid);
    int64_t main = job_of(d);
    pidset_add(ps, main);
    const struct jd *g = s ? snap_group(s, main) : NULL;
    const struct jd *w = jd_get(g, "workers"), *m = jd_get(g, "shm_managers");
    for (size_t i = 0; w && i < w->n; i++)
        pidset_add(ps, jd_int(&w->items[i], 0));
    for (size_t i = 0; m && i < m->n; i++)
        pidset_add(ps, jd_int(&m->items[i], 0));
}

/* Whether segment sg is d's job's: held by one of its processes, of its
 * group, or made by one of them. */
static bool seg_of_job(const struct jd *sg, const struct pidset *ps, int64_t main)
{
    if (main && jd_getint(sg, "group", 0) == main)
        return true;
    if (pidset_has(ps, jd_getint(sg, "creator_pid", 0)))
        return true;
    const struct jd *hs = jd_get(sg, "holders");
    for (size_t i = 0; hs && i < hs->n; i++)
        if (pidset_has(ps, jd_getint(&hs->items[i], "pid", 0)))
            return true;
    return false;
}

/* d's mount in snapshot s: the one holding most of its job's segments,
 * else its container's, else the host's, else the first. */
static const struct jd *find_mount(const struct why_death *d, const struct jd *s)
{
    const struct jd *ms = jd_get(s, "mounts");
    if (!ms || ms->type != JD_ARR || ms->n == 0)
        return NULL;
    struct pidset ps = {.n = 0};
    job_pids(d, s, &ps);
    const struct jd *segs = jd_get(s, "segments");
    const struct jd *best = NULL;
    uint64_t best_bytes = 0;
    for (size_t k = 0; k < ms->n; k++) {
        const char *id = jd_getstr(&ms->items[k], "id", NULL);
        uint64_t bytes = 0;
        bool any = false;
        for (size_t i = 0; id && segs && i < segs->n; i++) {
            const struct jd *sg = &segs->items[i];
            const char *mid = jd_getstr(sg, "mount_id", NULL);
            if (mid && !strcmp(mid, id) && seg_of_job(sg, &ps, job_of(d))) {
                bytes += u64(sg, "alloc_bytes");
                any = true;
            }
        }
        if (any && (!best || bytes > best_bytes)) {
            best = &ms->items[k];
            best_bytes = bytes;
        }
    }
    if (best)
        return best;
    for (size_t k = 0; d->container && k < ms->n; k++)
        if (mount_ctr(&ms->items[k], d->container))
            return &ms->items[k];
    for (size_t k = 0; !d->container && k < ms->n; k++) {
        const struct jd *cs = jd_get(&ms->items[k], "containers");
        if (!cs || cs->n == 0)
            return &ms->items[k];
    }
    return &ms->items[0];
}

/* The mount's owner's budget and cgroup (the node view gives each mount
 * its own), else the snapshot's. */
static const struct jd *mount_budget(const struct jd *s, const struct jd *m)
{
    const struct jd *b = jd_get(m, "budget");
    return b && b->type == JD_OBJ ? b : jd_get(s, "budget");
}

static const struct jd *mount_cgroup(const struct jd *s, const struct jd *m)
{
    const struct jd *c = jd_get(m, "cgroup");
    if (c && c->type == JD_OBJ)
        return c;
    c = jd_get(s, "cgroup");
    return c && c->type == JD_OBJ ? c : NULL;
}

/* The biggest groups with segments on mount id in snapshot s. */
static void top_groups(struct why_death *d, const struct jd *s, const char *id)
{
    const struct jd *segs = jd_get(s, "segments"), *gs = jd_get(s, "groups");
    for (size_t g = 0; gs && g < gs->n; g++) {
        int64_t main = jd_getint(&gs->items[g], "main_pid", 0);
        uint64_t bytes = 0;
        for (size_t i = 0; segs && i < segs->n; i++) {
            const struct jd *sg = &segs->items[i];
            const char *mid = jd_getstr(sg, "mount_id", NULL);
            if (mid && !strcmp(mid, id) && jd_getint(sg, "group", 0) == main)
                bytes += u64(sg, "alloc_bytes");
        }
        if (!bytes)
            continue;
        const struct jd *w = jd_get(&gs->items[g], "workers");
        struct why_group x = {main, bytes, w ? w->n : 0};
        size_t at = d->ntop;
        while (at > 0 && d->top[at - 1].shm_bytes < bytes)
            at--;
        if (at >= WHY_TOP)
            continue;
        size_t last = d->ntop < WHY_TOP ? d->ntop : WHY_TOP - 1;
        memmove(&d->top[at + 1], &d->top[at], (last - at) * sizeof(d->top[0]));
        d->top[at] = x;
        if (d->ntop < WHY_TOP)
            d->ntop++;
    }
}

/* The container of d's process and its names where the event and the
 * snapshot before left them out: from the nearest of the snapshots from bi
 * back (WHY_BACK of them) that shows the process in a container, its name
 * and pod from whichever of that snapshot's mounts lists the container. A
 * scan can miss a process's container (every process of its namespace
 * exiting while it is read: a container ending with the death), and a
 * death told against that scan names none. */
static void container_before(struct why_death *d, const struct why_source *src, size_t bi)
{
    size_t k = bi;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1)) {
        const struct jd *s = doc(src, k);
        const char *id = jd_getstr(snap_proc(s, d->pid), "container", NULL);
        if (!d->container && id)
            d->container = xstrdup(id);
        if (!id || strcmp(id, d->container) != 0)
            continue;
        const struct jd *ms = jd_get(s, "mounts"), *c = NULL;
        for (size_t i = 0; ms && i < ms->n && !c; i++)
            c = mount_ctr(&ms->items[i], id);
        if (!c)
            continue;
        if (!d->container_name)
            d->container_name = dup_or_null(jd_getstr(c, "name", NULL));
        if (!d->pod)
            d->pod = dup_or_null(jd_getstr(c, "pod", NULL));
        return;
    }
}

/* The mount, its fill before and at, the budget, the biggest groups. */
static void moment(struct why_death *d, const struct why_source *src, size_t i)
{
    size_t bi, ai;
    around_pid(src, i, d, &bi, &ai);
    const struct jd *before = bi != SIZE_MAX ? doc(src, bi) : NULL;
    const struct jd *at = ai != SIZE_MAX ? doc(src, ai) : NULL;
    const struct jd *m = before ? find_mount(d, before) : NULL;
    if (!m && at)
        m = find_mount(d, at);
    if (!m)
        return;
    d->has_mount = true;
    d->mount_id = dup_or_null(jd_getstr(m, "id", NULL));
    d->mount_path = dup_or_null(jd_getstr(m, "path", NULL));
    d->size = u64(m, "size_bytes");
    const struct jd *mb = before ? snap_mount(before, d->mount_id, d->mount_path) : NULL;
    const struct jd *ma = at ? snap_mount(at, d->mount_id, d->mount_path) : NULL;
    if (mb) {
        d->has_before = true;
        d->used_before = u64(mb, "used_bytes");
        d->t_before = src->recs[bi].t;
        d->pending_before = u64(mb, "pending_bytes");
        d->used_peak = d->used_before;
    }
    if (ma) {
        d->has_at = true;
        d->used_at = u64(ma, "used_bytes");
        d->t_at = src->recs[ai].t;
        if (!mb)
            d->size = u64(ma, "size_bytes");
        if (d->used_at > d->used_peak)
            d->used_peak = d->used_at;
    }
    /* A fill event between the two snapshots may have seen more. */
    size_t lo = bi != SIZE_MAX ? bi : 0, hi = ai != SIZE_MAX && ai > i ? ai : i;
    for (size_t k = lo; k < hi; k++) {
        if (src->recs[k].snapshot || strcmp(src->recs[k].event, "fill") != 0)
            continue;
        const struct jd *ev = doc(src, k);
        const char *mid = jd_getstr(ev, "mount_id", NULL);
        if (ev && mid && d->mount_id && !strcmp(mid, d->mount_id) &&
            u64(ev, "used_bytes") > d->used_peak)
            d->used_peak = u64(ev, "used_bytes");
    }
    /* Full: within 1 % (a page at least) of its size, or with less free
     * than one batch of the loader the snapshot before shows, or with more
     * promised to written-to-be segments than was free. */
    uint64_t slack = d->size / 100 > 4096 ? d->size / 100 : 4096;
    const struct jd *lb = mb ? jd_get(mount_budget(before, mb), "loader") : NULL;
    d->free_batch = lb && lb->type == JD_OBJ ? u64(lb, "batch_shm_bytes") : 0;
    d->full = d->size > 0 && (d->used_peak + slack >= d->size ||
                              (d->free_batch && d->used_peak + d->free_batch > d->size) ||
                              (d->has_before && d->pending_before &&
                               d->used_before + d->pending_before >= d->size));

    /* The budget just before, else at; its app and shm the most of the two
     * (an OOM kill frees the victim's own memory, not its /dev/shm pages,
     * and comes while they grow faster than snapshots are taken). */
    const struct jd *s = mb ? before : at;
    const struct jd *sm = mb ? mb : ma;
    const struct jd *b = mount_budget(s, sm);
    if (b && b->type == JD_OBJ) {
        d->has_budget = true;
        d->limit = u64(b, "limit_bytes");
        d->app = u64(b, "app_bytes");
        d->shm_used = u64(b, "shm_used_bytes");
        d->headroom = u64(b, "headroom_bytes");
        d->limit_cgroup = !strcmp(jd_getstr(b, "limit_source", ""), "cgroup");
        const struct jd *ba = mb && ma ? mount_budget(at, ma) : NULL;
        if (ba && ba->type == JD_OBJ && u64(ba, "limit_bytes") == d->limit) {
            if (u64(ba, "app_bytes") > d->app)
                d->app = u64(ba, "app_bytes");
            if (u64(ba, "shm_used_bytes") > d->shm_used)
                d->shm_used = u64(ba, "shm_used_bytes");
            uint64_t used = d->app + d->shm_used;
            d->headroom = d->limit > used ? d->limit - used : 0;
        }
    }
    const struct jd *cg = mount_cgroup(s, sm);
    if (!d->cgroup && cg)
        d->cgroup = dup_or_null(jd_getstr(cg, "path", NULL));
    if (d->mount_id)
        top_groups(d, s, d->mount_id);

    /* Who, where the event did not say. */
    const struct jd *p = d->has_pid ? snap_proc(before ? before : at, d->pid) : NULL;
    if (!d->comm && p)
        d->comm = dup_or_null(jd_getstr(p, "comm", NULL));
    if (!d->role && p)
        d->role = dup_or_null(jd_getstr(p, "role", NULL));
    if (!d->has_group && p && has_num(p, "group")) {
        d->has_group = true;
        d->group = jd_getint(p, "group", 0);
    }
    if (!d->container && p)
        d->container = dup_or_null(jd_getstr(p, "container", NULL));
    const struct jd *c = mount_ctr(sm, d->container);
    if (c && !d->container_name)
        d->container_name = dup_or_null(jd_getstr(c, "name", NULL));
    if (c && !d->pod)
        d->pod = dup_or_null(jd_getstr(c, "pod", NULL));
    if (d->has_pid && (!d->container || !d->container_name))
        container_before(d, src, bi);
}

static bool is_role(const struct why_death *d, const char *role)
{
    return d->role && !strcmp(d->role, role);
}

/* The loader of d's job in the snapshots before (from snapshot k back):
 * each says what it saw in flight at its moment, and one may miss a batch
 * a worker is writing, so the most of the last few is the loader's. */
static void loader_before(struct why_death *d, const struct why_source *src, size_t k)
{
    int64_t job = job_of(d);
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1)) {
        const struct jd *s = doc(src, k);
        const struct jd *m = d->has_mount ? snap_mount(s, d->mount_id, d->mount_path) : NULL;
        const struct jd *b = m ? mount_budget(s, m) : NULL;
        const struct jd *l = b && b->type == JD_OBJ ? jd_get(b, "loader") : NULL;
        if (!l || l->type != JD_OBJ || (job && jd_getint(l, "main_pid", 0) != job))
            continue;
        if (u64(l, "batch_shm_bytes") > d->loader_batch)
            d->loader_batch = u64(l, "batch_shm_bytes");
        if (u64(l, "workers") > d->loader_workers)
            d->loader_workers = u64(l, "workers");
        if (u64(l, "prefetch_factor") > d->loader_prefetch)
            d->loader_prefetch = u64(l, "prefetch_factor");
    }
}

/* The sizes that fit what was recorded: the budget's recommendations of the
 * snapshots before and at (made from the recorder's peaks, as the live
 * budget makes them); after a Bus error on a full mount the peak it saw is
 * only the mount's size, so the loader's own arithmetic (plan --observe:
 * one batch x (workers x prefetch factor + 2)) decides when it is more. */
static void advise(struct why_death *d, const struct why_source *src, size_t i)
{
    uint64_t peak_app = 0;
    size_t near[2];
    around_pid(src, i, d, &near[0], &near[1]);
    for (int dir = -1; dir <= 1; dir += 2) {
        size_t k = near[dir > 0];
        const struct jd *s = k != SIZE_MAX ? doc(src, k) : NULL;
        const struct jd *m = s && d->has_mount ? snap_mount(s, d->mount_id, d->mount_path) : NULL;
        const struct jd *b = m ? mount_budget(s, m) : NULL;
        if (!b || b->type != JD_OBJ)
            continue;
        d->has_advice = true;
        if (u64(b, "recommended_shm_size_bytes") > d->rec_shm)
            d->rec_shm = u64(b, "recommended_shm_size_bytes");
        if (u64(b, "recommended_memory_bytes") > d->rec_memory)
            d->rec_memory = u64(b, "recommended_memory_bytes");
        if (u64(b, "app_bytes") > peak_app)
            peak_app = u64(b, "app_bytes");
    }
    loader_before(d, src, near[0]);
    d->need_shm = d->used_peak;
    bool bus = !strcmp(d->cause, "sigbus") ||
               (!strcmp(d->cause, "unknown") && (is_role(d, "worker") || is_role(d, "orphan_worker")));
    if (!d->has_advice || !bus || !d->full || !d->loader_batch)
        return;
    struct capacity_input in = {.observed_batch_shm = d->loader_batch,
                                .workers = d->loader_workers,
                                .prefetch = d->loader_prefetch};
    struct capacity_result r;
    char *cause = NULL;
    if (capacity_compute(&in, &r, &cause) != 0) {
        free(cause);
        return;
    }
    if (r.shm_peak <= d->used_peak)
        return;
    d->from_loader = true;
    d->need_shm = r.shm_peak;
    if (r.rec_shm_size > d->rec_shm)
        d->rec_shm = r.rec_shm_size;
    uint64_t margin;
    uint64_t mem = budget_rec_memory(peak_app, d->rec_shm, &margin);
    if (mem > d->rec_memory)
        d->rec_memory = mem;
}

/* An end that follows another in its job gets the job's advice: the
 * first end's, when it asks for more. */
static void follow_advice(struct why_death *d, const struct why_result *r)
{
    for (size_t k = 0; d->after_pid && k < r->n; k++) {
        const struct why_death *e = &r->d[k];
        if (e->pid != d->after_pid || job_of(e) != job_of(d) || !e->has_advice ||
            e->rec_shm <= d->rec_shm)
            continue;
        d->has_advice = true;
        d->rec_shm = e->rec_shm;
        d->need_shm = e->need_shm;
        d->from_loader = e->from_loader;
        d->loader_batch = e->loader_batch;
        d->loader_workers = e->loader_workers;
        d->loader_prefetch = e->loader_prefetch;
        if (e->rec_memory > d->rec_memory)
            d->rec_memory = e->rec_memory;
    }
}

/* Whether pid was a DataLoader group's main in a snapshot shortly before
 * record i. */
static bool was_main(const struct why_source *src, size_t i, int64_t pid)
{
    size_t k = snapshot_near(src, i, -1);
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1))
        if (snap_group(doc(src, k), pid))
            return true;
    return false;
}

/* The main of the DataLoader group that had pid among its workers or shm
 * managers in a snapshot shortly before record i, 0 for none. */
static int64_t group_before(const struct why_source *src, size_t i, int64_t pid)
{
    size_t k = snapshot_near(src, i, -1);
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1)) {
        const struct jd *gs = jd_get(doc(src, k), "groups");
        for (size_t g = 0; gs && g < gs->n; g++) {
            static const char *const lists[] = {"workers", "shm_managers"};
            for (size_t l = 0; l < 2; l++) {
                const struct jd *ps = jd_get(&gs->items[g], lists[l]);
                for (size_t j = 0; ps && j < ps->n; j++)
                    if (jd_int(&ps->items[j], 0) == pid)
                        return jd_getint(&gs->items[g], "main_pid", 0);
            }
        }
    }
    return 0;
}

/* The snapshot before record i when it shows d's job ended: no group of
 * its main (for a death outside a job, the process not running). A death
 * during the last scan of a recording sorts after that scan's snapshot (a
 * snapshot's time is when its scan began), and no snapshot follows it: a
 * recording stopped then, or why asked at once. SIZE_MAX when it shows the
 * job still running. */
static size_t snapshot_ended(const struct why_source *src, size_t i, const struct why_death *d)
{
    size_t k = snapshot_near(src, i, -1);
    if (k == SIZE_MAX)
        return SIZE_MAX;
    const struct jd *s = doc(src, k);
    int64_t job = job_of(d);
    if (job)
        return snap_group(s, job) ? SIZE_MAX : k;
    return d->has_pid && shows_running(s, d->pid) ? SIZE_MAX : k;
}

/* What d's job left behind: in the last snapshot of the window after it
 * (else the one under way at its end), its segments that nobody holds
 * (orphans, or unheld while too young to be called orphans). */
static void left_behind(struct why_death *d, const struct why_source *src, size_t i,
                        double to)
{
    size_t bi, ai;
    around_pid(src, i, d, &bi, &ai);
    size_t li = snapshot_last(src, i, to);
    if (li == SIZE_MAX)
        li = ai;
    if (li == SIZE_MAX)
        li = snapshot_ended(src, i, d);
    if (li == SIZE_MAX)
        return;
    const struct jd *last = doc(src, li);
    /* The job's processes as the snapshots before the end knew them: a
     * snapshot taken while a killed job dies shows some of them gone. */
    struct pidset ps = {.n = 0};
    job_pids(d, NULL, &ps);
    size_t k = bi;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1))
        job_pids(d, doc(src, k), &ps);
    d->has_left = true;
    const struct jd *segs = jd_get(last, "segments");
    for (size_t k = 0; segs && k < segs->n; k++) {
        const struct jd *sg = &segs->items[k];
        const char *st = jd_getstr(sg, "state", "");
        if (strcmp(st, "orphan") != 0 && strcmp(st, "unheld") != 0)
            continue;
        if (!pidset_has(&ps, jd_getint(sg, "creator_pid", 0)) &&
            !(job_of(d) && jd_getint(sg, "group", 0) == job_of(d)))
            continue;
        d->left_segments++;
        d->left_bytes += u64(sg, "alloc_bytes");
    }
}

/* "the /dev/shm of trainer" or "/dev/shm". */
static void mount_name(struct buf *b, const struct why_death *d)
{
    const char *who = d->container_name ? d->container_name : d->pod;
    if (who)
        buf_printf(b, "the %s of %s", d->mount_path ? d->mount_path : "/dev/shm", who);
    else
        buf_printf(b, "%s", d->mount_path ? d->mount_path : "/dev/shm");
}



static void diagnose(struct why_death *d)
{
    struct buf b;
    buf_init(&b);
    char x[64], y[64], z[64], w[64];
    if (!strcmp(d->cause, "sigbus")) {
        const char *actor = is_role(d, "worker") || is_role(d, "orphan_worker")
                                ? "a worker writing a batch"
                                : "a process writing to it";
        if (d->has_mount && d->full) {
            uint64_t slack = d->size / 100 > 4096 ? d->size / 100 : 4096;
            bool brim = d->used_peak + slack >= d->size;
            mount_name(&b, d);
            buf_printf(&b, " was full, %s", why_fmt_of(x, sizeof(x), d->used_peak, d->size));
            if (!brim && d->free_batch && d->used_peak + d->free_batch > d->size)
                buf_printf(&b, " with less free than one batch (%s)",
                           fmt_size(y, sizeof(y), d->free_batch));
            else if (!brim)
                buf_printf(&b, " with %s more promised to segments not yet written",
                           fmt_size(y, sizeof(y), d->pending_before));
            buf_printf(&b, ": %s touched a page the tmpfs could not give, which is the Bus error",
                       actor);
        } else if (d->has_mount && d->has_before) {
            mount_name(&b, d);
            buf_printf(&b, " held %s (%.0f %%) in the last snapshot before",
                       why_fmt_of(x, sizeof(x), d->used_before, d->size),
                       d->size ? 100.0 * (double)d->used_before / (double)d->size : 0.0);
            if (d->pending_before)
                buf_printf(&b, ", and %s more was promised to segments not yet written",
                           fmt_size(y, sizeof(y), d->pending_before));
            buf_printf(&b,
                       ": it filled up between two snapshots, and %s touched a page the tmpfs "
                       "could not give, which is the Bus error",
                       actor);
        } else {
            buf_adds(&b, "a Bus error (SIGBUS), and no snapshot before it shows its /dev/shm; on "
                         "a tmpfs it is a page the tmpfs could not give");
        }
    } else if (!strcmp(d->cause, "oom_kill")) {
        if (d->cgroup)
            buf_printf(&b, "the OOM killer of cgroup %s fired", d->cgroup);
        else
            buf_adds(&b, "the OOM killer fired");
        if (d->has_budget && d->limit_cgroup)
            buf_printf(&b, " with app %s + shm %s of %s", fmt_size(x, sizeof(x), d->app),
                       fmt_size(y, sizeof(y), d->shm_used), fmt_size(z, sizeof(z), d->limit));
        else if (d->has_budget)
            buf_printf(&b, " with app %s + shm %s (the machine's %s)",
                       fmt_size(x, sizeof(x), d->app), fmt_size(y, sizeof(y), d->shm_used),
                       fmt_size(z, sizeof(z), d->limit));
        if (d->has_budget && d->shm_used && d->shm_used >= d->limit / 10)
            buf_adds(&b, ": /dev/shm's pages count against the memory limit (-m), so the "
                         "batches in it and the application ran out of it together");
    } else if (!strcmp(d->cause, "signal")) {
        const char *sig = d->signal ? d->signal : "a signal";
        static const char *const sent[] = {"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT",
                                           "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM"};
        bool by_someone = false;
        for (size_t k = 0; k < sizeof(sent) / sizeof(sent[0]); k++)
            by_someone |= d->signal && !strcmp(d->signal, sent[k]);
        if (by_someone)
            buf_printf(&b, "it was killed by %s, sent by another process or the system (no OOM "
                           "kill was counted in its cgroup)",
                       sig);
        else
            buf_printf(&b, "it crashed with %s", sig);
    } else if (!strcmp(d->cause, "exit")) {
        buf_printf(&b, "it exited with status %lld", (long long)d->exit_code);
    } else {
        buf_adds(&b, "it was gone at the next scan and the cause is unknown: the recorder did not "
                     "see the kernel's process events (that needs root in the host's network "
                     "namespace, and a kernel queue that did not overflow)");
        if (d->has_mount && d->full && (is_role(d, "worker") || is_role(d, "orphan_worker"))) {
            buf_adds(&b, ". ");
            mount_name(&b, d);
            buf_printf(&b, " was full just before, %s: the likely cause is the Bus error of a "
                           "worker writing a batch",
                       why_fmt_of(x, sizeof(x), d->used_peak, d->size));
        }
    }
    if (d->after_pid)
        buf_printf(&b, ". It followed the end of %lld (%s) %.1f s before in the same job",
                   (long long)d->after_pid, d->after_cause, d->after_dt);
    if (d->left_segments && is_role(d, "shm_manager"))
        buf_printf(&b, ". The shm manager died: its %s of batches are orphans since %s",
                   fmt_size(w, sizeof(w), d->left_bytes), why_fmt_clock(z, sizeof(z), d->t));
    else if (d->left_segments && (!d->after_pid || is_role(d, "main")))
        buf_printf(&b, ". Its job left %llu segment%s (%s) that nobody holds: orphans since %s",
                   (unsigned long long)d->left_segments, d->left_segments == 1 ? "" : "s",
                   fmt_size(w, sizeof(w), d->left_bytes), why_fmt_clock(z, sizeof(z), d->t));
    buf_addc(&b, '.');
    d->diagnosis = buf_steal(&b);
}

/* Whether d passes f's pid and container. */
static bool wanted(const struct why_death *d, const struct why_filter *f)
{
    if (f->pid && !(d->has_pid && d->pid == f->pid) && job_of(d) != f->pid)
        return false;
    if (f->container) {
        const char *n = f->container;
        size_t len = strlen(n);
        bool hex = len >= 12 && strspn(n, "0123456789abcdef") == len;
        bool match = (d->container_name && !strcmp(d->container_name, n)) ||
                     (d->pod && !strcmp(d->pod, n)) ||
                     (d->container && (!strcmp(d->container, n) ||
                                       (hex && !strncmp(d->container, n, len))));
        if (!match)
            return false;
    }
    return true;
}

/* The exit event whose process is the victim of oom_kill event k: the
 * nearest with that pid within a few seconds. */
static bool victim_has_exit(const struct why_source *src, size_t k, int64_t victim)
{
    for (size_t j = 0; j < src->n; j++) {
        if (src->recs[j].snapshot || strcmp(src->recs[j].event, "exit") != 0)
            continue;
        double dt = src->recs[j].t - src->recs[k].t;
        if (dt < -10 || dt > 10)
            continue;
        const struct jd *ev = doc(src, j);
        if (ev && jd_getint(ev, "pid", 0) == victim)
            return true;
    }
    return false;
}

/* The OOM kill event near exit event i whose victim it is: its cgroup. */
static const char *oom_cgroup(const struct why_source *src, size_t i, int64_t pid)
{
    const char *any = NULL;
    for (size_t j = 0; j < src->n; j++) {
        if (src->recs[j].snapshot || strcmp(src->recs[j].event, "oom_kill") != 0)
            continue;
        double dt = src->recs[j].t - src->recs[i].t;
        if (dt < -10 || dt > 10)
            continue;
        const struct jd *ev = doc(src, j);
        if (!ev)
            continue;
        if (jd_getint(ev, "victim", 0) == pid)
            return jd_getstr(ev, "cgroup", NULL);
        if (!any)
            any = jd_getstr(ev, "cgroup", NULL);
    }
    return any;
}

static void death_free(struct why_death *d)
{
    free(d->comm);
    free(d->role);
    free(d->container);
    free(d->container_name);
    free(d->pod);
    free(d->signal);
    free(d->cgroup);
    free(d->mount_id);
    free(d->mount_path);
    free(d->diagnosis);
}

void why_find(const struct why_source *src, const struct why_filter *f, struct why_result *r)
{
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < src->n; i++) {
        const struct why_rec *rec = &src->recs[i];
        if (rec->snapshot || (f->from > 0 && rec->t < f->from) || (f->to > 0 && rec->t > f->to))
            continue;
        bool is_exit = !strcmp(rec->event, "exit"), is_oom = !strcmp(rec->event, "oom_kill");
        if (!is_exit && !is_oom)
            continue;
        const struct jd *ev = doc(src, i);
        if (!ev)
            continue;
        struct why_death d = {.t = rec->t};
        if (is_exit) {
            if (!abnormal_exit(ev, &d.cause))
                continue;
            d.has_pid = has_num(ev, "pid");
            d.pid = jd_getint(ev, "pid", 0);
            d.comm = dup_or_null(jd_getstr(ev, "comm", NULL));
            d.role = dup_or_null(jd_getstr(ev, "role", NULL));
            if (d.has_pid && was_main(src, i, d.pid)) {
                /* Its workers died a moment before it, and the last model
                 * saw it without them: it was their main all the same. */
                free(d.role);
                d.role = xstrdup("main");
            }
            d.has_group = has_num(ev, "group");
            d.group = jd_getint(ev, "group", 0);
            if (d.has_pid && !d.has_group) {
                /* Its main died a moment before it, and the last model saw
                 * it without its group: the snapshots before still show it. */
                int64_t g = group_before(src, i, d.pid);
                d.has_group = g > 0;
                d.group = g;
            }
            d.signal = dup_or_null(jd_getstr(ev, "signal", NULL));
            d.has_exit_code = has_num(ev, "exit_code");
            d.exit_code = jd_getint(ev, "exit_code", 0);
            if (!strcmp(d.cause, "oom_kill"))
                d.cgroup = dup_or_null(oom_cgroup(src, i, d.pid));
        } else {
            int64_t victim = jd_getint(ev, "victim", 0);
            if (victim > 0 && victim_has_exit(src, i, victim))
                continue; /* told by its exit event */
            d.cause = "oom_kill";
            d.has_pid = victim > 0;
            d.pid = victim;
            d.comm = dup_or_null(jd_getstr(ev, "victim_comm", NULL));
            d.signal = xstrdup("SIGKILL");
            d.cgroup = dup_or_null(jd_getstr(ev, "cgroup", NULL));
        }
        d.container = dup_or_null(jd_getstr(ev, "container", NULL));
        d.container_name = dup_or_null(jd_getstr(ev, "container_name", NULL));
        moment(&d, src, i);
        if (!wanted(&d, f)) {
            death_free(&d);
            continue;
        }
        /* The earlier end in its job it followed. */
        int64_t job = job_of(&d);
        for (size_t k = r->n; job && k-- > 0;) {
            const struct why_death *e = &r->d[k];
            if (d.t - e->t > WHY_FOLLOW_S)
                break;
            if (job_of(e) == job) {
                d.after_pid = e->pid;
                d.after_cause = e->signal ? e->signal : e->cause;
                d.after_dt = d.t - e->t;
            }
        }
        advise(&d, src, i);
        follow_advice(&d, r);
        left_behind(&d, src, i, f->to);
        diagnose(&d);
        *VEC_PUSH(r->d, r->n, r->cap) = d;
    }
}

void why_result_free(struct why_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        death_free(&r->d[i]);
    free(r->d);
    memset(r, 0, sizeof(*r));
}
