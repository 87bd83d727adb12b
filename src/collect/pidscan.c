#include "collect/pidscan.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/beacon.h"
#include "collect/mapstext.h"
#include "util/inomap.h"
#include "util/strpool.h"
#include "util/xalloc.h"

enum { SEEN_NAME = 1, SEEN_STAT = 2 }; /* what the scan has of an inode */

/* One inode of the scan: what is known of it, and the last process that
 * holds it with that process's first record (to fold its mappings into). */
struct inode_info {
    pid_t pid; /* 0: no record yet */
    unsigned char flags;
    size_t rec;
};

struct pidscan {
    struct procfiles *pf;
    struct holder_list *out;
    struct warnings *w;
    struct inomap seen;             /* (dev, ino) -> index into info */
    const struct file_list *listed; /* pidscan_listed's, until taken in */
    struct inode_info *info;
    size_t ninfo, info_cap;
    pid_t text_pid; /* whose maps text pf holds, 0: none */
    struct scan_beacon *beacon;
};

struct pidscan *pidscan_new(const dev_t *devs, size_t ndevs, const struct file_list *files,
                            struct holder_list *out, struct warnings *w, struct scan_beacon *b)
{
    struct pidscan *ps = xcalloc(1, sizeof(*ps));
    ps->pf = procfiles_new(devs, ndevs, b);
    ps->listed = files && files->n ? files : NULL;
    ps->out = out;
    ps->w = w;
    ps->beacon = b;
    inomap_init(&ps->seen);
    return ps;
}

void pidscan_free(struct pidscan *ps)
{
    if (!ps)
        return;
    procfiles_free(ps->pf);
    inomap_free(&ps->seen);
    free(ps->info);
    free(ps);
}

const char *pidscan_exe(struct pidscan *ps, pid_t pid, uint64_t start_code)
{
    if (pid <= 0 || ps->text_pid != pid || start_code <= 1)
        return NULL;
    return procfiles_text_path(ps->pf, start_code);
}

bool pidscan_queried(const struct pidscan *ps)
{
    return procfiles_queried(ps->pf);
}

/* The scan's entry for an inode (one hash lookup), created empty. */
static size_t info_of(struct pidscan *ps, dev_t dev, ino_t ino)
{
    size_t k;
    if (inomap_add(&ps->seen, dev, ino, ps->ninfo, &k))
        VEC_PUSH(ps->info, ps->ninfo, ps->info_cap);
    return k;
}

void pidscan_known(struct pidscan *ps, dev_t dev, ino_t ino)
{
    size_t k = info_of(ps, dev, ino); /* before ps->info is read: it may move */
    ps->info[k].flags |= SEEN_NAME | SEEN_STAT;
}

static void take_listed(struct pidscan *ps)
{
    const struct file_list *fl = ps->listed;
    ps->listed = NULL;
    inomap_reserve(&ps->seen, fl->n + 1024); /* no rehash while it fills */
    for (size_t i = 0; i < fl->n; i++)
        pidscan_known(ps, fl->items[i].dev, fl->items[i].ino);
}

/* The entry for a record's inode; an inode the listing does not have is
 * counted in the list's unlisted. */
static size_t held_info(struct pidscan *ps, dev_t dev, ino_t ino)
{
    if (ps->listed)
        take_listed(ps);
    size_t before = ps->ninfo;
    size_t k = info_of(ps, dev, ino);
    ps->out->unlisted += ps->ninfo - before;
    return k;
}

static void fill_stat(struct shm_holder *h, const struct stat *st)
{
    h->stat_ok = true;
    h->size = (uint64_t)st->st_size;
    h->alloc = (uint64_t)st->st_blocks * 512u;
    h->uid = st->st_uid;
    h->mtime = (int64_t)st->st_mtim.tv_sec;
}

/* A new record of pid for f's inode, entry k of the scan's; the first
 * record of the process for the inode is noted there. */
static struct shm_holder *add(struct pidscan *ps, size_t k, const struct procfile *f, pid_t pid)
{
    struct holder_list *o = ps->out;
    struct shm_holder *h = VEC_PUSH(o->items, o->n, o->cap);
    h->pid = pid;
    h->dev = f->dev;
    h->ino = f->ino;
    if (ps->info[k].pid != pid) {
        ps->info[k].pid = pid;
        ps->info[k].rec = o->n - 1;
    }
    return h;
}

/* h's name, unless the scan has the inode's (entry k) already: the fd's
 * link or the mapping's path, " (deleted)" taken off. deleted: the file is
 * known gone whatever the name says. */
static void name_once(struct pidscan *ps, size_t k, struct shm_holder *h, const struct procfile *f,
                      bool deleted)
{
    char *name = ps->info[k].flags & SEEN_NAME ? NULL : procfiles_name(ps->pf, f);
    if (!name)
        return;
    h->deleted = strip_deleted(name) || deleted;
    h->path = strpool_dup(&ps->out->paths, name);
    ps->info[k].flags |= SEEN_NAME;
}

static void fd_holder(struct pidscan *ps, const struct procfile *f, pid_t pid)
{
    size_t k = held_info(ps, f->dev, f->ino);
    struct shm_holder *h = add(ps, k, f, pid);
    h->fd = f->fd;
    fill_stat(h, f->st);
    h->deleted = f->st->st_nlink == 0;
    name_once(ps, k, h, f, h->deleted);
    ps->info[k].flags |= SEEN_STAT;
}

static void map_holder(struct pidscan *ps, const struct procfile *f, pid_t pid)
{
    uint64_t reach = f->offset + (f->end - f->start);
    size_t k = held_info(ps, f->dev, f->ino);
    if (ps->info[k].pid == pid) {
        /* Known to this process already (an fd, or an earlier mapping): the
         * first record of the inode carries the mapping for all. */
        struct shm_holder *h = &ps->out->items[ps->info[k].rec];
        h->mapped = true;
        if (reach > h->map_bytes)
            h->map_bytes = reach;
        return;
    }
    struct shm_holder *h = add(ps, k, f, pid);
    h->fd = -1;
    h->mapped = true;
    h->map_bytes = reach;
    name_once(ps, k, h, f, f->deleted);
    /* map_files/ gives the inode's real size and allocation (root only). */
    struct stat st;
    if (!(ps->info[k].flags & SEEN_STAT) && procfiles_map_stat(ps->pf, f, &st)) {
        fill_stat(h, &st);
        ps->info[k].flags |= SEEN_STAT;
    }
}

size_t pidscan_run(struct pidscan *ps, int piddir, pid_t pid)
{
    size_t before = ps->out->n;
    struct procfile f;
    scan_beacon_at(ps->beacon, SCAN_FDS, pid, -1);
    procfiles_begin(ps->pf, piddir);
    while (procfiles_next(ps->pf, &f)) {
        if (f.kind == PROCFILE_FD)
            fd_holder(ps, &f, pid);
        else
            map_holder(ps, &f, pid);
    }
    unsigned status = procfiles_end(ps->pf);
    ps->text_pid = pid;
    if (status & PROCFILES_DENIED)
        warn_denied(ps->w, pid);
    else if (status & PROCFILES_VANISHED)
        ps->w->vanished++;
    if (procfiles_torch(ps->pf))
        *VEC_PUSH(ps->out->torch_pids, ps->out->ntorch, ps->out->torch_cap) = pid;
    return ps->out->n - before;
}
