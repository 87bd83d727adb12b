#include "collect/procs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/xalloc.h"

void procs_sort(struct proc_list *pl)
{
    if (pl->n > 1)
        qsort(pl->items, pl->n, sizeof(*pl->items), pid_cmp);
}

const struct proc *procs_find(const struct proc_list *pl, pid_t pid)
{
    return pl->n ? bsearch(&pid, pl->items, pl->n, sizeof(*pl->items), pid_cmp) : NULL;
}

static int cmp_nspid(const void *a, const void *b)
{
    pid_t x = (*(const struct proc *const *)a)->nspid, y = (*(const struct proc *const *)b)->nspid;
    return (x > y) - (x < y);
}

void nspid_index_build(struct nspid_index *t, const struct proc_list *pl, unsigned long pidns)
{
    t->items = xmalloc(pl->n * sizeof(*t->items));
    t->n = 0;
    for (size_t i = 0; i < pl->n; i++)
        if (pidns ? pl->items[i].pidns == pidns : pl->items[i].nspid != pl->items[i].pid)
            t->items[t->n++] = &pl->items[i];
    qsort(t->items, t->n, sizeof(*t->items), cmp_nspid);
}

size_t nspid_index_lower(const struct nspid_index *t, pid_t nspid)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->items[mid]->nspid < nspid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct proc *nspid_index_find(const struct nspid_index *t, pid_t nspid)
{
    size_t k = nspid_index_lower(t, nspid);
    return k < t->n && t->items[k]->nspid == nspid ? t->items[k] : NULL;
}

void nspid_index_free(struct nspid_index *t)
{
    free(t->items);
    memset(t, 0, sizeof(*t));
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

int status_parse_nspid(const char *status, pid_t *nspid)
{
    const char *s = strncmp(status, "NSpid:", 6) == 0 ? status : strstr(status, "\nNSpid:");
    if (!s)
        return 0;
    s += *s == '\n' ? 7 : 6;
    int n = 0;
    long last = -1;
    for (;; n++) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s < '0' || *s > '9')
            break;
        int v;
        s = pid_digits(s, &v);
        last = v;
    }
    if (n && last > 0)
        *nspid = (pid_t)last;
    return n;
}

bool procs_status_uids(const char *status, uid_t *ruid, uid_t *euid)
{
    const char *s = strncmp(status, "Uid:", 4) == 0 ? status : strstr(status, "\nUid:");
    if (!s)
        return false;
    s += *s == '\n' ? 5 : 4;
    long long r, e;
    if (!procstat_num(&s, &r) || !procstat_num(&s, &e))
        return false;
    *ruid = (uid_t)r;
    *euid = (uid_t)e;
    return true;
}

/* Takes the hexadecimal signal mask at s as /proc/PID/status shows it
 * (SigCgt), after any spaces, into *mask: 1 to 16 digits, ended by
 * anything else; *mask is left alone otherwise. */
static void parse_sigmask(const char *s, uint64_t *mask)
{
    while (*s == ' ' || *s == '\t')
        s++;
    uint64_t v;
    const char *end = hex_digits(s, &v);
    if (end > s && end - s <= 16)
        *mask = v;
}

bool procs_parse_stat(const char *text, struct proc *p)
{
    struct procstat st;
    if (!procstat_parse(text, &st))
        return false;
    p->pid = st.pid;
    p->nspid = st.pid;
    p->ppid = st.ppid;
    p->pgid = st.pgid;
    p->sid = st.sid;
    p->state = st.state;
    _Static_assert(sizeof(p->comm) == sizeof(st.comm), "comm sizes differ");
    memcpy(p->comm, st.comm, sizeof(p->comm));
    p->kernel_thread = st.kernel_thread;
    p->start_ticks = st.start_ticks;
    p->start_code = st.start_code;
    p->sigcatch = st.sigcatch;
    return true;
}

/* The number after "Key:" when line starts with it. */
static bool status_num(const char *line, const char *key, size_t k, long long *v)
{
    if (strncmp(line, key, k) != 0)
        return false;
    const char *s = line + k;
    return procstat_num(&s, v);
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
                uid_t ruid;
                procs_status_uids(line, &ruid, &p->uid);
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
    if (procstat_num(&s, &size) && procstat_num(&s, &resident) && procstat_num(&s, &shared) &&
        resident >= shared && shared >= 0)
        p->rss_anon = (uint64_t)(resident - shared) * page_size;
}

int procs_read_shmem(int proc_dirfd, pid_t pid, unsigned long long start_ticks,
                     uint64_t *bytes)
{
    char name[32];
    struct buf text;
    struct procstat now;
    buf_init(&text);
    int rc = procstat_read(proc_dirfd, pid, &now);
    if (rc == -EINVAL || (rc == 0 && now.start_ticks != start_ticks))
        rc = -ESRCH;
    if (rc == 0)
        rc = read_file_at(proc_dirfd, pid_file_name(name, pid, "status"), &text, READ_SMALL_MAX);
    long long v = -1;
    const char *line = rc == 0 ? strstr(text.data, "\nRssShmem:") : NULL;
    if (line)
        status_num(line + 1, "RssShmem:", 9, &v);
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
    if (!len) /* as ps shows it */
        return str_printf("[%s]%s", comm, zombie ? " <defunct>" : "");
    char *s = xstrndup(text, len);
    for (size_t i = 0; i < len; i++)
        if (!s[i])
            s[i] = ' ';
    return s;
}
