#include "collect/nsmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* A host with tens of thousands of mounts stays below this (as mounts.c). */

void nsmap_init(struct nsmap *m, const dev_t *devs, size_t ndevs)
{
    memset(m, 0, sizeof(*m));
    m->devs = devs;
    m->ndevs = ndevs;
    m->reach = xcalloc(ndevs ? ndevs : 1, sizeof(*m->reach));
}

void nsmap_free(struct nsmap *m)
{
    for (size_t i = 0; i < m->nns; i++)
        free(m->ns[i].sees);
    free(m->ns);
    for (size_t i = 0; m->reach && i < m->ndevs; i++) {
        free(m->reach[i].pidns);
        free(m->reach[i].shm_pidns);
    }
    free(m->reach);
    free(m->known);
    memset(m, 0, sizeof(*m));
}

unsigned long nsmap_known_mntns(const struct nsmap *m, pid_t pid)
{
    size_t lo = 0, hi = m->nknown;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->known[mid].pid == pid)
            return m->known[mid].mntns;
        if (m->known[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

unsigned long nsmap_link(int dirfd, const char *path)
{
    char b[64];
    ssize_t n = readlinkat(dirfd, path, b, sizeof(b) - 1);
    if (n <= 0)
        return 0;
    b[n] = '\0';
    const char *s = strchr(b, '[');
    return s ? strtoul(s + 1, NULL, 10) : 0;
}

int nsmap_nspid_depth(const char *status)
{
    const char *s = strstr(status, "\nNSpid:");
    if (!s)
        s = strncmp(status, "NSpid:", 6) == 0 ? status - 1 : NULL;
    if (!s)
        return 0;
    int n = 0;
    for (s += 7; *s && *s != '\n';) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s < '0' || *s > '9')
            break;
        n++;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return n;
}

double nsmap_boot_realtime(void)
{
    struct timespec real, boot;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    return (double)(real.tv_sec - boot.tv_sec) + (double)(real.tv_nsec - boot.tv_nsec) / 1e9;
}

void nsmap_self(struct nsmap *m, int procfd, double boot_realtime, long hz)
{
    struct buf text;
    buf_init(&text);
    m->self_pidns = nsmap_link(procfd, "self/ns/pid");
    if (read_file_at(procfd, "self/status", &text, READ_SMALL_MAX) == 0)
        m->self_depth = nsmap_nspid_depth(text.data);
    /* /proc lists the processes of its own pid namespace, whose init is its
     * pid 1; reading pid 1's link may be refused (not root): with an NSpid
     * of one entry /proc is of the watcher's own namespace anyway. */
    m->view_pidns = nsmap_link(procfd, "1/ns/pid");
    if (!m->view_pidns && m->self_depth == 1)
        m->view_pidns = m->self_pidns;
    m->view_initial = m->view_pidns == NSMAP_INIT_PIDNS;
    struct proc p;
    memset(&p, 0, sizeof(p));
    if (hz > 0 && read_file_at(procfd, "1/stat", &text, READ_LINE_MAX) == 0 &&
        procs_parse_stat(text.data, &p)) {
        double t = boot_realtime + (double)p.start_ticks / (double)hz;
        m->pid1_start.tv_sec = (time_t)t;
        m->pid1_start.tv_nsec = (long)((t - (double)m->pid1_start.tv_sec) * 1e9);
        m->pid1_ok = true;
    }
    buf_free(&text);
}

static long dev_index(const dev_t *devs, size_t n, dev_t d)
{
    for (size_t i = 0; i < n; i++)
        if (devs[i] == d)
            return (long)i;
    return -1;
}

/* One mountinfo line's first five fields: "36 35 98:0 /root /mnt ...". */
struct mi_line {
    unsigned long id, parent;
    unsigned long maj, min;
    const char *mp; /* the mount point, as escaped in the text */
    size_t mplen;
};

/* A decimal number at *s, before end and followed by stop; moves *s past
 * the stop. */
static bool mi_num(const char **s, const char *end, char stop, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    for (; p < end && *p >= '0' && *p <= '9' && v < 100000000000ul; p++)
        v = v * 10 + (unsigned long)(*p - '0');
    if (p == *s || p >= end || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

static bool mi_fields(const char *s, const char *end, struct mi_line *l)
{
    if (!mi_num(&s, end, ' ', &l->id) || !mi_num(&s, end, ' ', &l->parent) ||
        !mi_num(&s, end, ':', &l->maj) || !mi_num(&s, end, ' ', &l->min))
        return false;
    const char *sp = memchr(s, ' ', (size_t)(end - s)); /* past the root */
    if (!sp)
        return false;
    l->mp = sp + 1;
    sp = memchr(l->mp, ' ', (size_t)(end - l->mp));
    l->mplen = sp ? (size_t)(sp - l->mp) : (size_t)(end - l->mp);
    return true;
}

/* The fields of the next line of text, from *p, that has them (moving *p
 * past it); false at end. */
static bool mi_next(const char **p, const char *end, struct mi_line *l)
{
    while (*p < end) {
        const char *nl = memchr(*p, '\n', (size_t)(end - *p));
        if (!nl)
            nl = end;
        bool ok = mi_fields(*p, nl, l);
        *p = nl + 1;
        if (ok)
            return true;
    }
    return false;
}

static bool mi_at_shm(const struct mi_line *l)
{
    return l->mplen == 8 &&
           (memcmp(l->mp, "/dev/shm", 8) == 0 || memcmp(l->mp, "/run/shm", 8) == 0);
}

/* The watched mounts of a mountinfo text that are not hidden under another
 * mount on the same mount point (a tmpfs mounted over /dev/shm hides the one
 * below from every path: shm_open cannot reach it). */
void nsmap_parse_mountinfo(char *text, const dev_t *devs, size_t ndevs, unsigned char *sees)
{
    struct cand {
        struct mi_line l;
        long dev;
        bool hidden;
    } *c = NULL;
    size_t nc = 0, cap = 0;
    const char *end = text + strlen(text);
    struct mi_line l;
    for (const char *p = text; mi_next(&p, end, &l);) {
        long i = dev_index(devs, ndevs, makedev(l.maj, l.min));
        if (i >= 0) {
            struct cand *k = VEC_PUSH(c, nc, cap);
            k->l = l;
            k->dev = i;
        }
    }
    for (const char *p = text; nc && mi_next(&p, end, &l);) {
        for (size_t k = 0; k < nc; k++)
            if (l.parent == c[k].l.id && l.mplen == c[k].l.mplen &&
                memcmp(l.mp, c[k].l.mp, l.mplen) == 0)
                c[k].hidden = true;
    }
    for (size_t k = 0; k < nc; k++)
        if (!c[k].hidden)
            sees[c[k].dev] |= NSMAP_SHOWS | (mi_at_shm(&c[k].l) ? NSMAP_AT_SHM : 0);
    free(c);
}

static struct mntns_seen *find(const struct nsmap *m, unsigned long mntns)
{
    /* Few namespaces, and a process's neighbours (its own container, the
     * host's processes) share its own: the first ones met and the last are
     * tried first. */
    if (m->nns && m->ns[0].mntns == mntns)
        return &m->ns[0];
    for (size_t i = m->nns; i-- > 1;)
        if (m->ns[i].mntns == mntns)
            return &m->ns[i];
    return NULL;
}

const struct mntns_seen *nsmap_mntns(struct nsmap *m, unsigned long mntns, int piddir, pid_t pid)
{
    if (!mntns)
        return NULL;
    struct mntns_seen *s = find(m, mntns);
    if (s)
        return s;
    s = VEC_PUSH(m->ns, m->nns, m->nscap);
    s->mntns = mntns;
    s->member = pid;
    s->sees = xcalloc(m->ndevs ? m->ndevs : 1, 1);
    struct buf text;
    buf_init(&text);
    int rc = m->ndevs ? read_file_at(piddir, "mountinfo", &text, READ_TEXT_MAX) : 0;
    if (rc == -ENOENT || rc == -ESRCH) {
        /* The member exited meanwhile: the next member met reads it. */
        free(s->sees);
        m->nns--;
        buf_free(&text);
        return NULL;
    }
    if (rc < 0) {
        /* Unreadable: the namespace may show any watched mount, and counts
         * as showing them all (a pid then proves less, never more). */
        s->err = -rc;
        m->unread++;
        memset(s->sees, NSMAP_SHOWS | NSMAP_AT_SHM, m->ndevs);
    } else if (m->ndevs) {
        nsmap_parse_mountinfo(text.data, m->devs, m->ndevs, s->sees);
    }
    buf_free(&text);
    return s;
}

bool nsmap_sees_any(const struct nsmap *m, const struct mntns_seen *s)
{
    for (size_t i = 0; s && i < m->ndevs; i++)
        if (s->sees[i])
            return true;
    return false;
}

bool nsmap_shows(const struct nsmap *m, unsigned long mntns, size_t dev_index)
{
    const struct mntns_seen *s = mntns ? find(m, mntns) : NULL;
    return s && dev_index < m->ndevs && s->sees[dev_index];
}

bool nsmap_shows_first(const struct nsmap *m, unsigned long mntns, size_t n)
{
    const struct mntns_seen *s = mntns ? find(m, mntns) : NULL;
    for (size_t i = 0; s && i < n && i < m->ndevs; i++)
        if (s->sees[i])
            return true;
    return false;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return (x > y) - (x < y);
}

/* Adds ns to the list when it is not there yet. */
static void add_pidns(unsigned long **list, size_t *n, size_t *cap, unsigned long ns)
{
    for (size_t k = 0; k < *n; k++)
        if ((*list)[k] == ns)
            return;
    *(unsigned long *)VEC_PUSH(*list, *n, *cap) = ns;
}

void nsmap_reach(struct nsmap *m, const struct proc_list *pl)
{
    for (size_t d = 0; d < m->ndevs; d++) {
        struct mount_reach *r = &m->reach[d];
        size_t cap = 0, shm_cap = 0;
        free(r->pidns);
        free(r->shm_pidns);
        r->pidns = r->shm_pidns = NULL;
        r->npidns = r->nshm_pidns = 0;
        unsigned long last_mnt = 0;
        unsigned char last_sees = 0;
        for (size_t i = 0; i < pl->n; i++) {
            const struct proc *p = &pl->items[i];
            if (p->kernel_thread || !p->pidns || !p->mntns)
                continue;
            if (p->mntns != last_mnt) {
                const struct mntns_seen *s = find(m, p->mntns);
                last_mnt = p->mntns;
                last_sees = s ? s->sees[d] : 0;
            }
            if (last_sees)
                add_pidns(&r->pidns, &r->npidns, &cap, p->pidns);
            if (last_sees & NSMAP_AT_SHM)
                add_pidns(&r->shm_pidns, &r->nshm_pidns, &shm_cap, p->pidns);
        }
        if (r->npidns > 1)
            qsort(r->pidns, r->npidns, sizeof(*r->pidns), cmp_ulong);
        if (r->nshm_pidns > 1)
            qsort(r->shm_pidns, r->nshm_pidns, sizeof(*r->shm_pidns), cmp_ulong);
    }
}
