/* /proc/PID/stat: the one parser of the format, and the one reader of a
 * number in a /proc text. It lives in util, below collect, because the root
 * seam (util/sysroot.c) pins a process by its start time; the process table
 * (collect/procs.c) and the re-checks of act read it through here too. */
#ifndef SHMWATCH_PROCSTAT_H
#define SHMWATCH_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct procstat {
    pid_t pid, ppid, pgid, sid;
    char state;                     /* R S D Z T ... */
    char comm[16];                  /* cut to 15 bytes, terminated */
    bool kernel_thread;             /* flags has PF_KTHREAD */
    unsigned long long start_ticks; /* field 22: start time since boot, clock ticks */
    uint64_t start_code;            /* field 26, 0 when absent (old kernels) or a kernel thread */
    uint64_t sigcatch;              /* field 34, 0 when absent or a kernel thread */
};

/* Parses a /proc/PID/stat text: comm may hold spaces and parentheses, so it
 * ends at the last ')'. A kernel thread's line is read up to start_ticks
 * only. Returns false for malformed text (st is then partly written). */
bool procstat_parse(const char *text, struct procstat *st);

/* Reads and parses "PID/stat" below the /proc directory fd procfd. Returns 0,
 * -ESRCH when the process is gone (a zombie counts as gone only to callers
 * that check st->state), -EINVAL when malformed, or another -errno. */
int procstat_read(int procfd, pid_t pid, struct procstat *st);

/* Reads [-]digits at *s (after any spaces and tabs), advancing past them.
 * A number beyond 64 bits, or a negative one below LLONG_MIN, is refused:
 * the kernel writes none, and a wrapped value would pass for a real one.
 * Values above LLONG_MAX (an unsigned field such as RLIM_INFINITY) come back
 * as their two's complement: callers cast them back to unsigned. */
bool procstat_num(const char **s, long long *out);

#endif
