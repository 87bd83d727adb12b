#include "collect/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/containers.h"
#include "collect/walk.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/xalloc.h"

/* What the watched mountinfo says of each mount's propagation, and when its
 * tmpfs was made (the birth time of its root: statx, Linux 5.18+). */
static void mount_facts(const struct sysroot *sys, const struct mountinfo *mi,
                        const struct mount_list *ml, struct nsmap *ns)
{
    for (size_t i = 0; i < ml->n; i++) {
        const struct shm_mount *mt = &ml->items[i];
        struct mount_reach *r = &ns->reach[i];
        for (size_t k = 0; k < mi->n; k++)
            if (makedev(mi->items[k].major, mi->items[k].minor) == mt->dev &&
                mi->items[k].propagates)
                r->propagates = true;
        struct statx sx;
        int fd = sysroot_open_below(sys, mt->path, O_PATH | O_NOFOLLOW);
        if (fd < 0)
            continue;
        int rc = statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BTIME, &sx);
        close(fd);
        if (rc == 0 && (sx.stx_mask & STATX_BTIME)) {
            r->btime_ok = true;
            r->btime.tv_sec = (time_t)sx.stx_btime.tv_sec;
            r->btime.tv_nsec = (long)sx.stx_btime.tv_nsec;
        }
    }
}

int scan_target_identify(const struct sysroot *sys, pid_t pid, unsigned long long *start_ticks)
{
    struct procstat st;
    int rc = procstat_read(sys->proc, pid, &st);
    if (rc == 0 && (st.state == 'Z' || st.state == 'X'))
        rc = -ESRCH;
    if (rc == 0)
        *start_ticks = st.start_ticks;
    return rc;
}

/* Is the watched process still the one first seen? */
static enum scan_target check_target(const struct sysroot *sys)
{
    if (sys->pid <= 0 || !sys->pid_start)
        return SCAN_TARGET_OK;
    unsigned long long start;
    int rc = scan_target_identify(sys, sys->pid, &start);
    if (rc == -ESRCH)
        return SCAN_TARGET_EXITED;
    if (rc == 0 && start != sys->pid_start)
        return SCAN_TARGET_REPLACED;
    return SCAN_TARGET_OK; /* unreadable: the reads that follow will say */
}

/* The scan's answer when the watched process has gone: a warning says so,
 * like every other failure, so that the scan stands on its own. */
static int target_lost(struct scan *s)
{
    warn_add(&s->warn, "pid %d %s", (int)s->target_pid,
             s->target_state == SCAN_TARGET_REPLACED
                 ? "has exited (its pid now belongs to another process)"
                 : "has exited");
    return -ESRCH;
}

int scan_run(const struct scan_opts *o, struct scan *s)
{
    memset(s, 0, sizeof(*s));
    s->stalled_fd = -1;
    warn_init(&s->warn);
    scan_beacon_at(o->beacon, SCAN_MOUNTS, 0, -1);
    const struct sysroot *sys = o->sys;
    pid_t target = sys->pid;
    s->target_pid = target;
    s->self_pid = sysroot_self_pid(sys);
    clock_gettime(CLOCK_REALTIME, &s->time);
    double t0 = clock_now();

    s->target_state = check_target(sys);
    if (s->target_state != SCAN_TARGET_OK)
        return target_lost(s);
    const char *proc = sysroot_proc_shown(sys); /* for messages */
    /* This process's mountinfo says where the cgroup hierarchies are; the
     * watched process's (itself, or --pid's) where its shm mounts are. */
    struct mountinfo self_mi, target_mi;
    int rc = mountinfo_read(sys->proc, "self/mountinfo", &self_mi);
    if (rc < 0)
        warn_add(&s->warn, "cannot read %s/self/mountinfo: %s", proc, strerror(-rc));
    const struct mountinfo *mi = &self_mi;
    if (target > 0) {
        char path[32]; /* "PID/mountinfo": bounded */
        snprintf(path, sizeof(path), "%d/mountinfo", (int)target);
        rc = mountinfo_read(sys->proc, path, &target_mi);
        if (rc < 0) {
            mountinfo_free(&self_mi);
            /* Gone in the meantime, or not ours to read. */
            s->target_state = check_target(sys);
            if (s->target_state != SCAN_TARGET_OK)
                return target_lost(s);
            warn_add(&s->warn, "cannot read the namespaces of pid %d: %s", (int)target,
                     strerror(-rc));
            return rc;
        }
        mi = &target_mi;
    }

    /* --all: every mount namespace's (collect/node.h), each mount below a
     * root of its own; else the watched namespace's, below sys->root. */
    if (o->all)
        node_discover(&s->node, sys, o->mounts, o->nmounts, &s->mounts, &s->warn);
    else
        mounts_collect(sys, mi, o->mounts, o->nmounts, &s->mounts, &s->warn);
    s->devs = xcalloc(s->mounts.n ? s->mounts.n : 1, sizeof(*s->devs));
    for (size_t i = 0; i < s->mounts.n; i++)
        s->devs[i] = s->mounts.items[i].dev;
    nsmap_init(&s->ns, s->devs, s->mounts.n);
    if (o->all)
        node_seed(&s->node, &s->ns); /* the walk reads no mountinfo twice; the facts */
    else
        mount_facts(sys, mi, &s->mounts, &s->ns);
    if (mi != &self_mi)
        mountinfo_free(&target_mi);
    for (size_t i = 0; i < s->mounts.n; i++)
        if (!s->mounts.items[i].stat_ok)
            warn_add(&s->warn, "cannot read the size of %s: %s", s->mounts.items[i].path,
                     s->mounts.items[i].stat_err == ESTALE
                         ? "another mount covers it (its path leads to another file system)"
                         : strerror(s->mounts.items[i].stat_err));
    /* How a container names itself: its /etc/hostname, read below its root
     * without following a link (one to /etc/shadow would otherwise be
     * resolved against the host's root and shown). */
    if (target > 0)
        s->target_host = containers_hostname(sys->root);
    if (o->all) {
        /* node_files_finish remakes the list at its size: nothing to trim. */
        node_files_collect(&s->node, sys, &s->mounts, &s->files, &s->warn);
    } else {
        files_collect(sys, &s->mounts, &s->files, &s->warn);
        files_trim(&s->files);
    }

    /* One pass over proc reads the process table, the holders and the
     * namespaces. */
    struct walk_opts wo = {
        .sys = sys,
        .devs = s->devs,
        .ndevs = s->mounts.n,
        .files = &s->files,
        .world_pid = target > 0 ? target : s->self_pid,
        .ns = &s->ns,
        .beacon = o->beacon,
    };
    int wrc = walk_run(&wo, &s->procs, &s->holders, &s->warn);
    if (wrc < 0)
        warn_add(&s->warn, "cannot read the process table from %s: %s", proc, strerror(-wrc));
    scan_beacon_at(o->beacon, SCAN_MOUNTS, 0, -1);
    /* After the walk: the listing's entries that a holder's fd stat'ed need
     * no stat of their own. */
    if (o->all) {
        node_files_finish(&s->node, sys, &s->mounts, &s->files, &s->holders);
        node_roots_close(&s->node);
    } else {
        files_finish(sys, &s->mounts, &s->files, &s->holders);
    }
    scan_beacon_at(o->beacon, SCAN_REST, 0, -1);
    if (procs_meminfo(&s->mem) < 0)
        warn_add(&s->warn, "cannot read meminfo");
    s->holders_scanned = true;
    if (s->warn.vanished)
        warn_add(&s->warn, "%zu %s while being read", s->warn.vanished,
                 s->warn.vanished == 1 ? "process exited" : "processes exited");

    rc = sysv_collect(sys, &s->sysv);
    if (rc < 0 && rc != -ENOENT)
        warn_add(&s->warn, "cannot read %s/sysvipc/shm: %s", proc, strerror(-rc));

    /* --all: the host is /proc's pid 1's world (the watcher may itself be
     * in a container, as a DaemonSet's pod is): its cgroup budgets the
     * host's mounts. */
    cgroup_collect(sys, o->all ? 1 : target, &self_mi, &s->cgroup, &s->warn);
    if (o->all)
        node_assign(&s->node, sys, &self_mi, &s->mounts, &s->procs, &s->warn);
    else
        node_single(&s->node, &s->mounts);
    mountinfo_free(&self_mi);
    /* Still the same process at the end: what was read through its pid
     * was its, not a newcomer's that took the pid meanwhile. */
    s->target_state = check_target(sys);
    if (s->target_state != SCAN_TARGET_OK)
        return target_lost(s);

    s->duration_s = clock_now() - t0;
    scan_beacon_at(o->beacon, SCAN_IDLE, 0, -1);
    return 0;
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
