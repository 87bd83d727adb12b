#include "collect/walk.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/pidscan.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* Per process, indexed like the list. */
enum {
    F_WANT = 1,  /* the model may show it: read its costly facts, and its parent's */
    F_MNTNS = 2, /* the model asks whether it sees the watched mounts */
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
    /* --pid: our pid namespace and the watched process's (0 otherwise). */
    unsigned long own_pidns, world_pidns;
    unsigned char *flags;
    size_t nflags, flags_cap;
    struct buf text;
    char link[4096];
};

/* The inode number in a namespace link ("mnt:[4026531841]"), 0 if unreadable. */
static unsigned long ns_inode(int dirfd, const char *path)
{
    char b[64];
    ssize_t n = readlinkat(dirfd, path, b, sizeof(b) - 1);
    if (n <= 0)
        return 0;
    b[n] = '\0';
    const char *s = strchr(b, '[');
    return s ? strtoul(s + 1, NULL, 10) : 0;
}

/* status, cmdline and exe (and the mount namespace when asked). */
static void details(struct walk *wk, int piddir, struct proc *p, unsigned char f)
{
    scan_beacon_at(wk->o->beacon, SCAN_DETAILS, p->pid, -1);
    if (!(f & F_STATUS) && read_proc_at(piddir, "status", &wk->text, 64u << 10) == 0)
        procs_parse_status(wk->text.data, p);
    if (!p->cmdline && read_proc_at(piddir, "cmdline", &wk->text, 128u << 10) == 0)
        p->cmdline = procs_join_cmdline(wk->text.data, wk->text.len, p->comm, p->state == 'Z');
    if (!p->exe) {
        ssize_t n = readlinkat(piddir, "exe", wk->link, sizeof(wk->link) - 1);
        if (n > 0 && wk->link[0] == '/')
            p->exe = xstrndup(wk->link, (size_t)n);
    }
    if (f & F_MNTNS)
        p->mntns = ns_inode(piddir, "ns/mnt");
}

/* Processes named like torch's: pt_data_worker, pt_multiprocess,
 * pt_thread_data_, pt_data_pin, pt_elastic (torchrun's agent: a rank's
 * parent), torch_shm_manag (roles.c has the exact list). */
static bool torch_comm(const struct proc *p)
{
    return strncmp(p->comm, "pt_", 3) == 0 || strncmp(p->comm, "torch_", 6) == 0;
}

/* Catches SIGBUS, SIGSEGV and SIGFPE, as torch's DataLoader workers do. */
static bool worker_signals(const struct proc *p)
{
    const uint64_t sigs = (1ull << (SIGBUS - 1)) | (1ull << (SIGSEGV - 1)) | (1ull << (SIGFPE - 1));
    return (p->sigcatch & sigs) == sigs;
}

static void one_process(struct walk *wk, struct pidscan *ps, pid_t pid)
{
    char name[16];
    snprintf(name, sizeof(name), "%d", (int)pid);
    scan_beacon_at(wk->o->beacon, SCAN_DETAILS, pid, -1);
    int piddir = openat(wk->proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (piddir < 0) {
        warn_count_errno(wk->w, errno);
        return;
    }
    int rc = read_proc_at(piddir, "stat", &wk->text, 4096);
    struct proc *p = VEC_PUSH(wk->pl->items, wk->pl->n, wk->pl->cap);
    if (rc < 0 || !procs_parse_stat(wk->text.data, p)) {
        if (rc < 0)
            warn_count_errno(wk->w, -rc);
        wk->pl->n--;
        close(piddir);
        return;
    }
    const struct walk_opts *o = wk->o;
    unsigned char f = 0;
    if (o->all_pidns && !p->kernel_thread) {
        p->pidns = ns_inode(piddir, "ns/pid");
        /* In the watched process's pid namespace, when it is not ours, a
         * process names its segments by its pid there: NSpid's last field.
         * Other namespaces' processes are never looked up by that pid. */
        if (p->pidns && p->pidns == wk->world_pidns && p->pidns != wk->own_pidns &&
            read_proc_at(piddir, "status", &wk->text, 64u << 10) == 0) {
            procs_parse_status(wk->text.data, p);
            f |= F_STATUS;
        }
    }
    bool sigs = worker_signals(p);
    size_t held = 0;
    if (o->ndevs && !p->kernel_thread)
        held = pidscan_run(ps, piddir, p->pid, sigs);
    if (held || p->state == 'Z' || p->pid == o->world_pid)
        f |= F_WANT;
    if (p->pid == o->world_pid)
        f |= F_MNTNS;
    bool torch = sigs && wk->hl->ntorch && wk->hl->torch_pids[wk->hl->ntorch - 1] == p->pid;
    if (!p->kernel_thread && (torch_comm(p) || torch))
        f |= F_WANT | F_MNTNS | F_UP;
    if (f & F_WANT) {
        details(wk, piddir, p, f);
        f |= F_DONE;
    }
    *(unsigned char *)VEC_PUSH(wk->flags, wk->nflags, wk->flags_cap) = f;
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
    long v = 0;
    for (const char *s = base + 6; *s >= '0' && *s <= '9' && v < 100000000; s++)
        v = v * 10 + (*s - '0');
    return (pid_t)v;
}

static long index_of(const struct proc_list *pl, pid_t pid)
{
    const struct proc *p = pid > 0 ? procs_find(pl, pid) : NULL;
    return p ? (long)(p - pl->items) : -1;
}

/* The creator of a named segment, mapped from the watched pid namespace in
 * --pid mode (ns has that namespace's processes; empty otherwise). */
static void want_creator(struct walk *wk, pid_t named, const struct nspid_index *ns)
{
    if (named <= 0)
        return;
    long k = -1;
    if (ns->n) { /* --pid: the watched pid namespace's processes */
        const struct proc *p = nspid_index_find(ns, named);
        k = p ? (long)(p - wk->pl->items) : -1;
    } else {
        k = index_of(wk->pl, named);
    }
    if (k >= 0 && !wk->pl->items[k].kernel_thread)
        wk->flags[k] |= F_WANT;
}

/* Costly facts of the creators, of every wanted process's parent, and of
 * the grandparents of fingerprinted workers. */
static void second_pass(struct walk *wk)
{
    struct proc_list *pl = wk->pl;
    long world = index_of(pl, wk->o->world_pid);
    struct nspid_index ns;
    nspid_index_build(&ns, pl, wk->o->all_pidns && world >= 0 ? pl->items[world].pidns : 0);
    for (size_t i = 0; wk->o->files && i < wk->o->files->n; i++)
        want_creator(wk, named_pid(wk->o->files->items[i].name), &ns);
    for (size_t i = 0; i < wk->hl->n; i++)
        if (wk->hl->items[i].path)
            want_creator(wk, named_pid(wk->hl->items[i].path), &ns);
    nspid_index_free(&ns);
    for (size_t i = 0; i < pl->n; i++) {
        long up = (wk->flags[i] & F_UP) ? index_of(pl, pl->items[i].ppid) : -1;
        if (up >= 0)
            wk->flags[up] |= F_WANT;
    }
    for (size_t i = 0; i < pl->n; i++) {
        long parent = (wk->flags[i] & F_WANT) ? index_of(pl, pl->items[i].ppid) : -1;
        if (parent >= 0 && !pl->items[parent].kernel_thread)
            wk->flags[parent] |= F_WANT;
    }
    for (size_t i = 0; i < pl->n; i++) {
        if ((wk->flags[i] & (F_WANT | F_DONE)) != F_WANT)
            continue;
        char name[16];
        snprintf(name, sizeof(name), "%d", (int)pl->items[i].pid);
        int piddir = openat(wk->proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (piddir < 0)
            continue; /* gone since: it keeps its cheap facts */
        details(wk, piddir, &pl->items[i], wk->flags[i]);
        close(piddir);
    }
}

int walk_run(const struct walk_opts *o, struct proc_list *pl, struct holder_list *hl,
             struct warnings *w)
{
    struct walk wk = {.o = o, .pl = pl, .hl = hl, .w = w};
    wk.proc = open(o->proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (wk.proc < 0)
        return -errno;
    buf_init(&wk.text);
    if (o->all_pidns) {
        char world[32];
        snprintf(world, sizeof(world), "%d/ns/pid", (int)o->world_pid);
        wk.own_pidns = ns_inode(wk.proc, "self/ns/pid");
        wk.world_pidns = ns_inode(wk.proc, world);
    }
    struct pidscan *ps = pidscan_new(o->devs, o->ndevs, hl, w);
    pidscan_set_beacon(ps, o->beacon);
    if (o->files) {
        pidscan_expect(ps, o->files->n + 1024);
        for (size_t i = 0; i < o->files->n; i++)
            pidscan_known(ps, o->files->items[i].dev, o->files->items[i].ino);
    }
    pid_t *pids = NULL;
    size_t cap = 0, npids = proc_list_pids(wk.proc, &pids, &cap); /* ascending: so is the list */
    size_t denied0 = w->denied;
    for (size_t i = 0; i < npids; i++)
        one_process(&wk, ps, pids[i]);
    second_pass(&wk);
    holders_warn_denied(w, denied0);
    pidscan_free(ps);
    free(pids);
    free(wk.flags);
    buf_free(&wk.text);
    close(wk.proc);
    return 0;
}
