#include "collect/procfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/beacon.h"
#include "collect/mapstext.h"
#include "collect/procmap.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/inomap.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

#define DENTS_SIZE (64u << 10)
#define NAME_SIZE 4096
#define MAPS_TEXT_MAX (256u << 20)
#define DEV_HINT_BITS 8 /* hints of the watched devices: 256 */

/* MAPS_UNKNOWN: PROCMAP_QUERY is asked, not yet answered. */
enum { MAPS_UNKNOWN, MAPS_QUERY, MAPS_TEXT };
enum { PH_FDS, PH_MAPS, PH_QUERY, PH_TEXT, PH_DONE };

struct procfiles {
    const dev_t *devs;
    size_t ndevs;
    /* Where in devs a device is, by its hash (dev_hash; index + 1, 0:
     * none): most unwatched devices miss at once, and a watched one is
     * found without a search of all (with --all there is one per
     * container). A device whose entry another took is found by the
     * search. */
    uint32_t dev_hint[1u << DEV_HINT_BITS];
    int maps;           /* MAPS_*: how mappings are read */
    struct inomap libs; /* executable files asked about: (dev, ino) -> 1 libtorch, 0 not */
    /* The current walk. */
    int piddir, fddir, mapsfd;
    int phase;
    unsigned status;
    bool torch;
    ssize_t dents_len, dents_off;
    uint64_t addr;  /* PROCMAP_QUERY: where the next mapping is looked for */
    char *cur;      /* maps text: the next line */
    bool text_read; /* pf->text holds this walk's whole maps text */
    struct scan_beacon *beacon;
    struct stat st;
    struct buf text;
    char *dents;
    char name[NAME_SIZE];
};

struct procfiles *procfiles_new(const dev_t *devs, size_t ndevs, struct scan_beacon *b)
{
    struct procfiles *pf = xcalloc(1, sizeof(*pf));
    pf->devs = devs;
    pf->ndevs = ndevs;
    pf->beacon = b;
    for (size_t i = 0; i < ndevs; i++)
        if (!pf->dev_hint[dev_hash(devs[i], DEV_HINT_BITS)])
            pf->dev_hint[dev_hash(devs[i], DEV_HINT_BITS)] = (uint32_t)i + 1;
    pf->fddir = pf->mapsfd = -1;
    pf->maps = procmap_way() == PROCMAP_WAY_TEXT ? MAPS_TEXT : MAPS_UNKNOWN;
    pf->phase = PH_DONE;
    inomap_init(&pf->libs);
    buf_init(&pf->text);
    pf->dents = xmalloc(DENTS_SIZE);
    return pf;
}

void procfiles_free(struct procfiles *pf)
{
    if (!pf)
        return;
    procfiles_end(pf);
    inomap_free(&pf->libs);
    buf_free(&pf->text);
    free(pf->dents);
    free(pf);
}

bool procfiles_queried(const struct procfiles *pf)
{
    return pf->maps == MAPS_QUERY;
}

bool procfiles_torch(const struct procfiles *pf)
{
    return pf->torch;
}

/* Is dev one of the watched devices? Asked of every fd and every mapping of
 * every process: with --all on a node, of twenty devices or more. */
static bool watched(const struct procfiles *pf, dev_t dev)
{
    uint32_t h = pf->dev_hint[dev_hash(dev, DEV_HINT_BITS)];
    if (!h)
        return false;
    if (pf->devs[h - 1] == dev)
        return true;
    for (size_t i = 0; i < pf->ndevs; i++)
        if (pf->devs[i] == dev)
            return true;
    return false;
}

/* Accounts a failed open or read of fd/ or maps. */
static void failed(struct procfiles *pf, int err)
{
    if (err == ENOENT || err == ESRCH)
        pf->status |= PROCFILES_VANISHED;
    else if (err == EACCES || err == EPERM)
        pf->status |= PROCFILES_DENIED;
    else
        pf->status |= PROCFILES_FAILED;
}

void procfiles_begin(struct procfiles *pf, int piddir)
{
    procfiles_end(pf);
    pf->piddir = piddir;
    pf->status = 0;
    pf->torch = false;
    pf->text_read = false;
    pf->dents_len = pf->dents_off = 0;
    pf->fddir = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pf->phase = pf->fddir < 0 ? PH_MAPS : PH_FDS;
    if (pf->fddir < 0)
        failed(pf, errno);
}

unsigned procfiles_end(struct procfiles *pf)
{
    if (pf->fddir >= 0)
        close(pf->fddir);
    if (pf->mapsfd >= 0)
        close(pf->mapsfd);
    pf->fddir = pf->mapsfd = -1;
    pf->phase = PH_DONE;
    return pf->status;
}

static procfiles_stat_hook test_stat;

void procfiles_set_test_stat(procfiles_stat_hook stat_fn)
{
    test_stat = stat_fn;
}

/* Stats the target of fd/NAME into pf->st without waiting on its file
 * system (statx_nowait): an fd may be open on a FUSE or network file system
 * whose daemon or server does not answer. The device decides whether the
 * rest is wanted at all; a watched target (tmpfs) has every field, and
 * were one missing, it is stat'ed again now that its device is known to
 * be watched. Returns 0, or -1 with errno set. */
static int procfiles_stat_fd(struct procfiles *pf, const char *name)
{
    struct statx sx;
    if (test_stat)
        return test_stat(pf->fddir, name, &pf->st);
    if (statx_nowait(pf->fddir, name, 0, &sx) != 0)
        return -1;
    pf->st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    if (watched(pf, pf->st.st_dev) && !stat_from_statx(&sx, &pf->st))
        return fstatat(pf->fddir, name, &pf->st, 0);
    return 0;
}

/* A refused stat of fd/NAME: the link itself, when reading it is refused
 * too, which the kernel decides for the whole process (its ptrace check:
 * root without a capability that the process has, as a container's
 * watcher is towards the host's init). Then every other fd would be
 * refused alike, twice each (statx_nowait asks again with no fields): the
 * rest of the list is not asked. A link that reads is a refusal of the
 * target's own file system (FUSE closed to this user), fd by fd. */
static bool links_refused(struct procfiles *pf, const char *name)
{
    char c;
    return readlinkat(pf->fddir, name, &c, 1) < 0 && (errno == EACCES || errno == EPERM);
}

static bool next_fd(struct procfiles *pf, struct procfile *f)
{
    for (;;) {
        if (pf->dents_off >= pf->dents_len) {
            ssize_t n = getdents64(pf->fddir, pf->dents, DENTS_SIZE);
            if (n <= 0) {
                if (n < 0)
                    failed(pf, errno);
                return false; /* fd/ stays open until procfiles_end */
            }
            pf->dents_len = n;
            pf->dents_off = 0;
        }
        const struct dirent64 *d = (const struct dirent64 *)(pf->dents + pf->dents_off);
        pf->dents_off += d->d_reclen;
        int fd;
        const char *s = pid_digits(d->d_name, &fd);
        if (*s || s == d->d_name)
            continue;
        scan_beacon_fd(pf->beacon, fd);
        if (procfiles_stat_fd(pf, d->d_name) != 0) {
            /* The list is readable, this target is not: it may be on a
             * watched device. ENOENT is an fd closed meanwhile; any other
             * error comes from the target's own file system (a tmpfs stat
             * cannot fail). */
            if (errno == EACCES || errno == EPERM) {
                pf->status |= PROCFILES_DENIED;
                if (links_refused(pf, d->d_name))
                    return false;
            }
            continue;
        }
        if (!watched(pf, pf->st.st_dev))
            continue;
        f->kind = PROCFILE_FD;
        f->dev = pf->st.st_dev;
        f->ino = pf->st.st_ino;
        f->fd = fd;
        f->fdname = d->d_name;
        f->st = &pf->st;
        return true;
    }
}

static bool query_name(int mapsfd, uint64_t addr, char *name, size_t n)
{
    struct procmap_query q = {.size = sizeof(q),
                              .query_flags = PQ_FILE_BACKED,
                              .query_addr = addr,
                              .vma_name_addr = (uintptr_t)name,
                              .vma_name_size = (uint32_t)n};
    return ioctl(mapsfd, PROCMAP_QUERY_IOCTL, &q) == 0 && q.vma_name_size > 0;
}

/* Is the executable mapping q of a libtorch library? Each file's name is
 * asked for once per procfiles: the DataLoader's processes all map the same
 * few hundred libraries, whose names would otherwise be formatted again
 * for each of them. */
static bool torch_lib(struct procfiles *pf, const struct procmap_query *q)
{
    dev_t dev = makedev(q->dev_major, q->dev_minor);
    size_t known;
    if (inomap_get(&pf->libs, dev, (ino_t)q->inode, &known))
        return known;
    if (!query_name(pf->mapsfd, q->vma_start, pf->name, sizeof(pf->name)))
        return false; /* gone meanwhile: nothing learnt of the file */
    bool torch = torchprint_libtorch(pf->name, strlen(pf->name));
    inomap_put(&pf->libs, dev, (ino_t)q->inode, torch);
    return torch;
}

/* Reads the whole maps text; its lines are then taken one by one. */
static void load_text(struct procfiles *pf)
{
    pf->phase = PH_TEXT;
    pf->cur = NULL;
    int rc = read_file_at(pf->piddir, "maps", &pf->text, MAPS_TEXT_MAX);
    if (rc < 0 && rc != -EFBIG) {
        failed(pf, -rc);
        return;
    }
    if (rc == -EFBIG)
        pf->status |= PROCFILES_FAILED; /* the rest is unseen */
    else
        pf->text_read = true;
    if (torchprint_libtorch(pf->text.data, pf->text.len))
        pf->torch = true;
    pf->cur = pf->text.data;
}

static bool next_query(struct procfiles *pf, struct procfile *f)
{
    for (int retries = 0;;) {
        struct procmap_query q = {.size = sizeof(q),
                                  .query_flags = PQ_COVERING_OR_NEXT | PQ_FILE_BACKED,
                                  .query_addr = pf->addr};
        if (ioctl(pf->mapsfd, PROCMAP_QUERY_IOCTL, &q) != 0) {
            int err = errno;
            if ((err == EINTR || err == EAGAIN) && ++retries < 8)
                continue;
            close(pf->mapsfd);
            pf->mapsfd = -1;
            /* Not known, and never answered in this process or an earlier one:
             * a kernel before 6.11. */
            if (pf->maps != MAPS_QUERY && (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP)) {
                pf->maps = MAPS_TEXT;
                load_text(pf);
                return false;
            }
            /* ENOENT: no more mappings; ESRCH: no memory (any more), as in a
             * zombie or a process that has exited; any other error leaves
             * the rest unseen. */
            if (err != ENOENT && err != ESRCH)
                failed(pf, err);
            return false;
        }
        pf->maps = MAPS_QUERY;
        pf->addr = q.vma_end;
        if (!pf->torch && (q.vma_flags & PQ_VMA_EXECUTABLE))
            pf->torch = torch_lib(pf, &q);
        dev_t dev = makedev(q.dev_major, q.dev_minor);
        if (!q.inode || !watched(pf, dev))
            continue;
        f->kind = PROCFILE_MAP;
        f->dev = dev;
        f->ino = (ino_t)q.inode;
        f->start = q.vma_start;
        f->end = q.vma_end;
        f->offset = q.vma_offset;
        f->path = NULL;
        f->deleted = false;
        return true;
    }
}

/* "start-end perms offset maj:min inode path": the device is read first and
 * anything else only for a watched one. */
static bool next_text(struct procfiles *pf, struct procfile *f)
{
    char *line;
    while ((line = next_line(&pf->cur))) {
        dev_t dev;
        if (!maps_line_dev(line, &dev) || !watched(pf, dev))
            continue;
        struct maps_entry e;
        if (!maps_parse_line(line, &e) || e.inode == 0)
            continue;
        f->kind = PROCFILE_MAP;
        f->dev = makedev(e.major, e.minor);
        f->ino = (ino_t)e.inode;
        f->start = e.start;
        f->end = e.end;
        f->offset = e.offset;
        f->path = e.path;
        f->deleted = e.deleted;
        return true;
    }
    return false;
}

/* The phases in their order: each one that ends moves on to the next
 * (next_query to the text when the kernel does not know the ioctl). */
bool procfiles_next(struct procfiles *pf, struct procfile *f)
{
    if (pf->phase == PH_FDS && next_fd(pf, f))
        return true;
    if (pf->phase == PH_FDS || pf->phase == PH_MAPS) {
        scan_beacon_stage(pf->beacon, SCAN_MAPS);
        if (pf->maps == MAPS_TEXT) {
            load_text(pf);
        } else if ((pf->mapsfd = openat(pf->piddir, "maps", O_RDONLY | O_CLOEXEC)) < 0) {
            failed(pf, errno);
        } else {
            pf->addr = 0;
            pf->phase = PH_QUERY;
        }
    }
    if (pf->phase == PH_QUERY && next_query(pf, f))
        return true;
    if (pf->phase == PH_TEXT && next_text(pf, f))
        return true;
    pf->phase = PH_DONE;
    return false;
}

char *procfiles_name(struct procfiles *pf, const struct procfile *f)
{
    if (f->kind == PROCFILE_FD) {
        ssize_t n =
            pf->fddir >= 0 ? readlinkat(pf->fddir, f->fdname, pf->name, sizeof(pf->name) - 1) : -1;
        if (n <= 0)
            return NULL;
        pf->name[n] = '\0';
        return pf->name;
    }
    if (f->path) {
        snprintf(pf->name, sizeof(pf->name), "%s", f->path); /* cut to fit */
        return pf->name;
    }
    if (pf->mapsfd >= 0 && query_name(pf->mapsfd, f->start, pf->name, sizeof(pf->name)))
        return pf->name;
    return NULL;
}

const char *procfiles_text_path(struct procfiles *pf, uint64_t addr)
{
    if (!pf->text_read)
        return NULL;
    const char *p = pf->text.data, *end = p + pf->text.len;
    while (p < end) {
        /* Lines taken by next_text end in NUL, the rest in '\n'. */
        const char *eol = p;
        while (eol < end && *eol && *eol != '\n')
            eol++;
        uint64_t start, stop;
        if (!maps_line_range(p, &start, &stop) || addr < start)
            return NULL; /* the lines go up by address */
        if (addr < stop) {
            /* The line, parsed by the one parser, in pf->name. */
            size_t n = (size_t)(eol - p), k = sizeof(MAPS_DELETED_SUFFIX) - 1;
            struct maps_entry e;
            if (n >= sizeof(pf->name) - k)
                return NULL;
            memcpy(pf->name, p, n);
            pf->name[n] = '\0';
            if (!maps_parse_line(pf->name, &e) || watched(pf, makedev(e.major, e.minor)))
                return NULL; /* a watched line may have been cut at " (deleted)" */
            if (e.path[0] != '/' || strchr(e.path, '\\'))
                return NULL; /* not a plain path: the link says it better */
            if (e.deleted)   /* as the link says it */
                memcpy(e.path + strlen(e.path), MAPS_DELETED_SUFFIX, k + 1);
            return e.path;
        }
        p = eol + 1;
    }
    return NULL;
}

bool procfiles_map_stat(struct procfiles *pf, const struct procfile *f, struct stat *st)
{
    char mf[64]; /* as the kernel names the mapping */
    snprintf(mf, sizeof(mf), "map_files/%" PRIx64 "-%" PRIx64, f->start, f->end);
    return fstatat(pf->piddir, mf, st, 0) == 0 && st->st_ino == f->ino;
}
