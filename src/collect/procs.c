#include "collect/procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

#define PF_KTHREAD 0x00200000u

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
    return (x > y) - (x < y);
}

void procs_sort(struct proc_list *pl)
{
    if (pl->n > 1)
        qsort(pl->items, pl->n, sizeof(*pl->items), cmp_pid);
}

const struct proc *procs_find(const struct proc_list *pl, pid_t pid)
{
    struct proc key = {.pid = pid};
    if (!pl->n)
        return NULL;
    return bsearch(&key, pl->items, pl->n, sizeof(*pl->items), cmp_pid);
}

static int cmp_nspid(const void *a, const void *b)
{
    pid_t x = (*(const struct proc *const *)a)->nspid, y = (*(const struct proc *const *)b)->nspid;
    return (x > y) - (x < y);
}

void nspid_index_build(struct nspid_index *t, const struct proc_list *pl, unsigned long pidns)
{
    t->items = xmalloc((pl->n ? pl->n : 1) * sizeof(*t->items));
    t->n = 0;
    for (size_t i = 0; pidns && i < pl->n; i++)
        if (pl->items[i].pidns == pidns)
            t->items[t->n++] = &pl->items[i];
    qsort(t->items, t->n, sizeof(*t->items), cmp_nspid);
}

const struct proc *nspid_index_find(const struct nspid_index *t, pid_t nspid)
{
    struct proc key = {.nspid = nspid};
    const struct proc *kp = &key, *const *hit =
        t->n ? bsearch(&kp, t->items, t->n, sizeof(*t->items), cmp_nspid) : NULL;
    return hit ? *hit : NULL;
}

void nspid_index_free(struct nspid_index *t)
{
    free(t->items);
    t->items = NULL;
    t->n = 0;
}

void procs_free(struct proc_list *pl)
{
    for (size_t i = 0; i < pl->n; i++) {
        free(pl->items[i].cmdline);
        free(pl->items[i].exe);
    }
    free(pl->items);
    memset(pl, 0, sizeof(*pl));
}

bool status_parse_nspid(const char *status, pid_t *nspid)
{
    const char *p = status;
    while (p && *p) {
        if (strncmp(p, "NSpid:", 6) == 0) {
            const char *s = p + 6;
            long last = -1;
            for (;;) {
                while (*s == ' ' || *s == '\t')
                    s++;
                if (*s < '0' || *s > '9')
                    break;
                long v = 0;
                while (*s >= '0' && *s <= '9' && v < 100000000)
                    v = v * 10 + (*s++ - '0');
                last = v;
            }
            if (last <= 0)
                return false;
            *nspid = (pid_t)last;
            return true;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return false;
}

/* Parses the hexadecimal signal mask at *s as /proc/PID/status shows it
 * (SigCgt), after any spaces: 1 to 16 digits, ended by anything else. */
static bool parse_sigmask(const char *s, uint64_t *mask)
{
    while (*s == ' ' || *s == '\t')
        s++;
    uint64_t v = 0;
    int digits = 0;
    for (;; s++, digits++) {
        unsigned c = (unsigned char)*s, d;
        if (c - '0' < 10)
            d = c - '0';
        else if ((c | 0x20) - 'a' < 6)
            d = (c | 0x20) - 'a' + 10;
        else
            break;
        if (digits >= 16)
            return false;
        v = v << 4 | d;
    }
    if (!digits)
        return false;
    *mask = v;
    return true;
}

/* Reads [-]digits at *s (after any spaces), advancing past them. A number
 * beyond 64 bits, or a negative one below LLONG_MIN, is refused: the kernel
 * writes none, and a wrapped value would pass for a real one. Values above
 * LLONG_MAX (an unsigned field such as RLIM_INFINITY) come back as their
 * two's complement: callers cast them back to unsigned. */
static bool read_num(const char **s, long long *out)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return false;
    /* Nineteen digits cannot overflow 64 bits: only a longer number is
     * checked digit by digit. */
    unsigned long long v = 0;
    const char *digits = p;
    while ((unsigned)(*p - '0') < 10 && p - digits < 19)
        v = v * 10 + (unsigned)(*p++ - '0');
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
 * read_num would read them, without their value. Returns how many it
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

bool procs_parse_stat(const char *text, struct proc *p)
{
    /* pid (comm) state ppid(4) pgrp(5) session(6) tty tpgid flags(9) ...
     * starttime(22) ... startcode(26) ... sigcatch(34): comm may hold spaces
     * and parentheses, so it ends at the last ')'. The fields between are
     * read by no one: only their shape is checked, a run at a time. */
    const char *s = text, *open = strchr(text, '('), *close = strrchr(text, ')');
    long long v;
    if (!open || !close || close < open || close[1] != ' ' || !read_num(&s, &v) || v <= 0)
        return false;
    p->pid = (pid_t)v;
    p->nspid = p->pid;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof(p->comm))
        n = sizeof(p->comm) - 1;
    memcpy(p->comm, open + 1, n);
    p->comm[n] = '\0';
    s = close + 2;
    p->state = *s ? *s++ : '?';
    if (!read_num(&s, &v))
        return false;
    p->ppid = (pid_t)v;
    if (!read_num(&s, &v))
        return false;
    p->pgid = (pid_t)v;
    if (!read_num(&s, &v))
        return false;
    p->sid = (pid_t)v;
    if (skip_nums(&s, 2) < 2 || !read_num(&s, &v)) /* tty_nr, tpgid; flags */
        return false;
    p->kernel_thread = ((unsigned long long)v & PF_KTHREAD) != 0;
    if (skip_nums(&s, 12) < 12 || !read_num(&s, &v)) /* minflt ... itrealvalue; starttime */
        return false;
    p->start_ticks = (unsigned long long)v;
    if (p->kernel_thread) { /* its signals are no one's concern: it runs no torch */
        p->sigcatch = 0;
        return true;
    }
    /* vsize rss rsslim; startcode; endcode ... blocked; sigcatch: optional,
     * very old kernels lack it */
    if (skip_nums(&s, 3) == 3 && read_num(&s, &v)) {
        p->start_code = (uint64_t)v;
        if (skip_nums(&s, 7) == 7 && read_num(&s, &v))
            p->sigcatch = (uint64_t)v;
    }
    return true;
}

/* The number after "Key:" when line starts with it. */
static bool status_num(const char *line, const char *key, size_t k, long long *v)
{
    if (strncmp(line, key, k) != 0)
        return false;
    const char *s = line + k;
    return read_num(&s, v);
}

/* Only the lines of the few keys wanted are looked at: a status text has
 * some sixty lines, and it is read for every process the report lists. A
 * line is taken by its first letter, then by its key. */
void procs_parse_status(const char *text, struct proc *p)
{
    for (const char *line = text; *line;) {
        long long v;
        switch (line[0]) {
        case 'U':
            if (strncmp(line, "Uid:", 4) == 0) {
                const char *s = line + 4;
                if (read_num(&s, &v) && read_num(&s, &v)) /* real, then effective */
                    p->uid = (uid_t)v;
            }
            break;
        case 'R':
            if (status_num(line, "RssAnon:", 8, &v))
                p->rss_anon = (uint64_t)v * 1024u;
            break;
        case 'N':
            if (strncmp(line, "NSpid:", 6) == 0)
                status_parse_nspid(line, &p->nspid);
            break;
        case 'S':
            if (strncmp(line, "SigCgt:", 7) == 0)
                parse_sigmask(line + 7, &p->sigcatch);
            break;
        default:
            break;
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
}

void procs_parse_statm(const char *text, struct proc *p, uint64_t page_size)
{
    long long size, resident, shared;
    const char *s = text;
    if (read_num(&s, &size) && read_num(&s, &resident) && read_num(&s, &shared) &&
        resident >= shared && shared >= 0)
        p->rss_anon = (uint64_t)(resident - shared) * page_size;
}

int procs_read_shmem(int proc_dirfd, pid_t pid, unsigned long long start_ticks,
                     uint64_t *bytes)
{
    char name[32];
    struct buf text;
    struct proc now;
    buf_init(&text);
    snprintf(name, sizeof(name), "%d/stat", (int)pid);
    int rc = read_file_at(proc_dirfd, name, &text, READ_LINE_MAX);
    if (rc == 0 && (!procs_parse_stat(text.data, &now) || now.start_ticks != start_ticks))
        rc = -ESRCH;
    snprintf(name, sizeof(name), "%d/status", (int)pid);
    if (rc == 0)
        rc = read_file_at(proc_dirfd, name, &text, READ_SMALL_MAX);
    long long v = -1;
    for (const char *line = rc == 0 ? text.data : ""; *line;) {
        if (line[0] == 'R' && status_num(line, "RssShmem:", 9, &v))
            break;
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : "";
    }
    buf_free(&text);
    if (rc == -ENOENT)
        return -ESRCH;
    if (rc < 0)
        return rc;
    if (v < 0)
        return -ENODATA;
    *bytes = (uint64_t)v * 1024u;
    return 0;
}

char *procs_join_cmdline(const char *text, size_t len, const char *comm, bool zombie)
{
    while (len && text[len - 1] == '\0')
        len--;
    if (!len) { /* as ps shows it */
        static const char defunct[] = " <defunct>";
        size_t n = strlen(comm), k = zombie ? sizeof(defunct) - 1 : 0;
        char *s = xmalloc(n + k + 3);
        s[0] = '[';
        memcpy(s + 1, comm, n);
        s[n + 1] = ']';
        memcpy(s + n + 2, defunct, k);
        s[n + k + 2] = '\0';
        return s;
    }
    char *s = xstrndup(text, len);
    for (size_t i = 0; i < len; i++)
        if (!s[i])
            s[i] = ' ';
    return s;
}

static int cmp_listed_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

size_t proc_list_pids(int proc_dirfd, pid_t **pids, size_t *cap)
{
    size_t n = 0;
    /* An open file description of its own (a dup would share the offset
     * with proc_dirfd, which another thread may be reading). */
    int fd = openat(proc_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *s = de->d_name;
        if (*s < '1' || *s > '9')
            continue;
        long v = 0;
        for (; *s >= '0' && *s <= '9' && v < 100000000; s++)
            v = v * 10 + (*s - '0');
        if (*s)
            continue;
        xgrow((void **)pids, cap, n + 1, sizeof(**pids));
        (*pids)[n++] = (pid_t)v;
    }
    closedir(d);
    if (n > 1)
        qsort(*pids, n, sizeof(**pids), cmp_listed_pid);
    return n;
}
