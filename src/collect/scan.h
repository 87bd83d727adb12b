/* One complete reading of the system: mounts, named files, holders, the
 * process table, SysV segments, meminfo and the memory cgroup. Plain data
 * for the model; nothing here interprets it. */
#ifndef SHMWATCH_SCAN_H
#define SHMWATCH_SCAN_H

#include <stdbool.h>
#include <time.h>

#include "collect/cgroup.h"
#include "collect/files.h"
#include "collect/holders.h"
#include "collect/mounts.h"
#include "collect/node.h"
#include "collect/nsmap.h"
#include "collect/procs.h"
#include "collect/beacon.h"
#include "collect/sysv.h"
#include "util/sysroot.h"
#include "util/warn.h"

struct scan_opts {
    /* Where the watched system lives (util/sysroot.h), the one way in: its
     * proc is read, the cgroup hierarchies are reached below its host and
     * the shm mounts below its root. sys->pid 0: this process's world;
     * else (sysroot_open_pid) PID's namespaces are watched, and the
     * process is checked before and after every scan (sysroot_pid_check:
     * its pidfd, else its start time sys->pid_start) so that a pid taken
     * over by a new process is never watched in its place. It
     * must outlive the scan (and a scan job). */
    const struct sysroot *sys;
    const char *const *mounts;      /* --mount paths (as the target sees them), or NULL */
    size_t nmounts;
    struct scan_beacon *beacon;     /* where the scan is, for a watchdog (beacon.h); or NULL */
    bool all;                       /* --all: the node view (collect/node.h); not with
                                     * a --pid view (sys->pid) */
};

/* What became of the watched process (--pid). */
enum scan_target { SCAN_TARGET_OK, SCAN_TARGET_EXITED, SCAN_TARGET_REPLACED };

struct scan {
    struct timespec time;       /* wall clock when the scan started */
    double duration_s;          /* how long the scan took */
    struct mount_list mounts;
    struct file_list files;
    struct holder_list holders;
    struct proc_list procs;
    struct sysv_list sysv;
    struct meminfo mem;
    struct cgroup_info cgroup;
    struct scan_node node;      /* each mount's id and containers, each process's
                                 * container (the node view's, or the one world's) */
    struct nsmap ns;            /* pid namespaces per mount (ns.reach is indexed like
                                 * mounts) and what the watcher sees of them */
    dev_t *devs;                /* the mounts' devices, for ns */
    struct warnings warn;
    bool holders_scanned;
    pid_t target_pid;
    enum scan_target target_state; /* not OK: scan_run failed with -ESRCH */
    pid_t self_pid;    /* the scanning process (as sys->proc numbers it: sysroot_self_pid):
                        * whose world is watched without --pid */
    char *target_host; /* the watched process's /etc/hostname, or NULL */
    /* A stand-in for a scan that has not ended (scan_stalled): it has no
     * figures, only these and a warning. */
    double stalled_s;  /* how long the scan has been running; 0 in a complete scan */
    pid_t stalled_pid; /* the process it is reading, 0 when unknown */
    int stalled_fd;    /* that process's fd it is reading, -1 when unknown */
};

/* Fills s; returns 0, or -errno when nothing useful could be read (no mount
 * found at all is not an error: the lists are simply empty); -ESRCH with
 * s->target_state saying why when the watched process has exited or its
 * pid is now another process's. Whatever it returns, s is a valid scan
 * (its time set, its lists empty or filled) whose warnings say what went
 * wrong: it can be modelled, reported and freed like any other. */
int scan_run(const struct scan_opts *opts, struct scan *s);

void scan_free(struct scan *s);

/* The memory cgroup that owns mount i: its owner container's (node.h,
 * node_owner), else the scan's own. */
const struct cgroup_info *scan_mount_cgroup(const struct scan *s, size_t i);
/* Fills s as the stand-in for a scan that has been running for stalled_s
 * seconds and is still at b: the time now, no figures, a warning that says
 * what it is reading. */
void scan_stalled(struct scan *s, const struct scan_opts *o, double stalled_s,
                  const struct scan_beacon *b);

#endif
