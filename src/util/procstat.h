/* /proc/PID/stat: the one parser of the format, and the readers of a number
 * in a /proc text. It lives in util, below collect, because the root seam
 * (util/sysroot.c) pins a process by its start time; the process table
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

/* The fields of the maps text (collect/mapstext.c) and of mountinfo are
 * read by hand, not by strtoull, which cost a sixth of a snapshot's
 * instructions: the maps text's are read on every line of every process's
 * maps, and inline for the same reason. A field is digits only (no sign,
 * space or "0x", which strtoull would also take), at least one, up to the
 * char stop, which *s is advanced past, and no value past 64 bits; on
 * false, *s and *out are left as they were. */

/* One more than the value of each byte as a hex digit; 0 for a byte that
 * is none. */
extern const unsigned char hex_digit1[256];

/* Passes over the hex digits at s (either case), their value in *v (its
 * low 64 bits when there are more than 16 digits): where they end. */
static inline const char *hex_digits(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned d; (d = hex_digit1[(unsigned char)*s]) != 0; s++)
        x = x << 4 | (d - 1);
    *v = x;
    return s;
}

/* A hex field: at most 16 digits, as the kernel writes them. */
static inline bool hex_field(const char **s, char stop, uint64_t *out)
{
    uint64_t v;
    const char *p = hex_digits(*s, &v);
    if (p == *s || p - *s > 16 || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

/* A decimal field. */
static inline bool dec_field(const char **s, char stop, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    for (; (unsigned)(*p - '0') < 10; p++)
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (unsigned)(*p - '0'), &v))
            return false;
    if (p == *s || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

#endif
