/* Who a process is right now, read from /proc/PID/stat and status: the
 * identity (pid plus start time) that every signal is checked against, so
 * that a pid taken over by a new process is never signalled. */
#ifndef SHMWATCH_PROCID_H
#define SHMWATCH_PROCID_H

#include <stdbool.h>
#include <sys/types.h>

struct procid {
    pid_t pid, ppid;
    char state;                     /* R S D Z T ... */
    char comm[16];
    unsigned long long start_ticks; /* field 22 of stat: start time since boot, clock ticks */
    uid_t ruid, euid;
    pid_t nspid; /* its pid in its own pid namespace (NSpid's last): 1 for
                  * the init of one; 0 when status does not say */
};

/* Reads pid's stat and the Uid and NSpid lines of its status under the directory fd
 * proc_dirfd. Returns 0, or -errno (-ESRCH when the process is gone). */
int procid_read(int proc_dirfd, pid_t pid, struct procid *out);

/* True when now is the process recorded as (pid, start_ticks). */
bool procid_same(pid_t pid, unsigned long long start_ticks, const struct procid *now);

/* May the caller (an effective uid) signal p? Root may signal anyone; others
 * only processes that are theirs by both real and effective uid (so not a
 * set-user-ID program they started). */
bool procid_may_signal(uid_t caller, const struct procid *p);

#endif
