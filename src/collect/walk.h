/* One pass over /proc that reads the process table and the holders
 * together: each process's directory is opened once, its stat read (the
 * cheap facts every process needs), kernel threads skipped, its fds and
 * mappings read (pidscan), its mount and pid namespace links read (and, once
 * per distinct mount namespace, its mountinfo: nsmap.h), and the costly
 * facts (status, cmdline, exe) read only for the processes the model can show: those that
 * hold or created a segment, zombies, processes named or fingerprinted like
 * DataLoader workers and shm managers, the watched process, and their
 * parents. Every other process keeps cmdline and exe NULL, uid and rss 0.
 * It reads the proc of the root seam (util/sysroot.h), so tests hand it
 * other trees. */
#ifndef SHMWATCH_WALK_H
#define SHMWATCH_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/holders.h"
#include "collect/nsmap.h"
#include "collect/procs.h"
#include "collect/scanjob.h"
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
    struct scan_beacon *beacon;    /* where the walk is (scanjob.h), or NULL */
};

/* Appends every process to pl (sorted by pid) and every holder to hl.
 * Returns 0, or -errno when sys->proc cannot be listed. */
int walk_run(const struct walk_opts *o, struct proc_list *pl, struct holder_list *hl,
             struct warnings *w);

#endif
