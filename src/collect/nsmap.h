/* Which pid namespaces can reach each watched mount, and what the watcher
 * can see of them (doc/shmwatch.1, PID NAMESPACES).
 *
 * A segment name carries its creator's pid as that creator read it: in its
 * own pid namespace. Whether "that pid is dead" proves anything depends on
 * which pid namespaces can write into the mount, so the walk of /proc
 * gathers, for every process, its mount and pid namespace links (two
 * readlinks), and for every distinct mount namespace one mountinfo (through
 * one member) to learn which watched devices it shows. Plain facts: the
 * model (model/pidtrust.c) decides what they prove. */
#ifndef SHMWATCH_NSMAP_H
#define SHMWATCH_NSMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "collect/mounts.h"
#include "collect/procs.h"

/* The inode of the machine's first pid namespace: fixed by the kernel
 * (PROC_PID_INIT_INO, include/linux/proc_ns.h, since Linux 3.8). */
#define NSMAP_INIT_PIDNS 0xEFFFFFFCul

/* What a mount namespace shows of a watched device (mntns_seen.sees). */
enum {
    NSMAP_SHOWS = 1,  /* it mounts the device */
    NSMAP_AT_SHM = 2, /* at /dev/shm or /run/shm, the path through which
                       * shm_open and the programs that name segments after
                       * their pid make them */
};

/* One distinct mount namespace met in the walk. */
struct mntns_seen {
    unsigned long mntns;
    unsigned char *sees; /* per watched device: NSMAP_* bits, 0 when this namespace
                          * does not mount it (NULL until nsmap_watch for one added
                          * before it) */
    struct mountinfo mi; /* a namespace added before the watched devices were
                          * known (nsmap_add_read): its mountinfo, until nsmap_watch */
};

/* One watched mount (indexed like scan->mounts). */
struct mount_reach {
    unsigned long *pidns; /* pid namespaces of the processes whose mount namespace
                           * shows the mount: distinct, ascending */
    size_t npidns;
    unsigned long *shm_pidns; /* those of them whose mount namespace shows it at
                               * /dev/shm or /run/shm: distinct, ascending */
    size_t nshm_pidns;
    /* The live processes whose mount namespace shows it at /dev/shm or
     * /run/shm (those whose links cannot be read count nowhere, as for
     * pidns above), and the earliest start among them: a file written
     * before it was written by none of the processes that can write there
     * now. */
    size_t nshm_procs;
    unsigned long long shm_first_ticks; /* clock ticks since boot (nsmap_started) */
    bool propagates;      /* the watched mountinfo tags it shared: or master: (it
                           * is mounted in other mount namespaces too) */
    bool btime_ok;        /* btime is known (statx of its root, Linux 5.18+) */
    struct timespec btime; /* birth of its root: when the tmpfs was made */
};

struct nsmap {
    const dev_t *devs;   /* the watched devices (the walk's) */
    size_t ndevs;
    struct mntns_seen *ns;
    size_t nns, nscap;
    struct mount_reach *reach; /* ndevs entries, filled by nsmap_reach */
    unsigned long self_pidns;  /* the watcher's own pid namespace, 0 unknown */
    int self_depth;            /* entries in the watcher's NSpid: 1 when /proc is of its
                                * own pid namespace; 0 unknown */
    unsigned long view_pidns;  /* the pid namespace whose processes /proc lists (pid
                                * 1's), 0 unknown */
    bool view_initial;         /* that namespace is the machine's first: every process
                                * of the machine is listed */
    bool pid1_ok;              /* pid1_start is known */
    struct timespec pid1_start; /* wall-clock start of /proc's pid 1 (the pid
                                 * namespace's init), to the clock tick */
    double boot_realtime;      /* the wall clock at boot, and the clock ticks a second: */
    long hz;                   /* a start time as wall-clock time (nsmap_self) */
    /* --all: each process's mount namespace as node_discover read it in the
     * first phase over the scan's pid list (collect/node.h), ascending by
     * pid, so that the walk does not read the same link again; NULL
     * otherwise. */
    struct nsmap_known {
        pid_t pid;
        unsigned long mntns;
    } *known;
    size_t nknown, knowncap;
};

/* devs must outlive the map. nsmap_init(m, NULL, 0) then nsmap_watch: a map
 * that takes namespaces (nsmap_add_read) before the devices are known. */
void nsmap_init(struct nsmap *m, const dev_t *devs, size_t ndevs);
void nsmap_free(struct nsmap *m);

/* The watched devices, known at last: fills sees[] of each namespace added
 * so far from its mountinfo (then freed). */
void nsmap_watch(struct nsmap *m, const dev_t *devs, size_t ndevs);

/* The mount namespace known for pid (m->known), 0 when none is. */
unsigned long nsmap_known_mntns(const struct nsmap *m, pid_t pid);

/* Records pid's mount namespace, read before the walk: pids in ascending
 * order (as walk_list gives them). */
void nsmap_known_add(struct nsmap *m, pid_t pid, unsigned long mntns);

/* Adds mount namespace mntns, whose mountinfo mi was read through one of
 * its processes before the watched devices are known (the node view reads every
 * namespace's to find them); the map takes mi (emptied). Returns the
 * entry's index in m->ns. */
size_t nsmap_add_read(struct nsmap *m, unsigned long mntns, struct mountinfo *mi);

/* The watcher's facts: its pid namespace and NSpid depth, /proc's pid 1
 * (its namespace and start time), read relative to the /proc directory fd.
 * boot_realtime is the wall-clock time of boot (seconds) and hz the clock
 * ticks per second: passed in so tests can give fixed ones. */
void nsmap_self(struct nsmap *m, int procfd, double boot_realtime, long hz);

/* The wall-clock time of boot: CLOCK_REALTIME minus CLOCK_BOOTTIME (the
 * clock /proc's start times count on, since Linux 5.3). */
double nsmap_boot_realtime(void);

/* The wall-clock time of a start time in clock ticks since boot, by the
 * clock nsmap_self read; false when it read none (a scene built by hand). */
bool nsmap_started(const struct nsmap *m, unsigned long long ticks, struct timespec *out);

/* The inode number in a namespace link ("pid:[4026531836]"), 0 if
 * unreadable (errno says why: EINVAL for a link of another shape). The one
 * reader of namespace links. */
unsigned long nsmap_link(int dirfd, const char *path);

/* The entry of mount namespace mntns, reading its mountinfo through piddir
 * (the /proc directory of a member) the first time it is met. NULL for
 * mntns 0, and when the member exited before its mountinfo was read (the
 * next member met reads it). A mountinfo that cannot be read counts as
 * showing every watched device. */
const struct mntns_seen *nsmap_mntns(struct nsmap *m, unsigned long mntns, int piddir);

/* True when the namespace shows any watched device. */
bool nsmap_sees_any(const struct nsmap *m, const struct mntns_seen *s);

/* Fills reach[], once, as nsmap_watch made it (the walk's last step): for
 * each watched device, the pid namespaces of the processes (of pl) whose
 * mount namespace shows it, and of those whose namespace shows it at
 * /dev/shm or /run/shm. propagates and btime are the caller's (scan.c) to
 * fill. */
void nsmap_reach(struct nsmap *m, const struct proc_list *pl);

/* Does mount namespace mntns (met in the walk) show any of watched devices 0..n-1? (One lookup of the namespace
 * for all of them: asked of every process on a node of many mounts.) */
bool nsmap_shows_first(const struct nsmap *m, unsigned long mntns, size_t n);

/* Sets NSMAP_SHOWS in sees[k] for each device devs[k] that mi (a mount
 * namespace's mountinfo) mounts and does not hide, with NSMAP_AT_SHM where
 * such a mount is at /dev/shm or /run/shm (mountinfo_hidden: another mount
 * stacked on it at the same path, as a test's or a container's tmpfs over
 * the host's /dev/shm; shm_open there reaches the top one only). */
void nsmap_sees_of(const struct mountinfo *mi, const dev_t *devs, size_t ndevs,
                   unsigned char *sees);

#endif
