/* What a pid in a segment's name can prove, per mount (doc/shmwatch.1, PID
 * NAMESPACES). A name carries its creator's pid as the creator read it, in
 * its own pid namespace; "held by nobody and that pid is dead" proves an
 * orphan only when the pid is looked up in the one namespace that wrote it,
 * and when no process outside the watcher's view could have written it. */
#ifndef SHMWATCH_PIDTRUST_H
#define SHMWATCH_PIDTRUST_H

#include <stdbool.h>
#include <stddef.h>

#include "collect/scan.h"

enum pid_evidence {
    PIDS_SOUND,    /* one pid namespace reaches the mount, and /proc lists every
                    * process of the machine: a dead pid proves an orphan */
    PIDS_PRIVATE,  /* the watcher is inside a pid namespace, and the mount is shown
                    * private to it (made after its init started, not propagated) */
    PIDS_TRUSTED,  /* inside a pid namespace, not shown private, but the user said
                    * the pids are this namespace's (trust_pids) */
    PIDS_SHARED,   /* several pid namespaces reach the mount: a pid is ambiguous */
    PIDS_UNPROVEN, /* inside a pid namespace, and the mount not shown private:
                    * processes outside may write to it */
};

struct mount_pids {
    enum pid_evidence evidence;
    size_t npidns;              /* pid namespaces seen reaching the mount */
    const unsigned long *pidns; /* those namespaces (the scan's) */
    unsigned long lookup;       /* the namespace in which a pid is read when there is
                                 * one; 0: as /proc shows pids */
    /* Every live process that has the mount at /dev/shm or /run/shm (and
     * every process whose namespaces could not be read) started at
     * first_start or later, and /proc lists every process of the machine:
     * a file of a creator-pid kind last changed before then was made by a
     * process of an earlier run, gone with its pid namespace (a restarted
     * container on a volume that outlived it). */
    bool first_start_ok;
    struct timespec first_start;
};

/* Seconds a file's last change must come before first_start to be of an
 * earlier run: a file's times are whole seconds here, and a start time
 * is read to the clock tick from a wall clock that NTP may have stepped. */
#define PIDTRUST_EARLIER_SLACK_S 2

/* The evidence of mount i of s. trust is the user's word (trust_pids). */
void pidtrust_mount(const struct scan *s, size_t i, bool trust, struct mount_pids *out);

const char *pid_evidence_name(enum pid_evidence e);
/* One line on what the mount's evidence means for orphans; NULL for
 * PIDS_SOUND. Those of PIDS_PRIVATE, PIDS_SHARED and PIDS_UNPROVEN say what
 * the mount is: they read after "pids: " (the text report) and after "the
 * mount is " (clean's line on segments a pid proves nothing of). */
const char *pid_evidence_note(enum pid_evidence e);

/* Looks up the process that a pid of namespace ns means ("as /proc shows"
 * for 0). Indexes are built on first use and kept in the cache. */
struct pid_lookup {
    const struct scan *s;
    struct {
        unsigned long ns;
        struct nspid_index idx;
    } cache[8];
    size_t n;
};
const struct proc *pid_lookup_find(struct pid_lookup *l, unsigned long ns, pid_t pid);
void pid_lookup_free(struct pid_lookup *l);

#endif
