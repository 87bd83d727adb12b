#include "collect/pidscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/inomap.h"
#include "util/xalloc.h"

/* PROCMAP_QUERY (linux/fs.h, Linux 6.11), spelled out for older headers. */
struct procmap_query {
    uint64_t size, query_flags, query_addr;
    uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOCTL _IOWR('f', 17, struct procmap_query)
#define PQ_VMA_EXECUTABLE 0x04
#define PQ_COVERING_OR_NEXT 0x10
#define PQ_FILE_BACKED 0x20

#define DENTS_SIZE (64u << 10)
#define NAME_SIZE 4096

enum { SEEN_NAME = 1, SEEN_STAT = 2 }; /* what the scan has of an inode */

/* One inode of the scan: what is known of it, and the last process that
 * holds it with that process's first record (to fold its mappings into). */
struct inode_info {
    pid_t pid; /* 0: no record yet */
    unsigned char flags;
    size_t rec;
};
enum { MAPS_UNKNOWN, MAPS_QUERY, MAPS_TEXT };

struct pidscan {
    const dev_t *devs;
    size_t ndevs;
    struct holder_list *out;
    struct warnings *w;
    struct inomap seen; /* (dev, ino) -> index into info */
    struct inomap libs; /* executable files asked about: (dev, ino) -> 1 libtorch, 0 not */
    struct inode_info *info;
    size_t ninfo, info_cap;
    int maps;
    struct buf text;
    char *dents;
    char name[NAME_SIZE];
};

struct pidscan *pidscan_new(const dev_t *devs, size_t ndevs, struct holder_list *out,
                            struct warnings *w)
{
    struct pidscan *ps = xcalloc(1, sizeof(*ps));
    ps->devs = devs;
    ps->ndevs = ndevs;
    ps->out = out;
    ps->w = w;
    inomap_init(&ps->seen);
    inomap_init(&ps->libs);
    buf_init(&ps->text);
    ps->dents = xmalloc(DENTS_SIZE);
    return ps;
}

void pidscan_free(struct pidscan *ps)
{
    if (!ps)
        return;
    inomap_free(&ps->seen);
    inomap_free(&ps->libs);
    free(ps->info);
    buf_free(&ps->text);
    free(ps->dents);
    free(ps);
}

void pidscan_force_text(struct pidscan *ps)
{
    ps->maps = MAPS_TEXT;
}

bool pidscan_queried(const struct pidscan *ps)
{
    return ps->maps == MAPS_QUERY;
}

static bool watched(const struct pidscan *ps, dev_t dev)
{
    for (size_t i = 0; i < ps->ndevs; i++)
        if (ps->devs[i] == dev)
            return true;
    return false;
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

void pidscan_expect(struct pidscan *ps, size_t inodes)
{
    inomap_reserve(&ps->seen, inodes);
}

static void fill_stat(struct shm_holder *h, const struct stat *st)
{
    h->stat_ok = true;
    h->size = (uint64_t)st->st_size;
    h->alloc = (uint64_t)st->st_blocks * 512u;
    h->uid = st->st_uid;
    h->mtime = (int64_t)st->st_mtim.tv_sec;
}

static struct shm_holder *add(struct pidscan *ps, pid_t pid, dev_t dev, ino_t ino)
{
    struct holder_list *o = ps->out;
    struct shm_holder *h = VEC_PUSH(o->items, o->n, o->cap);
    h->pid = pid;
    h->dev = dev;
    h->ino = ino;
    return h;
}

static void fd_holder(struct pidscan *ps, int fddir, const char *name, int fd, pid_t pid,
                      const struct stat *st)
{
    size_t k = info_of(ps, st->st_dev, st->st_ino);
    struct shm_holder *h = add(ps, pid, st->st_dev, st->st_ino);
    h->fd = fd;
    fill_stat(h, st);
    h->deleted = st->st_nlink == 0;
    struct inode_info *in = &ps->info[k];
    if (in->pid != pid) { /* the process's first record of the inode */
        in->pid = pid;
        in->rec = ps->out->n - 1;
    }
    if (!(in->flags & SEEN_NAME)) {
        ssize_t n = readlinkat(fddir, name, ps->name, sizeof(ps->name) - 1);
        if (n > 0) {
            ps->name[n] = '\0';
            h->deleted = strip_deleted(ps->name) || h->deleted;
            h->path = xstrdup(ps->name);
            in->flags |= SEEN_NAME;
        }
    }
    in->flags |= SEEN_STAT;
}

static void scan_fds(struct pidscan *ps, int piddir, pid_t pid)
{
    int fddir = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fddir < 0) {
        warn_count_errno(ps->w, errno);
        return;
    }
    ssize_t n;
    while ((n = getdents64(fddir, ps->dents, DENTS_SIZE)) > 0) {
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *d = (const struct dirent64 *)(ps->dents + off);
            off += d->d_reclen;
            const char *s = d->d_name;
            int fd = 0;
            for (; *s >= '0' && *s <= '9' && fd < 100000000; s++)
                fd = fd * 10 + (*s - '0');
            struct stat st;
            if (*s || s == d->d_name || fstatat(fddir, d->d_name, &st, 0) != 0 ||
                !watched(ps, st.st_dev))
                continue;
            fd_holder(ps, fddir, d->d_name, fd, pid, &st);
        }
    }
    close(fddir);
}

/* One mapping of a watched inode; path is its text when the caller has it
 * for free (maps text), else NULL and it is asked for only when needed. */
struct mapping {
    uint64_t start, end, offset;
    dev_t dev;
    ino_t ino;
    const char *path;
    bool deleted; /* path had " (deleted)", already taken off */
};

static bool query_name(int mapsfd, uint64_t addr, char *name, size_t n)
{
    struct procmap_query q = {.size = sizeof(q),
                              .query_flags = PQ_FILE_BACKED,
                              .query_addr = addr,
                              .vma_name_addr = (uintptr_t)name,
                              .vma_name_size = (uint32_t)n};
    return ioctl(mapsfd, PROCMAP_QUERY_IOCTL, &q) == 0 && q.vma_name_size > 0;
}

/* Writes x in lower-case hex (no leading zeros) at d; returns the end. */
static char *put_hex(char *d, uint64_t x)
{
    char b[16], *s = b + sizeof(b);
    do {
        *--s = "0123456789abcdef"[x & 15];
        x >>= 4;
    } while (x);
    size_t n = (size_t)(b + sizeof(b) - s);
    memcpy(d, s, n);
    return d + n;
}

/* "map_files/START-END" as the kernel names the mapping (snprintf's cost
 * showed at 30,000 mappings). */
static void map_files_name(char *d, uint64_t start, uint64_t end)
{
    memcpy(d, "map_files/", 10);
    d = put_hex(d + 10, start);
    *d++ = '-';
    *put_hex(d, end) = '\0';
}

static void map_holder(struct pidscan *ps, int piddir, int mapsfd, pid_t pid,
                       const struct mapping *mp)
{
    uint64_t reach = mp->offset + (mp->end - mp->start);
    size_t k = info_of(ps, mp->dev, mp->ino);
    if (ps->info[k].pid == pid) {
        /* Known to this process already (an fd, or an earlier mapping): the
         * first record of the inode carries the mapping for all. */
        struct shm_holder *h = &ps->out->items[ps->info[k].rec];
        h->mapped = true;
        if (reach > h->map_bytes)
            h->map_bytes = reach;
        return;
    }
    struct shm_holder *h = add(ps, pid, mp->dev, mp->ino);
    h->fd = -1;
    h->mapped = true;
    h->map_bytes = reach;
    struct inode_info *in = &ps->info[k];
    in->pid = pid;
    in->rec = ps->out->n - 1;
    if (!(in->flags & SEEN_NAME)) {
        const char *path = mp->path;
        if (!path && mapsfd >= 0 && query_name(mapsfd, mp->start, ps->name, sizeof(ps->name)))
            path = ps->name;
        if (path) {
            h->path = xstrdup(path);
            h->deleted = strip_deleted(h->path) || mp->deleted;
            in->flags |= SEEN_NAME;
        }
    }
    if (!(in->flags & SEEN_STAT)) {
        /* map_files/ gives the inode's real size and allocation (root only). */
        char mf[64];
        map_files_name(mf, mp->start, mp->end);
        struct stat st;
        if (fstatat(piddir, mf, &st, 0) == 0 && st.st_ino == mp->ino) {
            fill_stat(h, &st);
            in->flags |= SEEN_STAT;
        }
    }
}

static void note_torch(struct pidscan *ps, pid_t pid)
{
    struct holder_list *o = ps->out;
    xgrow((void **)&o->torch_pids, &o->torch_cap, o->ntorch + 1, sizeof(pid_t));
    o->torch_pids[o->ntorch++] = pid;
}

/* Is the executable mapping q of a libtorch library? Each file's name is
 * asked for once per scan: the DataLoader's processes all map the same
 * few hundred libraries, whose names would otherwise be formatted again
 * for each of them. */
static bool torch_lib(struct pidscan *ps, int mapsfd, const struct procmap_query *q)
{
    dev_t dev = makedev(q->dev_major, q->dev_minor);
    size_t known;
    if (inomap_get(&ps->libs, dev, (ino_t)q->inode, &known))
        return known;
    if (!query_name(mapsfd, q->vma_start, ps->name, sizeof(ps->name)))
        return false; /* gone meanwhile: nothing learnt of the file */
    bool torch = strstr(ps->name, "/libtorch") != NULL;
    inomap_put(&ps->libs, dev, (ino_t)q->inode, torch);
    return torch;
}

/* Returns false when the kernel has no PROCMAP_QUERY (the caller falls back
 * to the text); true when the mappings were read or the process is gone. */
static bool query_maps(struct pidscan *ps, int piddir, pid_t pid, bool want_torch)
{
    int fd = openat(piddir, "maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        warn_count_errno(ps->w, errno);
        return true;
    }
    uint64_t addr = 0;
    bool torch = false;
    for (;;) {
        struct procmap_query q = {.size = sizeof(q),
                                  .query_flags = PQ_COVERING_OR_NEXT | PQ_FILE_BACKED,
                                  .query_addr = addr};
        if (ioctl(fd, PROCMAP_QUERY_IOCTL, &q) != 0) {
            if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP) {
                close(fd);
                return false;
            }
            break; /* ENOENT: no more mappings; ESRCH: no memory (any more) */
        }
        ps->maps = MAPS_QUERY;
        addr = q.vma_end;
        if (want_torch && !torch && (q.vma_flags & PQ_VMA_EXECUTABLE))
            torch = torch_lib(ps, fd, &q);
        dev_t dev = makedev(q.dev_major, q.dev_minor);
        if (!watched(ps, dev) || !q.inode)
            continue;
        struct mapping mp = {q.vma_start, q.vma_end, q.vma_offset, dev, (ino_t)q.inode, NULL, false};
        map_holder(ps, piddir, fd, pid, &mp);
    }
    if (torch)
        note_torch(ps, pid);
    close(fd);
    return true;
}

static bool hex_field(const char **s, char stop, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    for (;; p++) {
        unsigned c = (unsigned char)*p;
        if (c - '0' < 10)
            v = v << 4 | (c - '0');
        else if ((c | 0x20) - 'a' < 6)
            v = v << 4 | ((c | 0x20) - 'a' + 10);
        else
            break;
    }
    if (p == *s || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

/* "start-end perms offset maj:min inode path": the device is read first and
 * anything else only for a watched one. */
static void text_line(struct pidscan *ps, int piddir, pid_t pid, char *line)
{
    const char *s = line;
    for (int k = 0; k < 3; k++) {
        s = strchr(s, ' ');
        if (!s)
            return;
        s++;
    }
    uint64_t maj, min;
    if (!hex_field(&s, ':', &maj) || !hex_field(&s, ' ', &min) || !watched(ps, makedev(maj, min)))
        return;
    struct maps_entry e;
    if (!maps_parse_line(line, &e) || e.inode == 0)
        return;
    struct mapping mp = {e.start,  e.end,  e.offset, makedev(e.major, e.minor), (ino_t)e.inode,
                         e.path, e.deleted};
    map_holder(ps, piddir, -1, pid, &mp);
}

static void text_maps(struct pidscan *ps, int piddir, pid_t pid, bool want_torch)
{
    int rc = read_file_at(piddir, "maps", &ps->text, 256u << 20);
    if (rc < 0) {
        warn_count_errno(ps->w, -rc);
        return;
    }
    if (want_torch && memmem(ps->text.data, ps->text.len, "/libtorch", 9))
        note_torch(ps, pid);
    char *cur = ps->text.data, *line;
    while ((line = next_line(&cur)))
        text_line(ps, piddir, pid, line);
}

size_t pidscan_run(struct pidscan *ps, int piddir, pid_t pid, bool want_torch)
{
    size_t before = ps->out->n;
    scan_fds(ps, piddir, pid);
    if (ps->maps == MAPS_TEXT || !query_maps(ps, piddir, pid, want_torch)) {
        ps->maps = MAPS_TEXT;
        text_maps(ps, piddir, pid, want_torch);
    }
    return ps->out->n - before;
}
