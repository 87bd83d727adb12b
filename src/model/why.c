/* The abnormal ends of a recording, explained (model/why.h). Each end is an
 * event; its moment is read from the snapshots around it (struct end) in
 * time order: recorded snapshots and events both have milliseconds. */
#include "model/why.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/budget.h"
#include "model/capacity.h"
#include "util/buf.h"
#include "util/ctrref.h"
#include "util/units.h"
#include "util/xalloc.h"

/* An end this soon after another in its job is told as following it. */
#define WHY_FOLLOW_S 60.0
/* An exit event and an OOM kill event this near in time are one death. */
#define WHY_NEAR_S 10.0

/* The snapshot before an end is one that still shows the process running:
 * a death told from the scans (cause unknown) comes with the scan that
 * missed it, and a scan under way when the process died sorts before its
 * end (a snapshot's time is when its scan began) while it may show the
 * process a zombie and its segments gone. Up to this many snapshots back
 * are tried, and as many are read for what the event does not say. */
#define WHY_BACK 5

static const char *fmt_utc(char *dst, size_t n, double t, const char *fmt)
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(dst, n, fmt, &tm);
    return dst;
}

const char *why_fmt_time(char *dst, size_t n, double t)
{
    return fmt_utc(dst, n, t, "%04Y-%m-%d %H:%M:%S UTC");
}

const char *why_fmt_clock(char *dst, size_t n, double t)
{
    return fmt_utc(dst, n, t, "%H:%M:%S");
}

/* Sets *dst, while it is still unknown, to member key of v. */
static void fill_str(char **dst, const struct jd *v, const char *key)
{
    if (!*dst)
        *dst = jd_strdup(jd_get(v, key));
}

static void raise_to(uint64_t *most, const struct jd *v, const char *key)
{
    if (jd_getu64(v, key) > *most)
        *most = jd_getu64(v, key);
}

/* Whether member key of v is the string s (never when s is NULL). */
static bool str_is(const struct jd *v, const char *key, const char *s)
{
    const char *x = jd_getstr(v, key, NULL);
    return x && s && !strcmp(x, s);
}

static const struct jd *obj(const struct jd *v, const char *key)
{
    const struct jd *x = jd_get(v, key);
    return jd_is(x, JD_OBJ) ? x : NULL;
}

static const struct jd *item_with_int(const struct jd *a, const char *key, int64_t v)
{
    for (size_t i = 0; i < jd_len(a); i++)
        if (jd_getint(jd_at(a, i), key, -1) == v)
            return jd_at(a, i);
    return NULL;
}

static const struct jd *item_with_str(const struct jd *a, const char *key, const char *s)
{
    for (size_t i = 0; i < jd_len(a); i++)
        if (str_is(jd_at(a, i), key, s))
            return jd_at(a, i);
    return NULL;
}

/* The entry of the NULL-ended list equal to s, or NULL. */
static const char *one_of(const char *s, const char *const *list)
{
    for (; s && *list; list++)
        if (!strcmp(s, *list))
            return *list;
    return NULL;
}

static const struct jd *snap_proc(const struct jd *s, int64_t pid)
{
    return item_with_int(jd_get(s, "processes"), "pid", pid);
}

static const struct jd *snap_group(const struct jd *s, int64_t main_pid)
{
    return item_with_int(jd_get(s, "groups"), "main_pid", main_pid);
}

static const struct jd *snap_mount(const struct jd *s, const char *id, const char *path)
{
    const struct jd *ms = jd_get(s, "mounts");
    const struct jd *m = item_with_str(ms, "id", id);
    return m ? m : item_with_str(ms, "path", path);
}

/* d's container as its records name it. */
static struct container_ref death_ctr(const struct why_death *d)
{
    return (struct container_ref){d->container, d->container_ns, d->container_ns_known};
}

/* Sets d's container, while it is still unknown, to the one record v names
 * in its member key and its "containerd_namespace". */
static void fill_ctr(struct why_death *d, const struct jd *v, const char *key)
{
    if (d->container)
        return;
    struct container_ref r = container_ref_read(v, key);
    if (!r.id)
        return;
    d->container = xstrdup(r.id);
    d->container_ns = r.ns ? xstrdup(r.ns) : NULL;
    d->container_ns_known = r.ns_known;
}

/* Whether record v names d's container in its member key. */
static bool names_ctr(const struct jd *v, const char *key, const struct why_death *d)
{
    struct container_ref r = container_ref_read(v, key), c = death_ctr(d);
    return container_ref_same(&r, &c);
}

/* d's container among those that see mount m, or NULL. */
static const struct jd *mount_ctr(const struct jd *m, const struct why_death *d)
{
    const struct jd *cs = jd_get(m, "containers");
    for (size_t i = 0; i < jd_len(cs); i++)
        if (names_ctr(jd_at(cs, i), "id", d))
            return jd_at(cs, i);
    return NULL;
}

/* The budget or cgroup (key) of mount m's owner (the node view gives each
 * mount its own), else snapshot s's; NULL when neither is an object. */
static const struct jd *mount_obj(const struct jd *s, const struct jd *m, const char *key)
{
    const struct jd *x = obj(m, key);
    return x ? x : obj(s, key);
}

/* The DataLoader the budget of mount m (of snapshot s) saw, or NULL. */
static const struct jd *mount_loader(const struct jd *s, const struct jd *m)
{
    return m ? obj(mount_obj(s, m, "budget"), "loader") : NULL;
}

static bool shows_running(const struct jd *s, int64_t pid)
{
    const struct jd *p = snap_proc(s, pid);
    return p && !str_is(p, "role", "zombie");
}

/* The records being read, and where the snapshots and fill events among
 * them are: for each record i (and n, past the last) the last snapshot
 * before it, the first after it and the first fill event at or after it
 * (SIZE_MAX: none), found in one pass each way, so that what an end reads
 * around it is looked up rather than searched for through every record
 * between. */
struct recording {
    const struct why_source *src;
    size_t *prev, *next, *fill; /* src->n + 1 each */
};

static void recording_init(struct recording *rc, const struct why_source *src)
{
    *rc = (struct recording){.src = src};
    rc->prev = xcalloc(src->n + 1, sizeof(*rc->prev));
    rc->next = xcalloc(src->n + 1, sizeof(*rc->next));
    rc->fill = xcalloc(src->n + 1, sizeof(*rc->fill));
    size_t last = SIZE_MAX;
    for (size_t i = 0; i <= src->n; i++) {
        rc->prev[i] = last;
        if (i < src->n && src->recs[i].snapshot)
            last = i;
    }
    size_t snap = SIZE_MAX, fill = SIZE_MAX;
    for (size_t i = src->n + 1; i-- > 0;) {
        rc->next[i] = snap;
        if (i < src->n && src->recs[i].snapshot)
            snap = i;
        if (i < src->n && !strcmp(src->recs[i].event, "fill"))
            fill = i;
        rc->fill[i] = fill;
    }
}

static void recording_free(struct recording *rc)
{
    free(rc->prev);
    free(rc->next);
    free(rc->fill);
}

/* Record i of the recording (i below src->n). */
static const struct why_rec *record(const struct recording *s, size_t i)
{
    return &s->src->recs[i];
}

static const struct jd *doc(const struct recording *s, size_t i)
{
    return i < s->src->n ? s->src->doc(s->src->ctx, i) : NULL;
}

static const struct jd *event_of(const struct recording *s, size_t j, const char *kind)
{
    return !strcmp(record(s, j)->event, kind) ? doc(s, j) : NULL;
}

/* The snapshot nearest record i on one side: the last before (dir -1) or
 * the first after (dir +1); SIZE_MAX when none. */
static size_t snapshot_near(const struct recording *s, size_t i, int dir)
{
    size_t j = i > s->src->n ? SIZE_MAX : dir < 0 ? s->prev[i] : s->next[i];
    while (j != SIZE_MAX && !doc(s, j))
        j = dir < 0 ? s->prev[j] : s->next[j];
    return j;
}

/* An end being explained: its event, and the snapshots around it (SIZE_MAX:
 * none). */
struct end {
    const struct recording *src;
    size_t i;
    size_t before; /* the last before it that shows its process running, else the last */
    size_t at;     /* the first after it */
};

static struct end around(const struct recording *src, size_t i, const struct why_death *d)
{
    /* Before, then at: each reads records, and a damaged one is warned of
     * in the order read. */
    struct end e = {.src = src, .i = i, .before = snapshot_near(src, i, -1)};
    e.at = snapshot_near(src, i, +1);
    size_t k = e.before;
    for (int n = 0; d->has_pid && n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1))
        if (shows_running(doc(src, k), d->pid)) {
            e.before = k;
            break;
        }
    return e;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool is_worker(const struct why_death *d)
{
    return same_str(d->role, "worker") || same_str(d->role, "orphan_worker");
}

/* The main of d's job: its group, or itself when it is a main. */
static int64_t job_of(const struct why_death *d)
{
    if (d->has_group)
        return d->group;
    if (d->has_pid && same_str(d->role, "main"))
        return d->pid;
    return 0;
}

/* Whether exit event ev is an abnormal end; *cause its cause. */
static bool abnormal_exit(const struct jd *ev, const char **cause)
{
    static const char *const causes[] = {"sigbus", "oom_kill", "signal", "exit", "unknown", NULL};
    static const char *const job_roles[] = {"main", "worker", "shm_manager", "orphan_worker", NULL};
    *cause = one_of(jd_getstr(ev, "cause", NULL), causes);
    if (!*cause)
        return false;
    if (!strcmp(*cause, "exit"))
        return jd_getint(ev, "exit_code", 0) != 0;
    if (!strcmp(*cause, "unknown"))
        return one_of(jd_getstr(ev, "role", NULL), job_roles) != NULL;
    return true;
}

/* Whether pid was a DataLoader group's main shortly before record i: an
 * exit event within WHY_FOLLOW_S before names it as the main of the
 * process that ended (workers born and dead between two snapshots are in
 * no snapshot's group), or a snapshot shows its group. */
static bool was_main(const struct recording *src, size_t i, int64_t pid)
{
    for (size_t j = i; j-- > 0 && record(src, i)->t - record(src, j)->t <= WHY_FOLLOW_S;)
        if (jd_getint(event_of(src, j, "exit"), "group", 0) == pid)
            return true;
    size_t k = snapshot_near(src, i, -1);
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1))
        if (snap_group(doc(src, k), pid))
            return true;
    return false;
}

/* The main of the DataLoader group that had pid among its workers or shm
 * managers in a snapshot shortly before record i, 0 for none. */
static int64_t group_before(const struct recording *src, size_t i, int64_t pid)
{
    static const char *const lists[] = {"workers", "shm_managers"};
    size_t k = snapshot_near(src, i, -1);
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(src, k, -1)) {
        const struct jd *gs = jd_get(doc(src, k), "groups");
        for (size_t g = 0; g < jd_len(gs); g++) {
            for (size_t l = 0; l < 2; l++) {
                const struct jd *ps = jd_get(jd_at(gs, g), lists[l]);
                for (size_t j = 0; j < jd_len(ps); j++)
                    if (jd_int(jd_at(ps, j), 0) == pid)
                        return jd_getint(jd_at(gs, g), "main_pid", 0);
            }
        }
    }
    return 0;
}

/* The first record within WHY_NEAR_S before record i, and one past the
 * last within WHY_NEAR_S after it: the records are in time order, so the
 * events near an end are found without reading the others. */
static size_t near_first(const struct recording *s, size_t i)
{
    size_t j = i;
    while (j > 0 && record(s, j - 1)->t - record(s, i)->t >= -WHY_NEAR_S)
        j--;
    return j;
}

static size_t near_end(const struct recording *s, size_t i)
{
    size_t j = i;
    while (j < s->src->n && record(s, j)->t - record(s, i)->t <= WHY_NEAR_S)
        j++;
    return j;
}

/* The OOM kill event near exit event i whose victim is pid, else the first
 * near it that names a cgroup. */
static const struct jd *oom_event(const struct recording *src, size_t i, int64_t pid)
{
    const struct jd *any = NULL;
    for (size_t j = near_first(src, i), end = near_end(src, i); j < end; j++) {
        const struct jd *ev = event_of(src, j, "oom_kill");
        if (ev && jd_getint(ev, "victim", 0) == pid)
            return ev;
        if (!any && jd_getstr(ev, "cgroup", NULL))
            any = ev;
    }
    return any;
}

/* Whether an exit event near oom_kill event k tells the end of its victim. */
static bool victim_has_exit(const struct recording *src, size_t k, int64_t victim)
{
    for (size_t j = near_first(src, k), end = near_end(src, k); j < end; j++)
        if (jd_getint(event_of(src, j, "exit"), "pid", 0) == victim)
            return true;
    return false;
}

/* d from exit event i (ev); false when that is no abnormal end. */
static bool from_exit(struct why_death *d, const struct recording *src, size_t i,
                      const struct jd *ev)
{
    if (!abnormal_exit(ev, &d->cause))
        return false;
    d->pid = jd_getpid(ev, "pid");
    d->has_pid = d->pid != 0;
    fill_str(&d->comm, ev, "comm");
    fill_str(&d->role, ev, "role");
    if (d->has_pid && was_main(src, i, d->pid)) {
        /* Its workers died a moment before it, and the last model saw it
         * without them: it was their main all the same. */
        free(d->role);
        d->role = xstrdup("main");
    }
    d->group = jd_getpid(ev, "group");
    d->has_group = d->group != 0;
    if (d->has_pid && !d->has_group) {
        /* Its main died a moment before it, and the last model saw it
         * without its group: the snapshots before still show it. */
        d->group = group_before(src, i, d->pid);
        d->has_group = d->group > 0;
    }
    fill_str(&d->signal, ev, "signal");
    d->has_exit_code = jd_has(ev, "exit_code", JD_NUM);
    d->exit_code = jd_getint(ev, "exit_code", 0);
    if (!strcmp(d->cause, "oom_kill"))
        fill_str(&d->cgroup, oom_event(src, i, d->pid), "cgroup");
    return true;
}

/* d from oom_kill event i (ev); false when its victim's exit event tells it. */
static bool from_oom(struct why_death *d, const struct recording *src, size_t i,
                     const struct jd *ev)
{
    int64_t victim = jd_getpid(ev, "victim");
    if (victim && victim_has_exit(src, i, victim))
        return false;
    d->cause = "oom_kill";
    d->has_pid = victim != 0;
    d->pid = victim;
    fill_str(&d->comm, ev, "victim_comm");
    d->signal = xstrdup("SIGKILL");
    fill_str(&d->cgroup, ev, "cgroup");
    return true;
}

/* The pids of d's job as snapshot s knows them: the process, its main,
 * the main's workers and shm managers. */
struct pidset {
    int64_t p[256];
    size_t n;
};

static bool pidset_has(const struct pidset *ps, int64_t v)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i] == v)
            return true;
    return false;
}

/* Adds pid v; none below 1 (a pid not known). */
static void pidset_add(struct pidset *ps, int64_t v)
{
    if (v > 0 && ps->n < sizeof(ps->p) / sizeof(ps->p[0]) && !pidset_has(ps, v))
        ps->p[ps->n++] = v;
}

static void job_pids(const struct why_death *d, const struct jd *s, struct pidset *ps)
{
    pidset_add(ps, d->pid);
    int64_t main = job_of(d);
    pidset_add(ps, main);
    const struct jd *g = snap_group(s, main);
    const struct jd *w = jd_get(g, "workers"), *m = jd_get(g, "shm_managers");
    for (size_t i = 0; i < jd_len(w); i++)
        pidset_add(ps, jd_int(jd_at(w, i), 0));
    for (size_t i = 0; i < jd_len(m); i++)
        pidset_add(ps, jd_int(jd_at(m, i), 0));
}

/* The pids that the job's processes (ps) have in their own pid namespace,
 * as snapshot s shows them, where that is another: the pid a dead
 * creator's segment names in a container. */
static void job_nspids(const struct pidset *ps, const struct jd *s, struct pidset *ns)
{
    for (size_t i = 0; i < ps->n; i++) {
        int64_t nspid = jd_getint(snap_proc(s, ps->p[i]), "nspid", 0);
        if (nspid != ps->p[i])
            pidset_add(ns, nspid);
    }
}

/* Whether segment sg is d's job's: held by one of its processes, of its
 * group, or made by one of them (by its pid in its own pid namespace, ns,
 * for a segment on d's mount, mount_id: a dead creator is named so). */
static bool seg_of_job(const struct jd *sg, const struct pidset *ps, const struct pidset *ns,
                       const char *mount_id, int64_t main)
{
    if (main && jd_getint(sg, "group", 0) == main)
        return true;
    int64_t creator = jd_getint(sg, "creator_pid", 0);
    if (pidset_has(ps, creator) ||
        (ns && mount_id && str_is(sg, "mount_id", mount_id) && pidset_has(ns, creator)))
        return true;
    const struct jd *hs = jd_get(sg, "holders");
    for (size_t i = 0; i < jd_len(hs); i++)
        if (pidset_has(ps, jd_getint(jd_at(hs, i), "pid", 0)))
            return true;
    return false;
}

/* d's mount in snapshot s: the one holding most of its job's segments,
 * else its container's (for a process of none, the host's), else the only
 * one. NULL when s shows none, or several and nothing ties d to one of them:
 * the first of them (in an --all recording the host's) would be a guess. */
static const struct jd *find_mount(const struct why_death *d, const struct jd *s)
{
    const struct jd *ms = jd_get(s, "mounts");
    if (jd_len(ms) == 0)
        return NULL;
    struct pidset ps = {.n = 0};
    job_pids(d, s, &ps);
    const struct jd *segs = jd_get(s, "segments");
    const struct jd *best = NULL;
    uint64_t best_bytes = 0;
    for (size_t k = 0; k < jd_len(ms); k++) {
        const char *id = jd_getstr(jd_at(ms, k), "id", NULL);
        uint64_t bytes = 0;
        bool any = false;
        for (size_t i = 0; i < jd_len(segs); i++) {
            const struct jd *sg = jd_at(segs, i);
            if (str_is(sg, "mount_id", id) && seg_of_job(sg, &ps, NULL, NULL, job_of(d))) {
                bytes += jd_getu64(sg, "alloc_bytes");
                any = true;
            }
        }
        if (any && (!best || bytes > best_bytes)) {
            best = jd_at(ms, k);
            best_bytes = bytes;
        }
    }
    if (best)
        return best;
    for (size_t k = 0; k < jd_len(ms); k++) {
        const struct jd *m = jd_at(ms, k);
        if (d->container ? mount_ctr(m, d) != NULL : jd_len(jd_get(m, "containers")) == 0)
            return m;
    }
    return jd_len(ms) == 1 ? jd_at(ms, 0) : NULL;
}

/* The biggest groups with segments on d's mount in snapshot s, biggest
 * first. */
static void top_groups(struct why_death *d, const struct jd *s)
{
    const struct jd *segs = jd_get(s, "segments"), *gs = jd_get(s, "groups");
    for (size_t g = 0; g < jd_len(gs); g++) {
        int64_t main = jd_getint(jd_at(gs, g), "main_pid", 0);
        uint64_t bytes = 0;
        for (size_t i = 0; i < jd_len(segs); i++) {
            const struct jd *sg = jd_at(segs, i);
            if (str_is(sg, "mount_id", d->mount_id) && jd_getint(sg, "group", 0) == main)
                bytes += jd_getu64(sg, "alloc_bytes");
        }
        if (!bytes)
            continue;
        size_t at = d->ntop;
        while (at > 0 && d->top[at - 1].shm_bytes < bytes)
            at--;
        if (at == WHY_TOP)
            continue;
        if (d->ntop < WHY_TOP)
            d->ntop++;
        memmove(&d->top[at + 1], &d->top[at], (d->ntop - 1 - at) * sizeof(d->top[0]));
        const struct jd *w = jd_get(jd_at(gs, g), "workers");
        d->top[at] = (struct why_group){main, bytes, jd_len(w)};
    }
}

/* Whether used bytes are within 1 % (a page at least) of size. */
static bool at_brim(uint64_t used, uint64_t size)
{
    uint64_t slack = size / 100 > 4096 ? size / 100 : 4096;
    return used + slack >= size;
}

/* Its mount (m, as mb in the snapshot before and ma in the one at): the
 * fill before and at, the most seen, and whether it was full. */
static void mount_fill(struct why_death *d, const struct end *e, const struct jd *m,
                       const struct jd *mb, const struct jd *ma)
{
    d->has_mount = true;
    fill_str(&d->mount_id, m, "id");
    fill_str(&d->mount_path, m, "path");
    d->size = jd_getu64(m, "size_bytes");
    if (mb) {
        d->has_before = true;
        d->used_before = jd_getu64(mb, "used_bytes");
        d->t_before = record(e->src, e->before)->t;
        d->pending_before = jd_getu64(mb, "pending_bytes");
        d->used_peak = d->used_before;
    }
    if (ma) {
        d->has_at = true;
        d->used_at = jd_getu64(ma, "used_bytes");
        d->t_at = record(e->src, e->at)->t;
        if (!mb)
            d->size = jd_getu64(ma, "size_bytes");
        if (d->used_at > d->used_peak)
            d->used_peak = d->used_at;
    }
    /* A fill event between the two snapshots may have seen more. */
    size_t lo = e->before != SIZE_MAX ? e->before : 0, hi = e->at != SIZE_MAX ? e->at : e->i;
    for (size_t k = e->src->fill[lo]; k < hi; k = e->src->fill[k + 1]) {
        const struct jd *ev = doc(e->src, k);
        if (str_is(ev, "mount_id", d->mount_id))
            raise_to(&d->used_peak, ev, "used_bytes");
    }
    /* Full: within 1 % of its size, or with less free than one batch of
     * the loader the snapshot before shows, or with more promised to
     * segments not yet written than was free. */
    d->free_batch = jd_getu64(mount_loader(doc(e->src, e->before), mb), "batch_shm_bytes");
    d->full =
        d->size > 0 &&
        (at_brim(d->used_peak, d->size) ||
         (d->free_batch && d->used_peak + d->free_batch > d->size) ||
         (d->has_before && d->pending_before && d->used_before + d->pending_before >= d->size));
}

/* The budget of the mount's owner in snapshot s (mount sm); its app, shm
 * and other shm the most of it and the one at the end, ba (an OOM kill
 * frees the victim's own memory, not its /dev/shm pages, and comes while
 * they grow faster than snapshots are taken). */
static void budget_then(struct why_death *d, const struct jd *s, const struct jd *sm,
                        const struct jd *ba)
{
    const struct jd *b = mount_obj(s, sm, "budget");
    if (!b)
        return;
    d->has_budget = true;
    d->limit = jd_getu64(b, "limit_bytes");
    d->app = jd_getu64(b, "app_bytes");
    d->shm_used = jd_getu64(b, "shm_used_bytes");
    d->headroom = jd_getu64(b, "headroom_bytes");
    d->shm_other = jd_getu64(b, "shm_other_bytes");
    d->limit_cgroup = str_is(b, "limit_source", "cgroup");
    if (ba && jd_getu64(ba, "limit_bytes") == d->limit) {
        raise_to(&d->app, ba, "app_bytes");
        raise_to(&d->shm_used, ba, "shm_used_bytes");
        raise_to(&d->shm_other, ba, "shm_other_bytes");
        uint64_t used = d->app + d->shm_used + d->shm_other;
        d->headroom = d->limit > used ? d->limit - used : 0;
    }
}

/* The container of d's process and its names where the event and the
 * snapshot before left them out: from the nearest of the snapshots from
 * the one before back that shows the process in a container, its name and
 * pod from whichever of that snapshot's mounts lists the container. A scan
 * can miss a process's container (every process of its namespace exiting
 * while it is read: a container ending with the death), and a death told
 * against that scan names none. */
static void container_before(struct why_death *d, const struct end *e)
{
    size_t k = e->before;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(e->src, k, -1)) {
        const struct jd *s = doc(e->src, k);
        const struct jd *p = snap_proc(s, d->pid);
        fill_ctr(d, p, "container");
        if (!names_ctr(p, "container", d))
            continue;
        const struct jd *ms = jd_get(s, "mounts"), *c = NULL;
        for (size_t i = 0; i < jd_len(ms) && !c; i++)
            c = mount_ctr(jd_at(ms, i), d);
        if (!c)
            continue;
        fill_str(&d->container_name, c, "name");
        fill_str(&d->container_name, c, "hostname"); /* as the report heads it */
        fill_str(&d->pod, c, "pod");
        return;
    }
}

/* The mount, its fill before and at, the budget, the biggest groups, and
 * who it was where the event did not say. Without a mount, who it was is
 * still read from the snapshots, and whether they showed mounts at all. */
static void moment(struct why_death *d, const struct end *e)
{
    const struct jd *before = doc(e->src, e->before), *at = doc(e->src, e->at);
    const struct jd *m = find_mount(d, before);
    if (!m)
        m = find_mount(d, at);
    const struct jd *sm = NULL;
    if (m) {
        const char *id = jd_getstr(m, "id", NULL), *path = jd_getstr(m, "path", NULL);
        const struct jd *mb = snap_mount(before, id, path), *ma = snap_mount(at, id, path);
        mount_fill(d, e, m, mb, ma);
        const struct jd *s = mb ? before : at;
        sm = mb ? mb : ma;
        budget_then(d, s, sm, mb && ma ? mount_obj(at, ma, "budget") : NULL);
        fill_str(&d->cgroup, mount_obj(s, sm, "cgroup"), "path");
        top_groups(d, s);
    } else {
        d->mount_unknown = jd_len(jd_get(before, "mounts")) || jd_len(jd_get(at, "mounts"));
    }
    const struct jd *p = d->has_pid ? snap_proc(before ? before : at, d->pid) : NULL;
    fill_str(&d->comm, p, "comm");
    fill_str(&d->role, p, "role");
    if (!d->has_group) {
        d->group = jd_getpid(p, "group");
        d->has_group = d->group != 0;
    }
    fill_ctr(d, p, "container");
    const struct jd *c = mount_ctr(sm, d);
    fill_str(&d->container_name, c, "name");
    fill_str(&d->container_name, c, "hostname"); /* as the report heads it */
    fill_str(&d->pod, c, "pod");
    if (d->has_pid && (!d->container || !d->container_name))
        container_before(d, e);
}

/* The loader of d's job in the snapshots from the one before e back: each
 * says what it saw in flight at its moment, and one may miss a batch a
 * worker is writing, so the most of the last few is the loader's. */
static void loader_before(struct why_death *d, const struct end *e)
{
    int64_t job = job_of(d);
    size_t k = e->before;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(e->src, k, -1)) {
        const struct jd *s = doc(e->src, k);
        const struct jd *m = snap_mount(s, d->mount_id, d->mount_path);
        const struct jd *l = mount_loader(s, m);
        if (!l || (job && jd_getint(l, "main_pid", 0) != job))
            continue;
        raise_to(&d->loader_batch, l, "batch_shm_bytes");
        raise_to(&d->loader_workers, l, "workers");
        raise_to(&d->loader_prefetch, l, "prefetch_factor");
    }
}

/* Whether d is a Bus error on its mount: one the kernel told (SIGBUS), or
 * the likely end of a worker gone unseen from a full mount. Either way the
 * mount filled, whatever the snapshots around it saw. */
static bool bus_error(const struct why_death *d)
{
    return d->has_mount && (!strcmp(d->cause, "sigbus") ||
                            (!strcmp(d->cause, "unknown") && is_worker(d) && d->full));
}

/* d's advice asking for --shm-size rec where it asks for less, and for the
 * -m that then fits. */
static void raise_advice(struct why_death *d, uint64_t rec)
{
    if (rec > d->rec_shm)
        d->rec_shm = rec;
    uint64_t margin;
    uint64_t mem = budget_rec_memory(d->advice_app, d->rec_shm, &margin);
    if (mem > d->rec_memory)
        d->rec_memory = mem;
}

/* The loader's arithmetic (plan --observe's) in d's advice, for a Bus error
 * whose loader was read (loader_before), where it asks for more than the
 * advice's peak. */
static void loader_advice(struct why_death *d)
{
    if (!d->has_advice || !bus_error(d) || !d->loader_batch)
        return;
    struct capacity_input in = {.observed_batch_shm = d->loader_batch,
                                .workers = d->loader_workers,
                                .prefetch = d->loader_prefetch};
    struct capacity_result r;
    if (capacity_compute(&in, &r, NULL) != 0 || r.shm_peak <= d->need_shm)
        return;
    d->from_loader = true;
    d->from_size = false;
    d->need_shm = r.shm_peak;
    raise_advice(d, r.rec_shm_size);
}

/* The sizes that fit what was recorded: the budget's recommendations of the
 * snapshots before and at (made from the recorder's peaks, as the live
 * budget makes them). A Bus error shows its mount filled, so the peak is
 * then the mount's size at least, even when it filled between two
 * snapshots; and since a full mount hides how much more was asked, the
 * loader's own arithmetic (plan --observe: one batch x (workers x prefetch
 * factor + 2)) decides when it is more. */
static void advise(struct why_death *d, const struct end *e)
{
    uint64_t peak_app = 0;
    const size_t near[] = {e->before, e->at};
    for (size_t n = 0; n < 2; n++) {
        const struct jd *s = doc(e->src, near[n]);
        const struct jd *m = snap_mount(s, d->mount_id, d->mount_path);
        const struct jd *b = m ? mount_obj(s, m, "budget") : NULL;
        if (!b)
            continue;
        d->has_advice = true;
        raise_to(&d->rec_shm, b, "recommended_shm_size_bytes");
        raise_to(&d->rec_memory, b, "recommended_memory_bytes");
        raise_to(&peak_app, b, "app_bytes");
    }
    loader_before(d, e);
    d->need_shm = d->used_peak;
    d->advice_app = peak_app;
    if (d->has_advice && bus_error(d) && d->size > 0) {
        uint64_t margin;
        bool floored;
        uint64_t rec = budget_rec_shm(d->size, &margin, &floored);
        if (rec > d->rec_shm) {
            d->need_shm = d->size;
            d->from_size = true;
            raise_advice(d, rec);
        }
    }
    loader_advice(d);
}

/* e's advice in d where it asks for more: its --shm-size (with the peak and
 * the loader it was made from), its -m. */
static void take_advice(struct why_death *d, const struct why_death *e)
{
    if (!e->has_advice)
        return;
    if (!d->has_advice || e->rec_shm > d->rec_shm) {
        d->rec_shm = e->rec_shm;
        d->need_shm = e->need_shm;
        d->from_loader = e->from_loader;
        d->from_size = e->from_size;
        d->loader_batch = e->loader_batch;
        d->loader_workers = e->loader_workers;
        d->loader_prefetch = e->loader_prefetch;
    }
    if (!d->has_advice || e->rec_memory > d->rec_memory)
        d->rec_memory = e->rec_memory;
    d->has_advice = true;
}

/* The end of r->d[0..n) that d follows (follow set its pid), or NULL. */
static struct why_death *followed(struct why_result *r, size_t n, const struct why_death *d)
{
    for (size_t k = n; d->after_pid && k-- > 0;) {
        struct why_death *e = &r->d[k];
        if (d->t - e->t > WHY_FOLLOW_S)
            break;
        if (e->pid == d->after_pid && job_of(e) == job_of(d))
            return e;
    }
    return NULL;
}

/* The earlier end in d's job (of those found, r) that d follows within
 * WHY_FOLLOW_S, and its advice when that asks for more. Only the ends of
 * that window are read: r is in time order. Ends that one scan found gone
 * (cause unknown) carry its time and no order: none follows another. */
static void follow(struct why_death *d, struct why_result *r)
{
    int64_t job = job_of(d);
    bool unseen = !strcmp(d->cause, "unknown");
    for (size_t k = r->n; job && k-- > 0;) {
        const struct why_death *e = &r->d[k];
        if (d->t - e->t > WHY_FOLLOW_S)
            break;
        if (unseen && e->t == d->t && !strcmp(e->cause, "unknown"))
            continue;
        if (job_of(e) == job) {
            d->after_pid = e->pid;
            d->after_cause = e->signal ? e->signal : e->cause;
            d->after_dt = d->t - e->t;
        }
    }
    const struct why_death *e = followed(r, r->n, d);
    if (e)
        take_advice(d, e);
}

/* One advice for the ends of one job. The ends that follow another all
 * follow its first (follow): each hands its advice to that one where it
 * asks for more, then takes that one's, the most any of them asks. The
 * first end, whose snapshots may show least of the loader, so asks for
 * what a later one learnt. */
static void advise_jobs(struct why_result *r)
{
    /* A loader read while its job was dying (by an end that follows the
     * job's first) shows fewer workers than it had, and fewer batches each:
     * it counts every worker end of the job, and at least torch's default
     * prefetch factor, 2. */
    for (size_t i = 0; i < r->n; i++) {
        struct why_death *d = &r->d[i];
        const struct why_death *first = followed(r, i, d);
        if (!first || !d->loader_batch)
            continue;
        uint64_t lost = is_worker(first);
        for (size_t k = 0; k < r->n; k++)
            lost += is_worker(&r->d[k]) && followed(r, k, &r->d[k]) == first;
        if (lost <= d->loader_workers && d->loader_prefetch >= 2)
            continue;
        if (lost > d->loader_workers)
            d->loader_workers = lost;
        if (d->loader_prefetch < 2)
            d->loader_prefetch = 2;
        loader_advice(d);
    }
    for (size_t i = 0; i < r->n; i++) {
        struct why_death *first = followed(r, i, &r->d[i]);
        if (first)
            take_advice(first, &r->d[i]);
    }
    for (size_t i = 0; i < r->n; i++) {
        const struct why_death *first = followed(r, i, &r->d[i]);
        if (first)
            take_advice(&r->d[i], first);
    }
}

/* The snapshot before record i when it shows d's job ended: no group of
 * its main (for a death outside a job, the process not running). A death
 * during the last scan of a recording sorts after that scan's snapshot (a
 * snapshot's time is when its scan began), and no snapshot follows it: a
 * recording stopped then, or why asked at once. SIZE_MAX when it shows the
 * job still running. */
static size_t snapshot_ended(const struct recording *src, size_t i, const struct why_death *d)
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

/* What d's job left behind: in the last snapshot of the recording when one
 * follows the end (else the one under way at its end), its segments that
 * nobody holds (orphans, or unheld while too young to be called orphans). */
static void left_behind(struct why_death *d, const struct end *e)
{
    const struct recording *rc = e->src;
    size_t li = e->at != SIZE_MAX ? snapshot_near(rc, rc->src->n, -1) : snapshot_ended(rc, e->i, d);
    if (li == SIZE_MAX)
        return;
    /* The job's processes as the snapshots before the end knew them: a
     * snapshot taken while a killed job dies shows some of them gone. */
    struct pidset ps = {.n = 0}, ns = {.n = 0};
    job_pids(d, NULL, &ps);
    size_t k = e->before;
    for (int n = 0; n < WHY_BACK && k != SIZE_MAX; n++, k = snapshot_near(e->src, k, -1)) {
        job_pids(d, doc(e->src, k), &ps);
        job_nspids(&ps, doc(e->src, k), &ns);
    }
    /* And those the exit events near the end name as its job's: a worker
     * that the snapshots showed only as a zombie, or never. */
    int64_t job = job_of(d);
    for (size_t j = near_first(rc, e->i), end = near_end(rc, e->i); job && j < end; j++) {
        const struct jd *ev = event_of(rc, j, "exit");
        if (jd_getint(ev, "group", 0) == job)
            pidset_add(&ps, jd_getint(ev, "pid", 0));
    }
    d->has_left = true;
    const struct jd *segs = jd_get(doc(e->src, li), "segments");
    for (size_t i = 0; i < jd_len(segs); i++) {
        const struct jd *sg = jd_at(segs, i);
        if (!str_is(sg, "state", "orphan") && !str_is(sg, "state", "unheld"))
            continue;
        if (!seg_of_job(sg, &ps, &ns, d->mount_id, job))
            continue;
        d->left_segments++;
        d->left_bytes += jd_getu64(sg, "alloc_bytes");
    }
}

/* "the /dev/shm of trainer" (its name, of probe/web for a containerd
 * namespace's container: container_label), else of its pod, or "/dev/shm". */
static void mount_name(struct buf *b, const struct why_death *d)
{
    char *ctr = d->container_name
                    ? container_label(d->container_ns, d->container_name, d->container)
                    : NULL;
    const char *who = ctr ? ctr : d->pod;
    const char *path = d->mount_path ? d->mount_path : "/dev/shm";
    if (who)
        buf_printf(b, "the %s of %s", path, who);
    else
        buf_adds(b, path);
    free(ctr);
}

static void sigbus_text(struct buf *b, const struct why_death *d)
{
    char x[64], y[64];
    if (d->has_mount && d->full) {
        mount_name(b, d);
        buf_printf(b, " was full, %s", fmt_size_of(x, sizeof(x), d->used_peak, d->size));
        /* Short of the brim: what made it full. */
        if (!at_brim(d->used_peak, d->size)) {
            if (d->free_batch && d->used_peak + d->free_batch > d->size)
                buf_printf(b, " with less free than one batch (%s)",
                           fmt_size(y, sizeof(y), d->free_batch));
            else
                buf_printf(b, " with %s more promised to segments not yet written",
                           fmt_size(y, sizeof(y), d->pending_before));
        }
        buf_adds(b, ": ");
    } else if (d->has_mount && d->has_before) {
        mount_name(b, d);
        buf_printf(b, " held %s (%.0f %%) in the last snapshot before",
                   fmt_size_of(x, sizeof(x), d->used_before, d->size),
                   d->size ? 100.0 * (double)d->used_before / (double)d->size : 0.0);
        if (d->pending_before)
            buf_printf(b, ", and %s more was promised to segments not yet written",
                       fmt_size(y, sizeof(y), d->pending_before));
        buf_adds(b, ": it filled up between two snapshots, and ");
    } else if (d->mount_unknown) {
        buf_adds(b, "a Bus error (SIGBUS) on a /dev/shm that is not known (the snapshots show "
                    "several mounts, and nothing ties it to one); on a tmpfs it is a page the "
                    "tmpfs could not give");
        return;
    } else {
        buf_adds(b, "a Bus error (SIGBUS), and no snapshot before it shows its /dev/shm; on "
                    "a tmpfs it is a page the tmpfs could not give");
        return;
    }
    buf_printf(b, "%s touched a page the tmpfs could not give, which is the Bus error",
               is_worker(d) ? "a worker writing a batch" : "a process writing to it");
}

static void oom_text(struct buf *b, const struct why_death *d)
{
    char x[64], y[64], z[64];
    if (d->cgroup)
        buf_printf(b, "the OOM killer of cgroup %s fired", d->cgroup);
    else
        buf_adds(b, "the OOM killer fired");
    if (!d->has_budget)
        return;
    buf_printf(b, " with app %s + shm %s", fmt_size(x, sizeof(x), d->app),
               fmt_size(y, sizeof(y), d->shm_used));
    if (d->shm_other)
        buf_printf(b, " + other shm %s", fmt_size(x, sizeof(x), d->shm_other));
    if (d->limit_cgroup)
        buf_printf(b, " of %s", fmt_size(z, sizeof(z), d->limit));
    else
        buf_printf(b, " (the machine's %s)", fmt_size(z, sizeof(z), d->limit));
    if (d->shm_used && d->shm_used >= d->limit / 10)
        buf_adds(b, ": /dev/shm's pages count against the memory limit (-m), so the "
                    "batches in it and the application ran out of it together");
}

static void unknown_text(struct buf *b, const struct why_death *d)
{
    char x[64];
    buf_adds(b, "it was gone at the next scan and the cause is unknown: the recorder did not "
                "see the kernel's process events (that needs root in the host's network "
                "namespace, and a kernel queue that did not overflow)");
    if (d->has_mount && d->full && is_worker(d)) {
        buf_adds(b, ". ");
        mount_name(b, d);
        buf_printf(b,
                   " was full just before, %s: the likely cause is the Bus error of a "
                   "worker writing a batch",
                   fmt_size_of(x, sizeof(x), d->used_peak, d->size));
    }
}

static void diagnose(struct why_death *d)
{
    /* Signals another process or the system sends; any other is a crash. */
    static const char *const sent[] = {"SIGKILL", "SIGTERM", "SIGINT",  "SIGHUP",  "SIGQUIT",
                                       "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM", NULL};
    struct buf b;
    buf_init(&b);
    char x[64], y[64];
    if (!strcmp(d->cause, "sigbus"))
        sigbus_text(&b, d);
    else if (!strcmp(d->cause, "oom_kill"))
        oom_text(&b, d);
    else if (!strcmp(d->cause, "signal") && one_of(d->signal, sent))
        buf_printf(&b,
                   "it was killed by %s, sent by another process or the system (no OOM "
                   "kill was counted in its cgroup)",
                   d->signal);
    else if (!strcmp(d->cause, "signal"))
        buf_printf(&b, "it crashed with %s", d->signal ? d->signal : "a signal");
    else if (!strcmp(d->cause, "exit"))
        buf_printf(&b, "it exited with status %lld", (long long)d->exit_code);
    else
        unknown_text(&b, d);
    if (d->after_pid)
        buf_printf(&b, ". It followed the end of %lld (%s) %.1f s before in the same job",
                   (long long)d->after_pid, d->after_cause, d->after_dt);
    if (d->left_segments && same_str(d->role, "shm_manager"))
        buf_printf(&b, ". The shm manager died: its job's %s of batches are orphans since %s",
                   fmt_size(x, sizeof(x), d->left_bytes), why_fmt_clock(y, sizeof(y), d->t));
    else if (d->left_segments && (!d->after_pid || same_str(d->role, "main")))
        buf_printf(&b, ". Its job left %llu segment%s (%s) that nobody holds: orphans since %s",
                   (unsigned long long)d->left_segments, d->left_segments == 1 ? "" : "s",
                   fmt_size(x, sizeof(x), d->left_bytes), why_fmt_clock(y, sizeof(y), d->t));
    buf_addc(&b, '.');
    d->diagnosis = buf_steal(&b);
}

static bool wanted(const struct why_death *d, const struct why_filter *f)
{
    if (f->pid && !(d->has_pid && d->pid == f->pid) && job_of(d) != f->pid)
        return false;
    if (!f->container)
        return true;
    const char *n = f->container;
    const char *slash = strchr(n, '/');
    if (slash) { /* NAMESPACE/NAME: only that containerd namespace's */
        size_t nslen = (size_t)(slash - n);
        if (!d->container_ns || strlen(d->container_ns) != nslen ||
            strncmp(d->container_ns, n, nslen) != 0)
            return false;
        n = slash + 1;
    }
    size_t len = strlen(n);
    bool hex = len >= 12 && strspn(n, "0123456789abcdef") == len;
    return (d->container_name && !strcmp(d->container_name, n)) || (d->pod && !strcmp(d->pod, n)) ||
           (d->container && (!strcmp(d->container, n) || (hex && !strncmp(d->container, n, len))));
}

static void death_free(struct why_death *d)
{
    free(d->comm);
    free(d->role);
    free(d->container);
    free(d->container_name);
    free(d->container_ns);
    free(d->pod);
    free(d->signal);
    free(d->cgroup);
    free(d->mount_id);
    free(d->mount_path);
    free(d->diagnosis);
}

void why_find(const struct why_source *source, const struct why_filter *f, struct why_result *r)
{
    memset(r, 0, sizeof(*r));
    struct recording rc;
    recording_init(&rc, source);
    const struct recording *src = &rc;
    for (size_t i = 0; i < source->n; i++) {
        const struct why_rec *rec = record(src, i);
        if (rec->snapshot || (f->from > 0 && rec->t < f->from))
            continue;
        bool is_exit = !strcmp(rec->event, "exit");
        if (!is_exit && strcmp(rec->event, "oom_kill") != 0)
            continue;
        const struct jd *ev = doc(src, i);
        struct why_death d = {.t = rec->t};
        if (!ev || !(is_exit ? from_exit(&d, src, i, ev) : from_oom(&d, src, i, ev)))
            continue;
        fill_ctr(&d, ev, "container");
        fill_str(&d.container_name, ev, "container_name");
        struct end e = around(src, i, &d);
        moment(&d, &e);
        if (!wanted(&d, f)) {
            death_free(&d);
            continue;
        }
        advise(&d, &e);
        follow(&d, r);
        left_behind(&d, &e);
        diagnose(&d);
        *VEC_PUSH(r->d, r->n, r->cap) = d;
    }
    advise_jobs(r);
    recording_free(&rc);
}

void why_result_free(struct why_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        death_free(&r->d[i]);
    free(r->d);
    memset(r, 0, sizeof(*r));
}
