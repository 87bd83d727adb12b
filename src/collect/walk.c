#include "collect/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/mounts.h"
#include "collect/nsmap.h"
#include "collect/pidscan.h"
#include "collect/procfiles.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/inomap.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

/* Per process, indexed like the list. */
enum {
    F_WANT = 1,  /* the model may show it: read its costly facts, and its parent's */
    F_UP = 4,    /* its parent is taken as a worker's: the grandparent is wanted too */
    F_DONE = 8,  /* costly facts read */
    F_STATUS = 16, /* status already read (for NSpid) */
};

struct walk {
    const struct walk_opts *o;
    int proc;
    struct proc_list *pl;
    struct holder_list *hl;
    struct warnings *w;
    struct nsmap *ns;
    struct pidscan *ps;
    unsigned char *flags;
    size_t nflags, flags_cap;
    struct buf text;
    char link[4096];
    uint64_t page_size;
};

/* The effective uid and RssAnon (from the /proc/PID directory's owner and
 * statm, unless status was read already for NSpid), cmdline and exe (from
 * the maps text just read, where it was read: pidscan_exe). Called once per
 * process (F_DONE): cmdline and exe are still NULL. */
static void details(struct walk *wk, int piddir, struct proc *p, unsigned char f)
{
    scan_beacon_at(wk->o->beacon, SCAN_DETAILS, p->pid, -1);
    if (!(f & F_STATUS)) {
        struct stat st;
        if (fstat(piddir, &st) == 0)
            p->uid = st.st_uid;
        if (read_file_at(piddir, "statm", &wk->text, READ_LINE_MAX) == 0)
            procs_parse_statm(wk->text.data, p, wk->page_size);
    }
    /* A command line past the cap is shown cut. */
    int rc = read_file_at(piddir, "cmdline", &wk->text, READ_CMDLINE_MAX);
    if (rc == 0 || rc == -EFBIG)
        p->cmdline = procs_join_cmdline(wk->text.data, wk->text.len, p->comm, p->state == 'Z');
    const char *mapped = pidscan_exe(wk->ps, p->pid, p->start_code);
    if (mapped) {
        p->exe = xstrdup(mapped);
    } else {
        ssize_t n = readlinkat(piddir, "exe", wk->link, sizeof(wk->link) - 1);
        if (n > 0 && wk->link[0] == '/')
            p->exe = xstrndup(wk->link, (size_t)n);
    }
}

static void one_process(struct walk *wk, pid_t pid)
{
    scan_beacon_at(wk->o->beacon, SCAN_DETAILS, pid, -1);
    int piddir = pid_dir_open(wk->proc, pid);
    if (piddir < 0) {
        warn_count_errno(wk->w, errno, pid);
        return;
    }
    int rc = read_file_at(piddir, "stat", &wk->text, READ_LINE_MAX);
    struct proc *p = VEC_PUSH(wk->pl->items, wk->pl->n, wk->pl->cap);
    if (rc < 0 || !procs_parse_stat(wk->text.data, p)) {
        if (rc < 0)
            warn_count_errno(wk->w, -rc, pid);
        wk->pl->n--;
        close(piddir);
        return;
    }
    const struct walk_opts *o = wk->o;
    unsigned char f = 0;
    if (!p->kernel_thread) {
        /* Which namespaces it is in, and whether its mount namespace shows a
         * watched mount (that namespace's mountinfo is read once). */
        struct nsmap *ns = wk->ns;
        p->mntns = nsmap_known_mntns(ns, p->pid); /* --all: read just before */
        if (!p->mntns)
            p->mntns = nsmap_link(piddir, "ns/mnt");
        p->pidns = nsmap_link(piddir, "ns/pid");
        const struct mntns_seen *seen = nsmap_mntns(ns, p->mntns, piddir);
        /* A process that reaches a watched mount from a pid namespace other
         * than the one /proc shows names its segments by its pid there:
         * NSpid's last field. */
        if (p->pidns && (p->pidns != ns->self_pidns || ns->self_depth != 1) &&
            nsmap_sees_any(ns, seen) &&
            read_file_at(piddir, "status", &wk->text, READ_SMALL_MAX) == 0) {
            procs_parse_status(wk->text.data, p);
            f |= F_STATUS;
        }
    }
    size_t held = 0;
    if (o->ndevs && !p->kernel_thread)
        held = pidscan_run(wk->ps, piddir, p->pid);
    if (held || p->state == 'Z' || p->pid == o->world_pid)
        f |= F_WANT;
    bool torch = torchprint_signals_maybe(p->sigcatch) && wk->hl->ntorch &&
                 wk->hl->torch_pids[wk->hl->ntorch - 1] == p->pid;
    if (!p->kernel_thread && (torchprint_comm_maybe(p->comm) || torch))
        f |= F_WANT | F_UP;
    if (f & F_WANT) {
        details(wk, piddir, p, f);
        f |= F_DONE;
    }
    *VEC_PUSH(wk->flags, wk->nflags, wk->flags_cap) = f;
    close(piddir);
}

/* The pid a torch segment name carries (torch_<pid>_...), 0 for none; an
 * over-approximation of kind.c's rule is enough to pick processes to read. */
static pid_t named_pid(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "torch_", 6) != 0)
        return 0;
    int v;
    pid_digits(base + 6, &v);
    return (pid_t)v;
}

static long index_of(const struct proc_list *pl, pid_t pid)
{
    const struct proc *p = pid > 0 ? procs_find(pl, pid) : NULL;
    return p ? (long)(p - pl->items) : -1;
}

static void want(struct walk *wk, long k)
{
    if (k >= 0 && !wk->pl->items[k].kernel_thread)
        wk->flags[k] |= F_WANT;
}

/* The creator of the segment a name (or NULL) names: the pid as /proc
 * shows it, and every process whose pid in its own namespace is that pid
 * (the model decides which namespaces count). A job's segments come one
 * after the other, all named by one pid: a pid that is *last's, the one
 * before, is not looked up again. */
static void want_creator(struct walk *wk, const char *name, pid_t *last,
                         const struct nspid_index *t)
{
    pid_t named = name ? named_pid(name) : 0;
    if (named == *last)
        return;
    *last = named;
    if (named <= 0)
        return;
    want(wk, index_of(wk->pl, named));
    for (size_t k = nspid_index_lower(t, named); k < t->n && t->items[k]->nspid == named; k++)
        want(wk, t->items[k] - wk->pl->items);
}

/* Costly facts of the creators, of every wanted process's parent, and of
 * the grandparents of fingerprinted workers. */
static void second_pass(struct walk *wk)
{
    struct proc_list *pl = wk->pl;
    struct nspid_index ns;
    nspid_index_build(&ns, pl, 0);
    pid_t last = 0;
    for (size_t i = 0; wk->o->files && i < wk->o->files->n; i++)
        want_creator(wk, wk->o->files->items[i].name, &last, &ns);
    for (size_t i = 0; i < wk->hl->n; i++)
        want_creator(wk, wk->hl->items[i].path, &last, &ns);
    nspid_index_free(&ns);
    for (size_t i = 0; i < pl->n; i++)
        if (wk->flags[i] & F_UP)
            want(wk, index_of(pl, pl->items[i].ppid));
    for (size_t i = 0; i < pl->n; i++)
        if (wk->flags[i] & F_WANT)
            want(wk, index_of(pl, pl->items[i].ppid));
    for (size_t i = 0; i < pl->n; i++) {
        if ((wk->flags[i] & (F_WANT | F_DONE)) != F_WANT)
            continue;
        int piddir = pid_dir_open(wk->proc, pl->items[i].pid);
        if (piddir < 0)
            continue; /* gone since: it keeps its cheap facts */
        /* Its pid may be another process's since the first pass read it:
         * only the process of the same start time lends its cmdline and
         * exe (the open directory then stays that process's). */
        struct proc now = {0};
        if (read_file_at(piddir, "stat", &wk->text, READ_LINE_MAX) == 0 &&
            procs_parse_stat(wk->text.data, &now) &&
            now.start_ticks == pl->items[i].start_ticks)
            details(wk, piddir, &pl->items[i], wk->flags[i]);
        close(piddir);
    }
}

int walk_list(int proc, pid_t **pids, size_t *npids)
{
    /* An open file description of its own (a dup would share the offset
     * with proc, which another thread may be reading). */
    int fd = openat(proc, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return -err;
    }
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) { /* the numeric entries */
        const char *s = de->d_name;
        if (*s < '1' || *s > '9')
            continue;
        int v;
        if (*pid_digits(s, &v))
            continue;
        *VEC_PUSH(*pids, n, cap) = (pid_t)v;
    }
    closedir(d);
    if (n > 1)
        qsort(*pids, n, sizeof(**pids), pid_cmp);
    *npids = n;
    return 0;
}

int walk_run(const struct walk_opts *o, struct proc_list *pl, struct holder_list *hl,
             struct warnings *w)
{
    struct walk wk = {.o = o, .pl = pl, .hl = hl, .w = w, .proc = o->sys->proc,
                      .page_size = (uint64_t)sysconf(_SC_PAGESIZE)};
    pid_t *listed = NULL;
    const pid_t *pids = o->pids;
    size_t npids = o->npids;
    if (!pids) {
        int rc = walk_list(wk.proc, &listed, &npids);
        if (rc < 0)
            return rc;
        pids = listed;
    }
    buf_init(&wk.text);
    struct nsmap own;
    wk.ns = o->ns;
    if (!wk.ns) {
        nsmap_init(&own, o->devs, o->ndevs);
        wk.ns = &own;
    }
    nsmap_self(wk.ns, wk.proc, nsmap_boot_realtime(), sysconf(_SC_CLK_TCK));
    wk.ps = pidscan_new(o->devs, o->ndevs, o->files, hl, w, o->beacon);
    size_t denied0 = w->denied;
    for (size_t i = 0; i < npids; i++) /* ascending: so is the list */
        one_process(&wk, pids[i]);
    second_pass(&wk);
    nsmap_reach(wk.ns, pl);
    if (wk.ns == &own)
        nsmap_free(&own);
    holders_warn_denied(w, denied0);
    pidscan_free(wk.ps);
    free(listed);
    free(wk.flags);
    buf_free(&wk.text);
    return 0;
}

/* ---- The check before an unlink: the same readers over every process ---- */

/* A blind process's mountinfo is compared with at most this many devices;
 * with more, every blind process counts as reaching them. */
#define REACH_DEVS 8

/* State of one holders_find_inodes pass. */
struct inode_search {
    struct inode_query *q;
    struct inomap idx;   /* (dev, ino) -> query index */
    size_t open;         /* queries still without a holder */
    dev_t *devs;         /* the devices searched (distinct), all of them */
    size_t ndevs, devs_cap;
    struct holder_blind *blind;
    struct buf text;
};

static void found(struct inode_search *is, dev_t dev, ino_t ino, pid_t pid, int fd)
{
    size_t k;
    if (!inomap_get(&is->idx, dev, ino, &k) || is->q[k].pid)
        return;
    is->q[k].pid = pid;
    is->q[k].fd = fd;
    is->open--;
}

/* Does the process see one of the searched devices among its mounts? An
 * unreadable mountinfo counts as yes, and so does any process when more
 * devices are searched than REACH_DEVS. */
static bool reaches(struct inode_search *is, int piddir)
{
    if (is->ndevs > REACH_DEVS)
        return true;
    struct mountinfo mi;
    bool yes = mountinfo_read(piddir, "mountinfo", &mi) < 0 || mi.malformed > 0;
    for (size_t k = 0; k < mi.n && !yes; k++)
        for (size_t i = 0; i < is->ndevs && !yes; i++)
            yes = makedev(mi.items[k].major, mi.items[k].minor) == is->devs[i];
    mountinfo_free(&mi);
    return yes;
}

static void blind_add(struct inode_search *is, int piddir)
{
    struct holder_blind *b = is->blind;
    struct stat st;
    struct proc p = {0};
    /* A zombie has closed its files and dropped its memory, and its fd list
     * is refused to everyone: it holds nothing. */
    if (read_file_at(piddir, "stat", &is->text, READ_LINE_MAX) == 0 &&
        procs_parse_stat(is->text.data, &p) && (p.state == 'Z' || p.state == 'X'))
        return;
    b->denied++;
    if (!reaches(is, piddir)) {
        b->unreachable++;
        return;
    }
    if (fstat(piddir, &st) != 0) {
        b->more_uids = true;
        return;
    }
    for (size_t i = 0; i < b->nuids; i++)
        if (b->uids[i] == st.st_uid)
            return;
    if (b->nuids < sizeof(b->uids) / sizeof(b->uids[0]))
        b->uids[b->nuids++] = st.st_uid;
    else
        b->more_uids = true;
}

/* One process: its fds, then its mappings, on the searched devices, until
 * every query has a holder. Whatever the walk could not see (a refused fd
 * list, fd target or maps, or a read cut short) makes the process blind;
 * one that exited meanwhile holds nothing any more. */
static void search_process(struct inode_search *is, struct procfiles *pf, int piddir, pid_t pid)
{
    struct procfile f;
    procfiles_begin(pf, piddir);
    while (is->open && procfiles_next(pf, &f))
        found(is, f.dev, f.ino, pid, f.kind == PROCFILE_FD ? f.fd : -1);
    if (procfiles_end(pf) & (PROCFILES_DENIED | PROCFILES_FAILED))
        blind_add(is, piddir);
}

int holders_find_inodes(const struct sysroot *sys, struct inode_query *q, size_t n,
                        pid_t skip_pid, struct holder_blind *blind)
{
    memset(blind, 0, sizeof(*blind));
    struct inode_search is = {.q = q, .blind = blind};
    inomap_init(&is.idx);
    for (size_t i = 0; i < n; i++) {
        q[i].pid = 0;
        q[i].fd = -1;
        size_t k;
        if (inomap_add(&is.idx, q[i].dev, q[i].ino, i, &k))
            is.open++;
        bool known = false;
        for (size_t d = 0; d < is.ndevs && !known; d++)
            known = is.devs[d] == q[i].dev;
        if (!known)
            *VEC_PUSH(is.devs, is.ndevs, is.devs_cap) = q[i].dev;
    }
    /* A proc that cannot be listed proves nothing free: an error, never
     * an empty table. */
    pid_t *pids = NULL;
    size_t npids = 0;
    int rc = walk_list(sys->proc, &pids, &npids);
    buf_init(&is.text);
    if (rc == 0) {
        struct procfiles *pf = procfiles_new(is.devs, is.ndevs, NULL);
        for (size_t i = 0; i < npids && is.open; i++) {
            if (pids[i] == skip_pid)
                continue;
            int piddir = pid_dir_open(sys->proc, pids[i]);
            if (piddir < 0)
                continue; /* exited: holds nothing any more */
            search_process(&is, pf, piddir, pids[i]);
            close(piddir);
        }
        procfiles_free(pf);
        /* Several queries for one inode share the first one's answer. */
        for (size_t i = 0; i < n; i++) {
            size_t k;
            if (inomap_get(&is.idx, q[i].dev, q[i].ino, &k) && k != i) {
                q[i].pid = q[k].pid;
                q[i].fd = q[k].fd;
            }
        }
    }
    free(pids);
    free(is.devs);
    buf_free(&is.text);
    inomap_free(&is.idx);
    return rc;
}
