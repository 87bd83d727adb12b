#include "collect/nsmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/xalloc.h"

void nsmap_init(struct nsmap *m, const dev_t *devs, size_t ndevs)
{
    memset(m, 0, sizeof(*m));
    nsmap_watch(m, devs, ndevs);
}

void nsmap_watch(struct nsmap *m, const dev_t *devs, size_t ndevs)
{
    m->devs = devs;
    m->ndevs = ndevs;
    free(m->reach);
    m->reach = xcalloc(ndevs, sizeof(*m->reach));
    for (size_t i = 0; i < m->nns; i++) {
        struct mntns_seen *s = &m->ns[i];
        free(s->sees);
        s->sees = xcalloc(ndevs, 1);
        nsmap_sees_of(&s->mi, devs, ndevs, s->sees);
        mountinfo_free(&s->mi);
    }
}

void nsmap_free(struct nsmap *m)
{
    for (size_t i = 0; i < m->nns; i++) {
        free(m->ns[i].sees);
        mountinfo_free(&m->ns[i].mi);
    }
    free(m->ns);
    for (size_t i = 0; m->reach && i < m->ndevs; i++) {
        free(m->reach[i].pidns);
        free(m->reach[i].shm_pidns);
    }
    free(m->reach);
    free(m->known);
    memset(m, 0, sizeof(*m));
}

void nsmap_known_add(struct nsmap *m, pid_t pid, unsigned long mntns)
{
    struct nsmap_known *k = VEC_PUSH(m->known, m->nknown, m->knowncap);
    k->pid = pid;
    k->mntns = mntns;
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
    unsigned long ino = s ? strtoul(s + 1, NULL, 10) : 0;
    if (!ino)
        errno = EINVAL;
    return ino;
}

double nsmap_boot_realtime(void)
{
    struct timespec real, boot;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    return (double)(real.tv_sec - boot.tv_sec) + (double)(real.tv_nsec - boot.tv_nsec) / 1e9;
}

bool nsmap_started(const struct nsmap *m, unsigned long long ticks, struct timespec *out)
{
    if (m->hz <= 0)
        return false;
    double t = m->boot_realtime + (double)ticks / (double)m->hz;
    out->tv_sec = (time_t)t;
    out->tv_nsec = (long)((t - (double)out->tv_sec) * 1e9);
    return true;
}

void nsmap_self(struct nsmap *m, int procfd, double boot_realtime, long hz)
{
    m->boot_realtime = boot_realtime;
    m->hz = hz;
    struct buf text;
    buf_init(&text);
    m->self_pidns = nsmap_link(procfd, "self/ns/pid");
    if (read_file_at(procfd, "self/status", &text, READ_SMALL_MAX) == 0)
        m->self_depth = status_parse_nspid(text.data, &(pid_t){0});
    /* /proc lists the processes of its own pid namespace, whose init is its
     * pid 1; reading pid 1's link may be refused (not root): with an NSpid
     * of one entry /proc is of the watcher's own namespace anyway. */
    m->view_pidns = nsmap_link(procfd, "1/ns/pid");
    if (!m->view_pidns && m->self_depth == 1)
        m->view_pidns = m->self_pidns;
    m->view_initial = m->view_pidns == NSMAP_INIT_PIDNS;
    struct procstat p;
    if (procstat_read(procfd, 1, &p) == 0)
        m->pid1_ok = nsmap_started(m, p.start_ticks, &m->pid1_start);
    buf_free(&text);
}

void nsmap_sees_of(const struct mountinfo *mi, const dev_t *devs, size_t ndevs, unsigned char *sees)
{
    for (size_t i = 0; i < mi->n; i++) {
        const struct mountinfo_entry *e = &mi->items[i];
        size_t k = 0;
        while (k < ndevs && devs[k] != makedev(e->major, e->minor))
            k++;
        if (k == ndevs || mountinfo_hidden(mi, i))
            continue;
        sees[k] |= NSMAP_SHOWS;
        if (strcmp(e->mountpoint, "/dev/shm") == 0 || strcmp(e->mountpoint, "/run/shm") == 0)
            sees[k] |= NSMAP_AT_SHM;
    }
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

const struct mntns_seen *nsmap_mntns(struct nsmap *m, unsigned long mntns, int piddir)
{
    if (!mntns)
        return NULL;
    struct mntns_seen *s = find(m, mntns);
    if (s)
        return s;
    struct mountinfo mi = {0};
    int rc = m->ndevs ? mountinfo_read(piddir, "mountinfo", &mi) : 0;
    if (rc == -ENOENT || rc == -ESRCH)
        return NULL; /* the member exited meanwhile (mi is empty): the next member met reads it */
    s = VEC_PUSH(m->ns, m->nns, m->nscap);
    s->mntns = mntns;
    s->sees = xcalloc(m->ndevs, 1);
    if (rc < 0) {
        /* Unreadable: the namespace may show any watched mount, and counts
         * as showing them all (a pid then proves less, never more). */
        memset(s->sees, NSMAP_SHOWS | NSMAP_AT_SHM, m->ndevs);
    } else {
        nsmap_sees_of(&mi, m->devs, m->ndevs, s->sees);
    }
    mountinfo_free(&mi);
    return s;
}

size_t nsmap_add_read(struct nsmap *m, unsigned long mntns, struct mountinfo *mi)
{
    struct mntns_seen *s = VEC_PUSH(m->ns, m->nns, m->nscap);
    s->mntns = mntns;
    s->mi = *mi;
    memset(mi, 0, sizeof(*mi));
    return m->nns - 1;
}

bool nsmap_sees_any(const struct nsmap *m, const struct mntns_seen *s)
{
    for (size_t i = 0; s && i < m->ndevs; i++)
        if (s->sees[i])
            return true;
    return false;
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
    *VEC_PUSH(*list, *n, *cap) = ns;
}

void nsmap_reach(struct nsmap *m, const struct proc_list *pl)
{
    for (size_t d = 0; d < m->ndevs; d++) {
        struct mount_reach *r = &m->reach[d];
        size_t cap = 0, shm_cap = 0;
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
            if (last_sees & NSMAP_AT_SHM) {
                add_pidns(&r->shm_pidns, &r->nshm_pidns, &shm_cap, p->pidns);
                if (!r->nshm_procs++ || p->start_ticks < r->shm_first_ticks)
                    r->shm_first_ticks = p->start_ticks;
            }
        }
        if (r->npidns > 1)
            qsort(r->pidns, r->npidns, sizeof(*r->pidns), cmp_ulong);
        if (r->nshm_pidns > 1)
            qsort(r->shm_pidns, r->nshm_pidns, sizeof(*r->shm_pidns), cmp_ulong);
    }
}
