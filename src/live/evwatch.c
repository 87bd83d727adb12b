/* The event watcher (evwatch.h): the sources read between scans, the
 * events derived at each scan. */
#include "live/evwatch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "collect/cgroup.h"
#include "collect/proccn.h"
#include "collect/procs.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

/* The wall clock time of a CLOCK_MONOTONIC nanosecond stamp (the kernel's). */
static double wall_of_mono(uint64_t ns)
{
    double ago = clock_now() - (double)ns / 1e9;
    return clock_wall() - (ago > 0 ? ago : 0);
}

void evwatch_open(struct evwatch *w, const struct sysroot *sys, struct event_list *off)
{
    double now_wall = clock_wall();
    memset(w, 0, sizeof(*w));
    w->sys = sys;
    w->sn.fd = -1;
    buf_init(&w->text);
    char why[256];
    w->cn = proccn_open(why, sizeof(why));
    if (w->cn < 0) {
        w->cn = -1;
        char line[400];
        snprintf(line, sizeof(line), "%s; exits are told from the scans, cause unknown", why);
        events_recorder(off, now_wall, "events_off", line);
    }
    if (shmnotify_init(&w->sn) < 0) {
        char line[256];
        snprintf(line, sizeof(line), "segment churn is not counted: inotify: %s",
                 strerror(errno));
        events_recorder(off, now_wall, "events_off", line);
    }
    w->churn_since = clock_now();
}

void evwatch_close(struct evwatch *w)
{
    ev_state_free(&w->prev);
    free(w->reported);
    free(w->pending);
    free(w->renames);
    buf_free(&w->text);
    proccn_close(w->cn);
    shmnotify_free(&w->sn);
    memset(w, 0, sizeof(*w));
    w->cn = -1;
    w->sn.fd = -1;
}

bool evwatch_take_death(struct evwatch *w)
{
    bool d = w->death;
    w->death = false;
    return d;
}

/* A death at t: a recorder takes a snapshot at once (evwatch_take_death). */
static void note_death(struct evwatch *w, double t)
{
    w->death = true;
    if (t > w->death_t)
        w->death_t = t;
}

/* The exit e of a process of st (p, its own entry, or c's forker: c then
 * the process that ended) as an exit event; one by SIGKILL has its
 * cgroup's OOM count read first (the kernel counts the kill before it
 * sends it). */
static void tell(struct evwatch *w, struct ev_state *st, const struct proc_exit *e,
                 const struct ev_proc *p, const struct ev_child *c, struct event_list *out)
{
    *VEC_PUSH(w->reported, w->nreported, w->reported_cap) = e->pid;
    double t = wall_of_mono(e->timestamp_ns);
    bool killed = WIFSIGNALED(e->status) && WTERMSIG(e->status) == SIGKILL;
    bool rose = false, known = false;
    uint64_t count = 0;
    size_t cg = p->cg;
    if (killed && cg < st->ncgroups) {
        const struct ev_cgroup *g = &st->cgroups[cg];
        known = cgroup_read_oom_kills(w->sys, g->dir, g->version, &count) == 0;
        rose = known && g->known && count > g->kills;
    }
    size_t told = out->n;
    if (c)
        events_exit_child(c, p, e->status, t, rose, out);
    else
        events_exit(st, p->pid, e->status, t, rose, out);
    ev_state_note_mains(st, out, told);
    if (killed && cg < st->ncgroups)
        events_oom(st, cg, known, count, e->pid, c ? c->comm : p->comm, t, out);
    note_death(w, t);
}

/* The pending exits told against st, the model of the scan just made: of
 * a process it read alive, or of one a DataLoader main it knows forked, by
 * the facts read when the exit came, else as the zombie st read; the
 * others are dropped. */
static void settle(struct evwatch *w, struct ev_state *st, struct event_list *out)
{
    for (size_t i = 0; i < w->npending; i++) {
        const struct evwatch_pending *x = &w->pending[i];
        const struct ev_proc *p = ev_state_proc(st, x->exit.pid);
        const struct ev_child *c = x->child.pid ? &x->child : ev_state_zombie(st, x->exit.pid);
        if (p)
            tell(w, st, &x->exit, p, NULL, out);
        else if (c && (p = ev_state_forker(st, c)))
            tell(w, st, &x->exit, p, c, out);
    }
    w->npending = 0;
}

/* pid's parent when pid runs Python's forkserver (util/torchprint.h),
 * which forks each worker for the process that started it; else 0. */
static pid_t forkserver_parent(struct evwatch *w, pid_t pid)
{
    char name[32];
    if (read_file_at(w->sys->proc, pid_file_name(name, pid, "cmdline"), &w->text,
                     READ_CMDLINE_MAX) != 0)
        return 0;
    char *cmdline = procs_join_cmdline(w->text.data, w->text.len, "", false);
    bool forkserver = torchprint_forkserver(cmdline);
    free(cmdline);
    struct procstat st;
    if (!forkserver || procstat_read(w->sys->proc, pid, &st) != 0 || st.pid != pid || st.ppid <= 0)
        return 0;
    return st.ppid;
}

/* Keeps the kernel's renames in the ring (evwatch.h), and the forkservers
 * among the new programs: read as they start, since a forkserver ends with
 * its job, often before its workers' exits are read. */
static void keep_renames(struct evwatch *w, const struct proc_exits *x)
{
    if (x->nrenames && !w->renames)
        w->renames = xcalloc(EVWATCH_RENAMES, sizeof(*w->renames));
    for (size_t i = 0; i < x->nrenames; i++) {
        const struct proc_rename *r = &x->renames[i];
        w->renames[w->nrenames++ % EVWATCH_RENAMES] = *r;
        pid_t parent = r->exec ? forkserver_parent(w, r->pid) : 0;
        if (parent > 0)
            w->forkservers[w->nforkservers++ % EVWATCH_FORKSERVERS] =
                (struct evwatch_forkserver){r->pid, parent};
    }
}

/* The newest rename of pid the ring keeps, or NULL. */
static const struct proc_rename *renamed(const struct evwatch *w, pid_t pid)
{
    size_t kept = w->nrenames < EVWATCH_RENAMES ? w->nrenames : EVWATCH_RENAMES;
    for (size_t k = 1; k <= kept; k++) {
        const struct proc_rename *r = &w->renames[(w->nrenames - k) % EVWATCH_RENAMES];
        if (r->pid == pid)
            return r;
    }
    return NULL;
}

/* The process whose worker a child of pid is: the parent of a forkserver
 * seen starting, or of one that runs now (started before the watcher);
 * else pid. */
static pid_t forked_for(struct evwatch *w, pid_t pid)
{
    size_t kept = w->nforkservers < EVWATCH_FORKSERVERS ? w->nforkservers : EVWATCH_FORKSERVERS;
    for (size_t k = 1; k <= kept; k++) {
        const struct evwatch_forkserver *f =
            &w->forkservers[(w->nforkservers - k) % EVWATCH_FORKSERVERS];
        if (f->pid == pid)
            return f->parent;
    }
    pid_t parent = forkserver_parent(w, pid);
    return parent > 0 ? parent : pid;
}

/* Keeps exit e for the next scan, with its parent, process group and name
 * when it did not merely exit 0: from its /proc/PID/stat (read now: its
 * parent may reap it before the scan), else, reaped already, from the
 * kernel (its parent; its name, when it took one since its fork). A
 * forkserver's child is taken as forked by the forkserver's parent. */
static void pend(struct evwatch *w, const struct proc_exit *e)
{
    struct evwatch_pending *x = VEC_PUSH(w->pending, w->npending, w->pending_cap);
    memset(x, 0, sizeof(*x));
    x->exit = *e;
    if (e->status == 0)
        return;
    struct procstat st;
    if (procstat_read(w->sys->proc, e->pid, &st) == 0 && st.pid == e->pid) {
        x->child = (struct ev_child){.pid = st.pid, .ppid = st.ppid, .pgid = st.pgid};
        memcpy(x->child.comm, st.comm, sizeof(x->child.comm)); /* terminated */
    } else if (e->parent > 0) {
        x->child = (struct ev_child){.pid = e->pid, .ppid = e->parent};
        const struct proc_rename *r = renamed(w, e->pid);
        if (!r)
            x->child.comm_inherited = true;
        else if (!r->exec) /* another program's: no name, no worker */
            memcpy(x->child.comm, r->comm, sizeof(x->child.comm));
    }
    if (x->child.ppid > 0)
        x->child.ppid = forked_for(w, x->child.ppid);
}

/* The exits waiting on the connector: each of a process the last model
 * knew is an exit event at once (tell); the others wait for the next scan
 * (settle), one by SIGBUS, the mark of a full /dev/shm, with a snapshot
 * due at once. */
static void on_exits(struct evwatch *w, struct event_list *out)
{
    struct proc_exits x = {0};
    int rc = proccn_read(w->cn, &x);
    if (rc == -ENOBUFS && !w->lost_said) {
        events_recorder(out, clock_wall(), "events_off",
                        "some process events were lost (the socket's queue was full); those "
                        "exits are told from the scans, cause unknown");
        w->lost_said = true;
    } else if (rc < 0 && rc != -ENOBUFS) {
        char why[256];
        snprintf(why, sizeof(why),
                 "process events stopped: %s; exits are told from the scans, cause unknown",
                 strerror(-rc));
        events_recorder(out, clock_wall(), "events_off", why);
        proccn_close(w->cn);
        w->cn = -1;
        w->npending = 0; /* no scan settles them now */
    }
    keep_renames(w, &x);
    for (size_t i = 0; i < x.n; i++) {
        const struct proc_exit *e = &x.items[i];
        const struct ev_proc *p = ev_state_proc(&w->prev, e->pid);
        if (p)
            tell(w, &w->prev, e, p, NULL, out);
        if (p || w->cn < 0 || w->npending >= EVWATCH_PENDING_MAX)
            continue;
        pend(w, e);
        if (WIFSIGNALED(e->status) && WTERMSIG(e->status) == SIGBUS)
            note_death(w, wall_of_mono(e->timestamp_ns));
    }
    proc_exits_free(&x);
}

int evwatch_wait(struct evwatch *w, double until, int ctl, struct event_list *out)
{
    double left = until - clock_now();
    if (left < 0)
        left = 0;
    /* poll passes over an fd of -1 (a source not open, no ctl). */
    struct pollfd p[3] = {
        {.fd = w->cn, .events = POLLIN},
        {.fd = w->sn.fd, .events = POLLIN},
        {.fd = ctl, .events = POLLIN},
    };
    if (poll(p, 3, (int)(left * 1000.0) + 1) <= 0)
        return 0;
    if (p[0].revents)
        on_exits(w, out);
    if (p[1].revents)
        shmnotify_read(&w->sn);
    return p[2].revents ? 1 : 0;
}

/* Whether the scan of st read a process of this pid. */
static bool still_listed(const struct ev_state *st, pid_t pid)
{
    for (size_t i = 0; i < st->nalive; i++)
        if (st->alive[i].pid == pid)
            return true;
    return false;
}

/* Whether a cgroup of cur counts OOM kills that prev has not yet been told
 * of (by a death on the connector, events_oom). */
static bool oom_untold(const struct ev_state *prev, const struct ev_state *cur)
{
    for (size_t i = 0; i < cur->ncgroups; i++) {
        const struct ev_cgroup *c = &cur->cgroups[i];
        for (size_t j = 0; c->known && j < prev->ncgroups; j++) {
            const struct ev_cgroup *p = &prev->cgroups[j];
            if (p->known && strcmp(p->path, c->path) == 0 && c->kills > p->kills)
                return true;
        }
    }
    return false;
}

void evwatch_scan(struct evwatch *w, const struct scan *s, struct ev_state *cur_in, double t,
                  bool churn, struct event_list *out)
{
    struct ev_state cur = *cur_in;
    memset(cur_in, 0, sizeof(*cur_in));
    /* Exits the kernel told while the scan ran belong to the last model's
     * processes: taken before cur replaces it. The snapshot of this scan,
     * written before, is after those that came before the scan began: no
     * other is due for them. One that came after an interval's scan began
     * (while it read, or while it stalled) is not in it: a snapshot is due
     * for it. One during a death's own snapshot is not due another: at
     * most one per interval follows the deaths of a killed job. */
    if (w->cn >= 0) {
        on_exits(w, out);
        /* The kernel counts an OOM kill before its victim has freed its
         * memory and exited: a scan in between counts the kill and still
         * lists the victim. Its exit, up to a second later, is then told
         * against the last model, as the OOM killer's, naming the victim. */
        double until = clock_now() + 1.0;
        while (w->cn >= 0 && oom_untold(&w->prev, &cur) && clock_now() < until) {
            struct pollfd p = {.fd = w->cn, .events = POLLIN};
            if (poll(&p, 1, (int)((until - clock_now()) * 1000.0) + 1) > 0)
                on_exits(w, out);
        }
        settle(w, &cur, out);
        w->death = churn && w->death_t >= t;
    }
    shmnotify_read(&w->sn);
    struct ev_churn *ch = NULL;
    size_t nch = 0;
    double interval_s = clock_now() - w->churn_since;
    if (churn && w->sn.fd >= 0) {
        ch = xcalloc(cur.nmounts, sizeof(*ch));
        for (size_t i = 0; i < cur.nmounts; i++) {
            uint64_t c, r;
            if (shmnotify_take(&w->sn, cur.mounts[i].id, &c, &r))
                ch[nch++] = (struct ev_churn){cur.mounts[i].id, c, r};
        }
        w->churn_since = clock_now();
    }
    /* events_scan looks the pids up sorted; w->reported keeps the order
     * they came in, older window first. */
    pid_t *sorted = xmalloc(w->nreported * sizeof(*sorted));
    if (w->nreported) /* memcpy of nothing: w->reported is a null pointer */
        memcpy(sorted, w->reported, w->nreported * sizeof(*sorted));
    qsort(sorted, w->nreported, sizeof(*sorted), pid_cmp);
    events_scan(&w->prev, &cur, sorted, w->nreported, ch, nch, interval_s, t, out);
    free(sorted);
    ev_state_carry(&cur, &w->prev);
    free(ch);
    /* The newer window becomes the older one. A pid of the older one stays
     * while the scan still lists it (the scan read it before it exited; a
     * zombie is not listed): its death was told, and its going at a later
     * scan is no second one. */
    size_t keep = 0;
    for (size_t i = 0; i < w->nolder; i++)
        if (still_listed(&cur, w->reported[i]))
            w->reported[keep++] = w->reported[i];
    if (w->nreported > w->nolder) /* memmove of nothing: a null pointer */
        memmove(w->reported + keep, w->reported + w->nolder,
                (w->nreported - w->nolder) * sizeof(*w->reported));
    w->nreported = keep + (w->nreported - w->nolder);
    w->nolder = w->nreported;
    /* The OOM counts the connector's deaths were checked against stay the
     * baseline only until this scan's are known: cur's are newer. */
    ev_state_free(&w->prev);
    w->prev = cur;
    shmnotify_follow(&w->sn, s, w->sys);
}
