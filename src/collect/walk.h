/* One pass over /proc that reads the process table and the holders
 * together: each process's directory is opened once, its stat read (the
 * cheap facts every process needs), kernel threads skipped, its fds and
 * mappings read (pidscan), its mount and pid namespace links read (and, once
 * per distinct mount namespace, its mountinfo: nsmap.h), and the costly
 * facts (the owner of /proc/PID, statm, cmdline, exe; status only for
 * NSpid) read only for the processes the model can show: those that hold or
 * created a segment, zombies, processes named or fingerprinted like
 * DataLoader workers and shm managers, the watched process, and their
 * parents. Every other process keeps cmdline and exe NULL, uid and rss 0.
 * It reads the proc of the root seam (util/sysroot.h), so tests hand it
 * other trees.
 *
 * This file is where collect's readers of one process meet (the process
 * table's texts, procs.h; its fds and maps, procfiles.h, made into holder
 * records by pidscan.h; its namespaces, nsmap.h): the scan's pass over
 * proc, and the check before an unlink (holders_find_inodes), which reads
 * every process with the same readers. */
#ifndef SHMWATCH_WALK_H
#define SHMWATCH_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/holders.h"
#include "collect/nsmap.h"
#include "collect/procs.h"
#include "collect/beacon.h"
#include "util/sysroot.h"
#include "util/warn.h"

struct walk_opts {
    const struct sysroot *sys;     /* its proc is walked */
    const dev_t *devs;             /* the watched devices; holders read only when ndevs > 0 */
    size_t ndevs;
    const struct file_list *files; /* the listing: its inodes need no stat or name, its names
                                    * carry creator pids; may be NULL */
    pid_t world_pid;               /* whose mount namespace is watched (--pid target or self) */
    struct nsmap *ns;              /* out: the namespaces met (nsmap_init'ed on devs); may
                                    * be NULL */
    struct scan_beacon *beacon;    /* where the walk is (beacon.h), or NULL */
    const pid_t *pids;             /* the processes to read, ascending: the scan's one
                                    * listing of proc (walk_list); NULL: walk_run
                                    * lists sys->proc itself */
    size_t npids;
};

/* The pids of the proc directory fd proc, ascending, into *pids (to free):
 * the one listing of proc a scan makes (scan.c hands it to the node view's
 * first phase and to the walk). 0, or -errno when proc cannot be listed. */
int walk_list(int proc, pid_t **pids, size_t *npids);

/* Appends every process to pl (sorted by pid) and every holder to hl.
 * Returns 0, or -errno when sys->proc cannot be listed (o->pids NULL). */
int walk_run(const struct walk_opts *o, struct proc_list *pl, struct holder_list *hl,
             struct warnings *w);

/* ---- The check before an unlink: the same readers over every process ---- */

/* One inode asked about by holders_find_inodes, and the first holder found. */
struct inode_query {
    dev_t dev;
    ino_t ino;
    pid_t pid;       /* out: a process that holds it, 0 for none */
    int fd;          /* out: its fd, or -1 when it only maps the inode */
};

/* What a holder search could not see: processes whose fds or maps could
 * not be read. Those whose mount namespace shows none of the searched
 * devices (their mountinfo lists no such mount) cannot open the files by
 * name and are only counted; the owners of the others are kept. */
struct holder_blind {
    size_t denied;      /* processes not fully read */
    size_t unreachable; /* of those, ones whose mounts do not include the devices */
    uid_t uids[8];      /* owners (as /proc/PID shows) of the others, distinct */
    size_t nuids;
    bool more_uids;     /* more owners than fit in uids */
};

/* The check right before an unlink: one pass over sys->proc that looks for
 * exactly these inodes in every process's fds and maps (skip_pid, the
 * caller, excepted), stopping early once each is found held. It reads them
 * as the scan does (procfiles.h), but every process whose fd list,
 * an fd's target or maps could not be read is blind: a holder it hides
 * would be missed. Returns 0, or -errno when sys->proc cannot be listed. */
int holders_find_inodes(const struct sysroot *sys, struct inode_query *q, size_t n,
                        pid_t skip_pid, struct holder_blind *blind);

#endif
