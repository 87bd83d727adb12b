/* The one parser of /proc/PID/stat (procstat.h). */
#include "util/procstat.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "util/buf.h"
#include "util/fileio.h"

#define PF_KTHREAD 0x00200000u

const unsigned char hex_digit1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

bool procstat_num(const char **s, long long *out)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return false;
    unsigned long long v = 0;
    while ((unsigned)(*p - '0') < 10) {
        unsigned d = (unsigned)(*p++ - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg && v > (unsigned long long)LLONG_MAX + 1)
        return false;
    /* -v without overflow: LLONG_MIN is -(LLONG_MAX) - 1. */
    *out = neg ? (v ? -(long long)(v - 1) - 1 : 0) : (long long)v;
    *s = p;
    return true;
}

/* Passes over k numbers at *s, each [-]digits after any spaces, as
 * procstat_num would read them, without their value. Returns how many it
 * passed: k unless a field is not a number. */
static int skip_nums(const char **s, int k)
{
    const char *p = *s;
    int done = 0;
    for (; done < k; done++) {
        while (*p == ' ' || *p == '\t')
            p++;
        p += *p == '-';
        if ((unsigned)(*p - '0') >= 10)
            break;
        do
            p++;
        while ((unsigned)(*p - '0') < 10);
    }
    *s = p;
    return done;
}

bool procstat_parse(const char *text, struct procstat *p)
{
    /* pid (comm) state ppid(4) pgrp(5) session(6) tty tpgid flags(9) ...
     * starttime(22) ... startcode(26) ... sigcatch(34): comm may hold spaces
     * and parentheses, so it ends at the last ')'. The fields between are
     * read by no one: only their shape is checked, a run at a time. */
    const char *s = text, *open = strchr(text, '('), *close = strrchr(text, ')');
    long long v;
    if (!open || !close || close < open || close[1] != ' ' || !procstat_num(&s, &v) || v <= 0)
        return false;
    p->pid = (pid_t)v;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof(p->comm))
        n = sizeof(p->comm) - 1;
    memcpy(p->comm, open + 1, n);
    memset(p->comm + n, 0, sizeof(p->comm) - n);
    s = close + 2;
    p->state = *s ? *s++ : '?';
    pid_t *ids[] = {&p->ppid, &p->pgid, &p->sid};
    for (int i = 0; i < 3; i++) {
        if (!procstat_num(&s, &v))
            return false;
        *ids[i] = (pid_t)v;
    }
    if (skip_nums(&s, 2) < 2 || !procstat_num(&s, &v)) /* tty_nr, tpgid; flags */
        return false;
    p->kernel_thread = ((unsigned long long)v & PF_KTHREAD) != 0;
    if (skip_nums(&s, 12) < 12 || !procstat_num(&s, &v)) /* minflt ... itrealvalue; starttime */
        return false;
    p->start_ticks = (unsigned long long)v;
    p->start_code = p->sigcatch = 0;
    if (p->kernel_thread) /* its signals are no one's concern: it runs no torch */
        return true;
    /* vsize rss rsslim; startcode; endcode ... blocked; sigcatch: optional,
     * very old kernels lack it */
    if (skip_nums(&s, 3) == 3 && procstat_num(&s, &v)) {
        p->start_code = (uint64_t)v;
        if (skip_nums(&s, 7) == 7 && procstat_num(&s, &v))
            p->sigcatch = (uint64_t)v;
    }
    return true;
}

int procstat_read(int procfd, pid_t pid, struct procstat *st)
{
    char name[32];
    struct buf text;
    buf_init(&text);
    int rc = read_file_at(procfd, pid_file_name(name, pid, "stat"), &text, READ_LINE_MAX);
    if (rc == 0 && !procstat_parse(text.data, st))
        rc = -EINVAL;
    buf_free(&text);
    return rc == -ENOENT ? -ESRCH : rc;
}
