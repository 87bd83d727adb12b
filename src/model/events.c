/* The events of doc/recording.md, told from two models' facts and what the
 * kernel reported in between. */
#include "model/events.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "util/fileio.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void event_clear(struct event *e)
{
    free(e->container);
    free(e->container_name);
    free(e->container_ns);
    free(e->cgroup);
    free(e->mount);
    free(e->detail);
    memset(e, 0, sizeof(*e));
}

void event_list_clear(struct event_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        event_clear(&l->items[i]);
    l->n = 0;
}

void event_list_free(struct event_list *l)
{
    event_list_clear(l);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static struct event *push(struct event_list *l, enum event_kind kind, double t)
{
    struct event *e = VEC_PUSH(l->items, l->n, l->cap);
    e->kind = kind;
    e->t = t;
    return e;
}

struct event *events_recorder(struct event_list *out, double t, const char *what,
                              const char *detail)
{
    struct event *e = push(out, EV_RECORDER, t);
    e->what = what;
    e->detail = dup_or_null(detail);
    return e;
}

void events_stalled(struct event_list *out, double t, const char *detail, double stalled_s,
                    pid_t pid, int fd)
{
    struct event *e = events_recorder(out, t, "stalled", detail);
    e->stalled_s = stalled_s;
    e->stalled_pid = pid;
    e->stalled_fd = fd;
}

const char *event_kind_name(enum event_kind k)
{
    switch (k) {
    case EV_EXIT: return "exit";
    case EV_OOM_KILL: return "oom_kill";
    case EV_SEGMENTS: return "segments";
    case EV_MOUNT: return "mount";
    case EV_FILL: return "fill";
    case EV_RECORDER: break;
    }
    return "recorder";
}

const char *exit_cause_name(enum exit_cause c)
{
    switch (c) {
    case CAUSE_SIGBUS: return "sigbus";
    case CAUSE_OOM_KILL: return "oom_kill";
    case CAUSE_SIGNAL: return "signal";
    case CAUSE_EXIT: return "exit";
    case CAUSE_UNKNOWN: break;
    }
    return "unknown";
}

const char *fill_level_name(enum fill_level l)
{
    return l == FILL_CRITICAL ? "critical" : l == FILL_WARN ? "warn" : "ok";
}

const char *exit_signal_name(int sig)
{
    static const char *const names[] = {
        NULL,      "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP", "SIGABRT",
        "SIGBUS",  "SIGFPE",  "SIGKILL",   "SIGUSR1", "SIGSEGV",   "SIGUSR2", "SIGPIPE",
        "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",
        "SIGTTIN", "SIGTTOU", "SIGURG",    "SIGXCPU", "SIGXFSZ",   "SIGVTALRM", "SIGPROF",
        "SIGWINCH", "SIGIO",  "SIGPWR",    "SIGSYS",
    };
    if (sig <= 0 || (size_t)sig >= sizeof(names) / sizeof(names[0]))
        return NULL;
    return names[sig];
}

enum fill_level fill_level_of(double used_pct, double warn_pct, double crit_pct)
{
    if (used_pct >= crit_pct)
        return FILL_CRITICAL;
    if (used_pct >= warn_pct)
        return FILL_WARN;
    return FILL_OK;
}

/* --- The facts of one model ------------------------------------------ */

static const struct ev_cgroup *cgroup_in(const struct ev_state *st, const char *dir)
{
    for (size_t i = 0; i < st->ncgroups; i++)
        if (strcmp(st->cgroups[i].dir, dir) == 0)
            return &st->cgroups[i];
    return NULL;
}

/* The index in st of the cgroup read from cg->dir, added when new. */
static size_t cgroup_index(struct ev_state *st, size_t *cap, const struct cgroup_info *cg,
                           const struct container_info *ci)
{
    if (!cg->present || !cg->dir)
        return SIZE_MAX;
    const struct ev_cgroup *known = cgroup_in(st, cg->dir);
    if (known)
        return (size_t)(known - st->cgroups);
    struct ev_cgroup *g = VEC_PUSH(st->cgroups, st->ncgroups, *cap);
    g->path = xstrdup(cg->path ? cg->path : cg->dir);
    g->dir = xstrdup(cg->dir);
    g->version = cg->version;
    g->known = cg->has_oom_kills;
    g->kills = cg->oom_kills;
    g->ctr_id = dup_or_null(ci ? ci->id : NULL);
    g->ctr_name = dup_or_null(ci ? ci->name : NULL);
    g->ctr_ns = dup_or_null(ci ? ci->containerd_namespace : NULL);
    return st->ncgroups - 1;
}

void ev_state_from_model(struct ev_state *st, const struct model *m, double warn_pct,
                         double crit_pct)
{
    memset(st, 0, sizeof(*st));
    st->valid = true;
    size_t cgcap = 0;
    /* The watched world's cgroup first, then each container's. */
    cgroup_index(st, &cgcap, model_cgroup(m), NULL);
    const struct scan_node *n = model_node(m);
    for (size_t k = 0; k < n->nctrs; k++)
        cgroup_index(st, &cgcap, &n->ctrs[k].cgroup, &n->ctrs[k].info);

    st->procs = xcalloc(m->nprocs, sizeof(*st->procs));
    for (size_t i = 0; i < m->nprocs; i++) { /* m->procs is sorted by pid */
        const struct mproc *mp = &m->procs[i];
        const struct proc *p = model_proc(m, mp);
        if (p->state == 'Z' || p->state == 'X')
            continue; /* it has ended already: its exit was told, or is told as it goes */
        struct ev_proc *e = &st->procs[st->nprocs++];
        e->pid = p->pid;
        e->start_ticks = p->start_ticks;
        memcpy(e->comm, p->comm, sizeof(e->comm));
        e->comm[sizeof(e->comm) - 1] = '\0';
        e->role = mp->role;
        e->group = mp->group;
        e->ppid = p->ppid;
        e->pgid = p->pgid;
        e->torch = holders_torch_loaded(&m->scan->holders, p->pid);
        const struct node_ctr *c = model_ctr(m, mp->ctr);
        e->ctr_id = dup_or_null(c ? c->info.id : NULL);
        e->ctr_name = dup_or_null(c ? c->info.name : NULL);
        e->ctr_ns = dup_or_null(c ? c->info.containerd_namespace : NULL);
        e->cg = c ? cgroup_index(st, &cgcap, &c->cgroup, &c->info)
                  : cgroup_index(st, &cgcap, model_cgroup(m), NULL);
    }

    const struct proc_list *pl = &m->scan->procs; /* sorted by pid */
    st->alive = xcalloc(pl->n, sizeof(*st->alive));
    st->zombies = xcalloc(pl->n, sizeof(*st->zombies));
    for (size_t i = 0; i < pl->n; i++) {
        const struct proc *p = &pl->items[i];
        if (p->state == 'Z' || p->state == 'X') { /* ended: its parent has not reaped it yet */
            struct ev_child *z = &st->zombies[st->nzombies++];
            *z = (struct ev_child){.pid = p->pid, .ppid = p->ppid, .pgid = p->pgid};
            memcpy(z->comm, p->comm, sizeof(z->comm));
            z->comm[sizeof(z->comm) - 1] = '\0';
            continue;
        }
        st->alive[st->nalive++] = (struct ev_alive){p->pid, p->start_ticks};
    }

    size_t nm = model_nmounts(m);
    st->mounts = xcalloc(nm, sizeof(*st->mounts));
    for (size_t i = 0; i < nm; i++) {
        const struct shm_mount *mt = model_mount(m, i);
        struct ev_mount *e = &st->mounts[st->nmounts++];
        if (i < n->nmounts)
            snprintf(e->id, sizeof(e->id), "%s", n->mounts[i].id);
        else
            snprintf(e->id, sizeof(e->id), "%u:%u", major(mt->dev), minor(mt->dev));
        const struct nsmap *ns = &m->scan->ns;
        if (ns->reach && i < ns->ndevs && ns->reach[i].btime_ok) {
            e->born_known = true;
            e->born = ns->reach[i].btime;
        }
        e->path = xstrdup(mt->path);
        const struct node_ctr *c = i < n->nmounts ? model_ctr(m, n->mounts[i].owner) : NULL;
        e->ctr_id = dup_or_null(c ? c->info.id : NULL);
        e->ctr_name = dup_or_null(c ? c->info.name : NULL);
        e->ctr_ns = dup_or_null(c ? c->info.containerd_namespace : NULL);
        ev_mount_fill(e, mt, warn_pct, crit_pct);
    }
}

void ev_mount_fill(struct ev_mount *e, const struct shm_mount *mt, double warn_pct, double crit_pct)
{
    e->size_known = mt->stat_ok && mt->size > 0;
    e->used = mt->used;
    e->size = mt->size;
    e->used_pct = e->size_known ? 100.0 * (double)mt->used / (double)mt->size : 0;
    e->level = e->size_known ? fill_level_of(e->used_pct, warn_pct, crit_pct) : FILL_OK;
}

void ev_state_free(struct ev_state *st)
{
    for (size_t i = 0; i < st->nprocs; i++) {
        free(st->procs[i].ctr_id);
        free(st->procs[i].ctr_name);
        free(st->procs[i].ctr_ns);
    }
    for (size_t i = 0; i < st->ncgroups; i++) {
        free(st->cgroups[i].path);
        free(st->cgroups[i].dir);
        free(st->cgroups[i].ctr_id);
        free(st->cgroups[i].ctr_name);
        free(st->cgroups[i].ctr_ns);
    }
    for (size_t i = 0; i < st->nmounts; i++) {
        free(st->mounts[i].path);
        free(st->mounts[i].ctr_id);
        free(st->mounts[i].ctr_name);
        free(st->mounts[i].ctr_ns);
    }
    free(st->procs);
    free(st->alive);
    free(st->zombies);
    free(st->cgroups);
    free(st->mounts);
    memset(st, 0, sizeof(*st));
}

/* pid_cmp orders the records that begin with a pid (ev_proc, ev_alive). */
_Static_assert(offsetof(struct ev_proc, pid) == 0 && offsetof(struct ev_alive, pid) == 0 &&
                   offsetof(struct ev_child, pid) == 0,
               "pid_cmp reads a record's pid at its start");

/* The element of pid in base (n elements of size bytes, sorted by their
 * leading pid), NULL for none. */
static const void *find_pid(const void *base, size_t n, size_t size, pid_t pid)
{
    return n ? bsearch(&pid, base, n, size, pid_cmp) : NULL;
}

static const struct ev_mount *mount_in(const struct ev_state *st, const char *id)
{
    for (size_t i = 0; i < st->nmounts; i++)
        if (strcmp(st->mounts[i].id, id) == 0)
            return &st->mounts[i];
    return NULL;
}

/* The mount of st that is mt (of another state): the same device and,
 * where both scans read it, the same birth time. */
static const struct ev_mount *same_mount_in(const struct ev_state *st, const struct ev_mount *mt)
{
    const struct ev_mount *x = mount_in(st, mt->id);
    if (x && x->born_known && mt->born_known &&
        (x->born.tv_sec != mt->born.tv_sec || x->born.tv_nsec != mt->born.tv_nsec))
        return NULL;
    return x;
}

/* p becomes the main of its DataLoader group. */
static void make_main(struct ev_proc *p)
{
    p->role = ROLE_MAIN;
    p->group = p->pid;
}

void ev_state_carry(struct ev_state *cur, const struct ev_state *prev)
{
    size_t n = cur->nprocs;
    for (size_t i = 0; prev->valid && i < prev->nprocs; i++) {
        const struct ev_proc *p = &prev->procs[i];
        struct ev_proc *c = (struct ev_proc *)ev_state_proc(cur, p->pid); /* of cur's own */
        if (c) {
            /* A DataLoader's main stays one while its scans see a holder: its
             * workers gone between epochs or at its end, or never read (a
             * worker's exit named it: ev_state_note_mains). Its own exit is
             * a main's. */
            if (p->role == ROLE_MAIN && c->role == ROLE_HOLDER && c->start_ticks == p->start_ticks)
                make_main(c);
            continue;
        }
        const struct ev_alive *a = find_pid(cur->alive, cur->nalive, sizeof(*a), p->pid);
        if (!a || a->start_ticks != p->start_ticks)
            continue;
        cur->procs = xrealloc(cur->procs, (n + 1) * sizeof(*cur->procs));
        c = &cur->procs[n++];
        *c = *p;
        c->ctr_id = dup_or_null(p->ctr_id);
        c->ctr_name = dup_or_null(p->ctr_name);
        c->ctr_ns = dup_or_null(p->ctr_ns);
        c->cg = SIZE_MAX;
        const char *path = p->cg < prev->ncgroups ? prev->cgroups[p->cg].path : NULL;
        for (size_t g = 0; path && g < cur->ncgroups; g++)
            if (strcmp(cur->cgroups[g].path, path) == 0)
                c->cg = g;
    }
    if (n != cur->nprocs) {
        cur->nprocs = n;
        qsort(cur->procs, n, sizeof(*cur->procs), pid_cmp);
    }
    /* A mount keeps the container it was seen with when a scan names none:
     * one that reads it while the container's last processes exit finds
     * the namespace and no member left to name it, and its going at the
     * next scan is still that container's /dev/shm going. */
    for (size_t i = 0; prev->valid && i < cur->nmounts; i++) {
        struct ev_mount *mt = &cur->mounts[i];
        const struct ev_mount *was = mt->ctr_id ? NULL : same_mount_in(prev, mt);
        if (was && was->ctr_id) {
            mt->ctr_id = xstrdup(was->ctr_id);
            mt->ctr_name = dup_or_null(was->ctr_name);
            mt->ctr_ns = dup_or_null(was->ctr_ns);
        }
    }
}

const struct ev_proc *ev_state_proc(const struct ev_state *st, pid_t pid)
{
    return find_pid(st->procs, st->nprocs, sizeof(*st->procs), pid);
}

void ev_state_note_mains(struct ev_state *st, const struct event_list *evs, size_t from)
{
    for (size_t i = from; i < evs->n; i++) {
        const struct event *e = &evs->items[i];
        if (e->kind != EV_EXIT || !e->group || e->group == e->pid)
            continue;
        struct ev_proc *m = (struct ev_proc *)ev_state_proc(st, e->group);
        if (m && m->role == ROLE_HOLDER)
            make_main(m);
    }
}

const struct ev_child *ev_state_zombie(const struct ev_state *st, pid_t pid)
{
    return find_pid(st->zombies, st->nzombies, sizeof(*st->zombies), pid);
}

const struct ev_proc *ev_state_forker(const struct ev_state *st, const struct ev_child *c)
{
    const struct ev_proc *up = st->valid ? ev_state_proc(st, c->ppid) : NULL;
    if (!up || (up->role != ROLE_MAIN && !up->torch))
        return NULL;
    if (c->comm_inherited)
        return up;
    if (strcmp(up->comm, c->comm) != 0 && torchprint_comm(c->comm) == TORCH_COMM_NONE)
        return NULL;
    return up->role == ROLE_MAIN || !c->pgid || up->pgid == c->pgid ? up : NULL;
}

/* Whether the scan of st still read p: its pid, and its start where both
 * know it. */
static bool alive_in(const struct ev_state *st, const struct ev_proc *p)
{
    const struct ev_alive *a = find_pid(st->alive, st->nalive, sizeof(*a), p->pid);
    return a && (a->start_ticks == p->start_ticks || !p->start_ticks || !a->start_ticks);
}

/* --- Deriving events ------------------------------------------------- */

/* The container e happened in: its id, name and containerd namespace (each
 * NULL when none), copied. */
static void event_container(struct event *e, const char *id, const char *name, const char *ns)
{
    e->container = dup_or_null(id);
    e->container_name = dup_or_null(name);
    e->container_ns = dup_or_null(ns);
    e->container_ns_known = true;
}

static struct event *exit_event(const struct ev_proc *p, double t, struct event_list *out)
{
    struct event *e = push(out, EV_EXIT, t);
    e->pid = p->pid;
    memcpy(e->comm, p->comm, sizeof(e->comm));
    e->role = p->role;
    e->group = p->group;
    event_container(e, p->ctr_id, p->ctr_name, p->ctr_ns);
    e->cause = CAUSE_UNKNOWN;
    return e;
}

/* The signal or exit status of wait status `status` in exit event e, and
 * its cause. */
static void exit_status(struct event *e, int status, bool oom_rose)
{
    if (WIFSIGNALED(status)) {
        e->signal = WTERMSIG(status);
        e->core = WCOREDUMP(status) != 0;
        e->cause = e->signal == SIGBUS                     ? CAUSE_SIGBUS
                   : e->signal == SIGKILL && oom_rose      ? CAUSE_OOM_KILL
                                                           : CAUSE_SIGNAL;
    } else {
        e->has_exit_code = true;
        e->exit_code = WEXITSTATUS(status);
        e->cause = CAUSE_EXIT;
    }
}

bool events_exit(const struct ev_state *st, pid_t pid, int status, double t, bool oom_rose,
                 struct event_list *out)
{
    const struct ev_proc *p = st->valid ? ev_state_proc(st, pid) : NULL;
    if (!p)
        return false;
    if (p->role == ROLE_HOLDER && p->torch && status != 0) {
        struct ev_child c = {.pid = p->pid, .ppid = p->ppid, .pgid = p->pgid};
        memcpy(c.comm, p->comm, sizeof(c.comm));
        const struct ev_proc *forker = ev_state_forker(st, &c);
        if (forker) {
            events_exit_child(&c, forker, status, t, oom_rose, out);
            return true;
        }
    }
    exit_status(exit_event(p, t, out), status, oom_rose);
    return true;
}

void events_exit_child(const struct ev_child *c, const struct ev_proc *forker, int status,
                       double t, bool oom_rose, struct event_list *out)
{
    struct event *e = exit_event(forker, t, out);
    e->pid = c->pid;
    if (!c->comm_inherited) /* else exit_event copied forker's */
        memcpy(e->comm, c->comm, sizeof(e->comm));
    e->role = torchprint_comm(e->comm) == TORCH_COMM_MANAGER ? ROLE_SHM_MANAGER : ROLE_WORKER;
    e->group = forker->group ? forker->group : forker->pid;
    exit_status(e, status, oom_rose);
}

/* An oom_kill event of cgroup g: kills more than it counted before. */
static struct event *oom_event(const struct ev_cgroup *g, uint64_t kills, double t,
                               struct event_list *out)
{
    struct event *e = push(out, EV_OOM_KILL, t);
    e->cgroup = dup_or_null(g->path);
    event_container(e, g->ctr_id, g->ctr_name, g->ctr_ns);
    e->kills = kills;
    return e;
}

bool events_oom(struct ev_state *st, size_t ci, bool known, uint64_t count, pid_t victim,
                const char *victim_comm, double t, struct event_list *out)
{
    if (ci >= st->ncgroups)
        return false;
    struct ev_cgroup *g = &st->cgroups[ci];
    bool rose = known && g->known && count > g->kills;
    if (rose) {
        struct event *e = oom_event(g, count - g->kills, t, out);
        e->victim = victim;
        if (victim_comm)
            snprintf(e->victim_comm, sizeof(e->victim_comm), "%s", victim_comm);
    }
    /* A count that fell (the cgroup made anew) or became known is the new
     * baseline too. */
    g->known = known;
    if (known)
        g->kills = count;
    return rose;
}

static struct event *mount_event(enum event_kind kind, const struct ev_mount *mt, double t,
                                 struct event_list *out)
{
    struct event *e = push(out, kind, t);
    memcpy(e->mount_id, mt->id, sizeof(e->mount_id));
    e->mount = xstrdup(mt->path);
    event_container(e, mt->ctr_id, mt->ctr_name, mt->ctr_ns);
    return e;
}

void events_scan(const struct ev_state *prev, const struct ev_state *cur, const pid_t *reported,
                 size_t nreported, const struct ev_churn *churn, size_t nchurn, double interval_s,
                 double t, struct event_list *out)
{
    if (prev->valid) {
        for (size_t i = 0; i < prev->nprocs; i++) {
            const struct ev_proc *p = &prev->procs[i];
            if (!alive_in(cur, p) && !find_pid(reported, nreported, sizeof(*reported), p->pid))
                exit_event(p, t, out);
        }
        for (size_t i = 0; i < cur->ncgroups; i++) {
            const struct ev_cgroup *g = &cur->cgroups[i], *was = cgroup_in(prev, g->dir);
            if (was && was->known && g->known && g->kills > was->kills)
                oom_event(g, g->kills - was->kills, t, out);
        }
        /* Gone first: a device taken again by a new tmpfs goes, then comes. */
        for (size_t i = 0; i < prev->nmounts; i++)
            if (!same_mount_in(cur, &prev->mounts[i]))
                mount_event(EV_MOUNT, &prev->mounts[i], t, out)->appeared = false;
        for (size_t i = 0; i < cur->nmounts; i++)
            if (!same_mount_in(prev, &cur->mounts[i]))
                mount_event(EV_MOUNT, &cur->mounts[i], t, out)->appeared = true;
        for (size_t i = 0; i < cur->nmounts; i++) {
            const struct ev_mount *mt = &cur->mounts[i], *was = same_mount_in(prev, mt);
            /* A fill level is news when it changed; for a new mount, or one
             * whose size was not known, when it is above ok. */
            bool known = was && was->size_known;
            if (!mt->size_known || mt->level == (known ? was->level : FILL_OK))
                continue;
            struct event *e = mount_event(EV_FILL, mt, t, out);
            e->used = mt->used;
            e->size = mt->size;
            e->used_pct = mt->used_pct;
            e->level = mt->level;
        }
    }
    for (size_t i = 0; i < nchurn; i++) {
        const struct ev_churn *c = &churn[i];
        const struct ev_mount *mt = mount_in(cur, c->mount_id);
        if (!mt || (c->created == 0 && c->removed == 0))
            continue;
        struct event *e = mount_event(EV_SEGMENTS, mt, t, out);
        e->created = c->created;
        e->removed = c->removed;
        e->interval_s = interval_s;
    }
}

/* --- Deaths seen ----------------------------------------------------- */

void death_counts_add(struct death_counts *c, const struct event_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct event *e = &l->items[i];
        if (e->kind != EV_EXIT)
            continue;
        const char *sig = e->cause == CAUSE_UNKNOWN ? "unknown"
                          : e->signal               ? exit_signal_name(e->signal)
                                                    : "none";
        if (!sig)
            sig = "other";
        const char *ctr = e->container_name ? e->container_name : e->container ? e->container : "";
        const char *ns = e->container_ns ? e->container_ns : "";
        struct death_count *d = NULL;
        for (size_t k = 0; k < c->n && !d; k++)
            if (strcmp(c->items[k].signal, sig) == 0 && c->items[k].role == e->role &&
                strcmp(c->items[k].container, ctr) == 0 &&
                strcmp(c->items[k].containerd_ns, ns) == 0)
                d = &c->items[k];
        if (!d) {
            d = VEC_PUSH(c->items, c->n, c->cap);
            snprintf(d->signal, sizeof(d->signal), "%s", sig);
            d->role = e->role;
            d->container = xstrdup(ctr);
            d->containerd_ns = xstrdup(ns);
        }
        d->n++;
    }
}

void death_counts_free(struct death_counts *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->items[i].container);
        free(c->items[i].containerd_ns);
    }
    free(c->items);
    memset(c, 0, sizeof(*c));
}
