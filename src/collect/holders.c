#include "collect/holders.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/mounts.h"
#include "collect/pidscan.h"
#include "collect/procs.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/inomap.h"
#include "util/xalloc.h"

static const char deleted_suffix[] = " (deleted)";

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

bool strip_deleted(char *path)
{
    size_t n = strlen(path), k = sizeof(deleted_suffix) - 1;
    if (n >= k && strcmp(path + n - k, deleted_suffix) == 0) {
        path[n - k] = '\0';
        return true;
    }
    return false;
}

static bool parse_hex(char **cur, char stop, uint64_t *out)
{
    char *s = *cur, *end;
    if (!*s)
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 16);
    if (errno || end == s || *end != stop)
        return false;
    *out = v;
    *cur = end + 1;
    return true;
}

bool maps_parse_line(char *line, struct maps_entry *e)
{
    /* 7f2c3c000000-7f2c3c100000 rw-s 00000000 00:1a 12345   /dev/shm/torch_1_2 (deleted) */
    char *cur = line;
    uint64_t maj, min;
    if (!parse_hex(&cur, '-', &e->start) || !parse_hex(&cur, ' ', &e->end))
        return false;
    char *sp = strchr(cur, ' '); /* permissions */
    if (!sp || e->end < e->start)
        return false;
    cur = sp + 1;
    if (!parse_hex(&cur, ' ', &e->offset) || !parse_hex(&cur, ':', &maj) ||
        !parse_hex(&cur, ' ', &min))
        return false;
    char *end;
    errno = 0;
    unsigned long long ino = strtoull(cur, &end, 10);
    if (errno || end == cur || (*end != ' ' && *end != '\0'))
        return false;
    e->major = (unsigned)maj;
    e->minor = (unsigned)min;
    e->inode = ino;
    while (*end == ' ')
        end++;
    e->path = end;
    e->deleted = strip_deleted(e->path);
    return true;
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
        qsort(*pids, n, sizeof(**pids), cmp_pid);
    return n;
}

void holders_warn_denied(struct warnings *w, size_t denied_before)
{
    size_t n = w->denied - denied_before;
    if (n == 0)
        return;
    const char *whose = n == 1 ? "process's" : "processes'";
    if (geteuid() != 0)
        warn_add(w, "%zu %s fds or maps could not be read (permission denied): "
                    "run as root to see other users' holders",
                 n, whose);
    else /* e.g. a process with capabilities root here lacks, or in a parent user namespace */
        warn_add(w, "%zu %s fds or maps could not be read, even as root (permission "
                    "denied: more privileged than this shmwatch)",
                 n, whose);
}

bool holders_torch_loaded(const struct holder_list *hl, pid_t pid)
{
    return hl->ntorch && bsearch(&pid, hl->torch_pids, hl->ntorch, sizeof(pid_t), cmp_pid);
}

void holders_free(struct holder_list *hl)
{
    for (size_t i = 0; i < hl->n; i++)
        free(hl->items[i].path);
    free(hl->items);
    free(hl->torch_pids);
    memset(hl, 0, sizeof(*hl));
}

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
    if (is->ndevs > REACH_DEVS || read_file_at(piddir, "mountinfo", &is->text, 4u << 20) < 0)
        return true;
    char *cur = is->text.data, *line;
    while ((line = next_line(&cur))) {
        struct mountinfo_entry e;
        if (!mountinfo_parse_line(line, &e))
            return true;
        for (size_t i = 0; i < is->ndevs; i++)
            if (makedev(e.major, e.minor) == is->devs[i])
                return true;
    }
    return false;
}

/* A zombie has closed its files and dropped its memory, and its fd list is
 * refused to everyone: it holds nothing. */
static bool is_zombie(struct inode_search *is, int piddir)
{
    struct proc p;
    memset(&p, 0, sizeof(p));
    return read_file_at(piddir, "stat", &is->text, 4096) == 0 &&
           procs_parse_stat(is->text.data, &p) && (p.state == 'Z' || p.state == 'X');
}

static void blind_add(struct inode_search *is, int piddir)
{
    struct holder_blind *b = is->blind;
    struct stat st;
    if (is_zombie(is, piddir))
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
    procfiles_begin(pf, piddir, false);
    while (is->open && procfiles_next(pf, &f))
        found(is, f.dev, f.ino, pid, f.kind == PROCFILE_FD ? f.fd : -1);
    if (procfiles_end(pf) & (PROCFILES_DENIED | PROCFILES_FAILED))
        blind_add(is, piddir);
}

static int find_inodes(const char *proc_dir, struct inode_query *q, size_t n, pid_t skip_pid,
                       struct holder_blind *blind, bool text)
{
    memset(blind, 0, sizeof(*blind));
    struct inode_search is = {.q = q, .blind = blind};
    inomap_init(&is.idx);
    for (size_t i = 0; i < n; i++) {
        q[i].pid = 0;
        q[i].fd = -1;
        size_t k;
        if (!inomap_get(&is.idx, q[i].dev, q[i].ino, &k)) {
            inomap_put(&is.idx, q[i].dev, q[i].ino, i);
            is.open++;
        }
        bool known = false;
        for (size_t d = 0; d < is.ndevs && !known; d++)
            known = is.devs[d] == q[i].dev;
        if (!known)
            *(dev_t *)VEC_PUSH(is.devs, is.ndevs, is.devs_cap) = q[i].dev;
    }
    int proc = open(proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0) {
        int err = errno;
        inomap_free(&is.idx);
        free(is.devs);
        return -err;
    }
    buf_init(&is.text);
    struct procfiles *pf = procfiles_new(is.devs, is.ndevs);
    if (text)
        procfiles_force_text(pf);
    pid_t *pids = NULL;
    size_t cap = 0, npids = proc_list_pids(proc, &pids, &cap);
    for (size_t i = 0; i < npids && is.open; i++) {
        if (pids[i] == skip_pid)
            continue;
        char name[16];
        snprintf(name, sizeof(name), "%d", (int)pids[i]);
        int piddir = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (piddir < 0)
            continue; /* exited: holds nothing any more */
        search_process(&is, pf, piddir, pids[i]);
        close(piddir);
    }
    /* Several queries for one inode share the first one's answer. */
    for (size_t i = 0; i < n; i++) {
        size_t k;
        if (inomap_get(&is.idx, q[i].dev, q[i].ino, &k) && k != i) {
            q[i].pid = q[k].pid;
            q[i].fd = q[k].fd;
        }
    }
    procfiles_free(pf);
    free(pids);
    free(is.devs);
    buf_free(&is.text);
    inomap_free(&is.idx);
    close(proc);
    return 0;
}

int holders_find_inodes(const char *proc_dir, struct inode_query *q, size_t n, pid_t skip_pid,
                        struct holder_blind *blind)
{
    return find_inodes(proc_dir, q, n, skip_pid, blind, false);
}

int holders_find_inodes_text(const char *proc_dir, struct inode_query *q, size_t n,
                             pid_t skip_pid, struct holder_blind *blind)
{
    return find_inodes(proc_dir, q, n, skip_pid, blind, true);
}
