#include "collect/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/containers.h"
#include "collect/walk.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* Is the watched process still the one first seen? sysroot_pid_check
 * answers by the pidfd where there is one: a newcomer that takes the pid
 * within the same clock tick has the same start time. Once it is gone, the
 * pid's stat tells whether another process has it now. 0 while it is (or
 * cannot be told otherwise: the reads that follow will say); else -ESRCH,
 * with s->target_state and a warning saying what became of it, so that the
 * scan stands on its own. */
static int check_target(const struct sysroot *sys, struct scan *s)
{
    unsigned long long start;
    if (sys->pid <= 0 || !sys->pid_start || sysroot_pid_check(sys) != 0)
        return 0;
    s->target_state = sysroot_start_time(sys->proc, sys->pid, &start) == 0
                          ? SCAN_TARGET_REPLACED
                          : SCAN_TARGET_EXITED;
    warn_add(&s->warn, "pid %d %s", (int)s->target_pid,
             s->target_state == SCAN_TARGET_REPLACED
                 ? "has exited (its pid now belongs to another process)"
                 : "has exited");
    return -ESRCH;
}

/* One scan in progress: what its steps share. */
struct scan_ctx {
    const struct scan_opts *o;
    const struct sysroot *sys;
    const struct mount_source *src;
    struct mountinfo self_mi;   /* where the cgroup hierarchies are */
    struct mountinfo target_mi; /* --pid: the watched process's */
    const struct mountinfo *mi; /* the watched namespace's: one of the two */
    pid_t *pids;                /* the one listing of proc, ascending */
    size_t npids;
    int list_rc; /* 0, or why proc could not be listed */
};

/* Where a scan takes its mounts from: the watched process's mount namespace
 * (its mountinfo, each mount below sys->root), or with --all every mount
 * namespace's (collect/node.h), each mount below the root of a process that
 * sees it. The steps of a scan that differ between the two. */
struct mount_source {
    void (*find)(struct scan_ctx *c, struct scan *s);   /* the mounts into s->mounts */
    void (*facts)(struct scan_ctx *c, struct scan *s);  /* propagation, birth (ns.reach) */
    void (*list)(struct scan_ctx *c, struct scan *s);   /* the listing, before the walk */
    void (*finish)(struct scan_ctx *c, struct scan *s); /* its stats, after the walk */
    void (*owners)(struct scan_ctx *c, struct scan *s); /* memory cgroups, containers */
};

static void watched_find(struct scan_ctx *c, struct scan *s)
{
    mounts_collect(c->sys, c->mi, c->o->mounts, c->o->nmounts, &s->mounts, &s->warn);
}

/* What the watched mountinfo says of each mount's propagation, and when its
 * tmpfs was made (the birth time of its root: statx, Linux 5.18+). */
static void watched_facts(struct scan_ctx *c, struct scan *s)
{
    const struct mountinfo *mi = c->mi;
    for (size_t i = 0; i < s->mounts.n; i++) {
        const struct shm_mount *mt = &s->mounts.items[i];
        struct mount_reach *r = &s->ns.reach[i];
        for (size_t k = 0; k < mi->n; k++)
            if (makedev(mi->items[k].major, mi->items[k].minor) == mt->dev &&
                mi->items[k].propagates)
                r->propagates = true;
        int fd = sysroot_open_below(c->sys, mt->path, O_PATH | O_NOFOLLOW);
        if (fd < 0)
            continue;
        r->btime_ok = mounts_btime(fd, &r->btime);
        close(fd);
    }
}

static void watched_list(struct scan_ctx *c, struct scan *s)
{
    files_collect(c->sys, &s->mounts, &s->files, &s->warn);
    files_trim(&s->files);
}

static void watched_finish(struct scan_ctx *c, struct scan *s)
{
    files_finish(c->sys, &s->mounts, &s->files, &s->holders);
}

static void watched_owners(struct scan_ctx *c, struct scan *s)
{
    cgroup_collect(c->sys, s->target_pid, &c->self_mi, &s->cgroup, &s->warn, NULL);
    node_single(&s->node, &s->mounts);
}

static void every_find(struct scan_ctx *c, struct scan *s)
{
    if (c->list_rc < 0)
        warn_add(&s->warn, "cannot list %s: %s", sysroot_proc_shown(c->sys), strerror(-c->list_rc));
    node_discover(&s->node, c->sys, c->pids, c->npids, &s->ns, c->o->mounts, c->o->nmounts,
                  &s->mounts, &s->warn);
}

static void every_facts(struct scan_ctx *c, struct scan *s)
{
    (void)c;
    node_facts(&s->node, &s->ns);
}

static void every_list(struct scan_ctx *c, struct scan *s)
{
    /* node_files_finish trims the list once its entries are stat'ed. */
    node_files_collect(&s->node, c->sys, &s->mounts, &s->files, &s->warn);
}

static void every_finish(struct scan_ctx *c, struct scan *s)
{
    node_files_finish(&s->node, c->sys, &s->mounts, &s->files, &s->holders);
    node_roots_close(&s->node);
}

static void every_owners(struct scan_ctx *c, struct scan *s)
{
    /* The host is /proc's pid 1's world (the watcher may itself be in a
     * container, as a DaemonSet's pod is): its cgroup budgets the host's
     * mounts. */
    cgroup_collect(c->sys, 1, &c->self_mi, &s->cgroup, &s->warn, NULL);
    node_assign(&s->node, c->sys, &c->self_mi, &s->mounts, &s->procs, &s->warn);
}

static const struct mount_source source_watched = {
    watched_find, watched_facts, watched_list, watched_finish, watched_owners,
};
static const struct mount_source source_every = {
    every_find, every_facts, every_list, every_finish, every_owners,
};

/* This process's mountinfo (where the cgroup hierarchies are) and the
 * watched process's (itself, or --pid's: where its shm mounts are). 0, or
 * -errno when the watched process's cannot be read (said in s->warn). */
static int read_mountinfos(struct scan_ctx *c, struct scan *s)
{
    int rc = mountinfo_read(c->sys->proc, "self/mountinfo", &c->self_mi);
    if (rc < 0) {
        warn_add(&s->warn, "cannot read %s/self/mountinfo: %s", sysroot_proc_shown(c->sys),
                 strerror(-rc));
        mountinfo_free(&c->self_mi); /* a file past the cap: none of it */
    }
    c->mi = &c->self_mi;
    if (s->target_pid <= 0)
        return 0;
    char path[32];
    pid_file_name(path, s->target_pid, "mountinfo");
    rc = mountinfo_read(c->sys->proc, path, &c->target_mi);
    if (rc < 0) {
        /* Gone in the meantime, or not ours to read. */
        if (check_target(c->sys, s) < 0)
            return -ESRCH;
        warn_add(&s->warn, "cannot read the namespaces of pid %d: %s", (int)s->target_pid,
                 strerror(-rc));
        return rc;
    }
    c->mi = &c->target_mi;
    return 0;
}

/* The mounts from the source, the namespace map on their devices, and what
 * is known of each. */
static void find_mounts(struct scan_ctx *c, struct scan *s)
{
    nsmap_init(&s->ns, NULL, 0);
    c->src->find(c, s);
    s->devs = xcalloc(s->mounts.n, sizeof(*s->devs));
    for (size_t i = 0; i < s->mounts.n; i++)
        s->devs[i] = s->mounts.items[i].dev;
    nsmap_watch(&s->ns, s->devs, s->mounts.n);
    c->src->facts(c, s);
    for (size_t i = 0; i < s->mounts.n; i++)
        if (!s->mounts.items[i].stat_ok)
            warn_add(&s->warn, "cannot read the size of %s: %s", s->mounts.items[i].path,
                     s->mounts.items[i].stat_err == ESTALE
                         ? "another mount covers it (its path leads to another file system)"
                         : strerror(s->mounts.items[i].stat_err));
}

/* The pass over proc: the process table, the holders and the namespaces. */
static void walk_procs(struct scan_ctx *c, struct scan *s)
{
    struct walk_opts wo = {
        .sys = c->sys,
        .devs = s->devs,
        .ndevs = s->mounts.n,
        .files = &s->files,
        .world_pid = s->target_pid > 0 ? s->target_pid : s->self_pid,
        .ns = &s->ns,
        .beacon = c->o->beacon,
        .pids = c->pids,
        .npids = c->npids,
    };
    int rc = c->list_rc < 0 ? c->list_rc : walk_run(&wo, &s->procs, &s->holders, &s->warn);
    if (rc < 0)
        warn_add(&s->warn, "cannot read the process table from %s: %s", sysroot_proc_shown(c->sys),
                 strerror(-rc));
}

/* After the walk: the listing's entries that a holder's fd stat'ed need no
 * stat of their own; then meminfo, SysV, and whose each mount is. */
static void finish(struct scan_ctx *c, struct scan *s)
{
    scan_beacon_at(c->o->beacon, SCAN_MOUNTS, 0, -1);
    c->src->finish(c, s);
    scan_beacon_at(c->o->beacon, SCAN_REST, 0, -1);
    if (procs_meminfo(&s->mem) < 0)
        warn_add(&s->warn, "cannot read meminfo");
    s->holders_scanned = true;
    if (s->warn.vanished)
        warn_add(&s->warn, "%zu %s while being read", s->warn.vanished,
                 s->warn.vanished == 1 ? "process exited" : "processes exited");
    int rc = sysv_collect(c->sys, &s->sysv);
    if (rc < 0 && rc != -ENOENT)
        warn_add(&s->warn, "cannot read %s/sysvipc/shm: %s", sysroot_proc_shown(c->sys),
                 strerror(-rc));
    c->src->owners(c, s);
}

int scan_run(const struct scan_opts *o, struct scan *s)
{
    memset(s, 0, sizeof(*s));
    s->stalled_fd = -1;
    warn_init(&s->warn);
    scan_beacon_at(o->beacon, SCAN_MOUNTS, 0, -1);
    struct scan_ctx c = {.o = o, .sys = o->sys, .src = o->all ? &source_every : &source_watched};
    s->target_pid = c.sys->pid;
    s->self_pid = sysroot_self_pid(c.sys);
    clock_gettime(CLOCK_REALTIME, &s->time);
    double t0 = clock_now();

    int rc = check_target(c.sys, s);
    if (rc < 0 || (rc = read_mountinfos(&c, s)) < 0)
        goto out;
    c.list_rc = walk_list(c.sys->proc, &c.pids, &c.npids);
    find_mounts(&c, s);
    /* How a container names itself: its /etc/hostname, read below its root
     * without following a link (one to /etc/shadow would otherwise be
     * resolved against the host's root and shown). */
    if (s->target_pid > 0)
        s->target_host = containers_hostname(c.sys->root);
    c.src->list(&c, s);
    walk_procs(&c, s);
    finish(&c, s);
    /* Still the same process at the end: what was read through its pid
     * was its, not a newcomer's that took the pid meanwhile. */
    if ((rc = check_target(c.sys, s)) < 0)
        goto out;
    s->duration_s = clock_now() - t0;
    scan_beacon_at(o->beacon, SCAN_IDLE, 0, -1);
out:
    mountinfo_free(&c.self_mi);
    mountinfo_free(&c.target_mi);
    free(c.pids);
    return rc;
}

const struct cgroup_info *scan_mount_cgroup(const struct scan *s, size_t i)
{
    const struct node_ctr *c = node_owner(&s->node, i);
    return c ? &c->cgroup : &s->cgroup;
}

void scan_free(struct scan *s)
{
    mounts_free(&s->mounts);
    files_free(&s->files);
    holders_free(&s->holders);
    procs_free(&s->procs);
    sysv_free(&s->sysv);
    cgroup_free(&s->cgroup);
    nsmap_free(&s->ns);
    node_free(&s->node);
    free(s->devs);
    s->devs = NULL;
    warn_free(&s->warn);
    free(s->target_host);
    s->target_host = NULL;
}
