/* floor: the least work any tool must do to attribute every shm segment to
 * its holders, as the yardstick of shmwatch's benchmark.
 *
 *   floor [--proc DIR] [--facts] [--procs] [MOUNT...]        (default: /dev/shm)
 *   floor [--proc DIR] [--facts] [--procs] --all
 *
 * It lists each mount and stats each entry (a named segment's inode and
 * size), then for every process under /proc lists fd/ and stats each fd
 * target once, and reads maps once, keeping the lines whose device is a
 * watched mount. Holders are joined to segments by (device, inode) in a hash
 * table. It also reads each process's ns/mnt and ns/pid links, and once per
 * distinct mount namespace that namespace's mountinfo (through the first
 * member met), noting which watched devices it shows: which pid namespaces
 * can reach a mount is part of proving any segment an orphan (a pid in a
 * name is only read in the namespace that wrote it). Nothing else: no process table, no names of hidden segments, no
 * output beyond one summary line. Directories are read with getdents64 into
 * one large buffer and files with read into another, both reused.
 *
 * With --facts it also gathers what shmwatch reports of each segment beyond
 * attribution, the least way it can be had: the name of each unlinked inode
 * seen only through an fd (one readlink per inode) and the exact size of
 * each inode seen only through mappings (one stat of map_files/ per inode).
 * The bench shows that as a second yardstick: how far shmwatch is from the
 * least work for the same facts.
 *
 * With --procs (beside --facts) it also reads what shmwatch reports of the
 * processes, the least way it can be had: every process's stat (its state,
 * parent, name and start: what finds zombies, managers and workers), and
 * for each process holding a watched inode its uid (an fstat of its /proc
 * directory), statm (its anonymous memory), cmdline and exe. A third
 * yardstick, shown beside the targets and not one of them: what is left
 * against it is shmwatch's own work.
 *
 * With --all (the yardstick of `shmwatch --all`, the node view) the mounts
 * are not given: every mount namespace's shm mounts are. A first pass over
 * /proc reads each process's ns/mnt and ns/pid links and, once per distinct
 * mount namespace, its mountinfo (through the first member met); a tmpfs at
 * /dev/shm or /run/shm there is opened through that process's root/ and
 * fstat'ed for its device, and a device not met before is listed (one
 * device seen from several namespaces is one mount). The second pass reads
 * every process's fds and maps as above, against every device found, with
 * the /proc/PID directories the first pass kept open.
 *
 * Standalone on purpose: it links none of shmwatch. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#define MAX_MOUNTS 16
#define MAX_DEVS 4096 /* --all: every shm mount of the node */

static char g_dents[1 << 16], g_proc_dents[1 << 16]; /* fd/ and mount, /proc */
static char *g_text;
static size_t g_text_cap = 1 << 20;
static dev_t g_devs[MAX_DEVS];
static int g_ndevs;
static bool g_all;
/* --all: the watched devices again as an open-addressing set (0 is empty:
 * no mounted file system has device 0:0), for many mounts. */
static dev_t g_devset[2 * MAX_DEVS];

/* (dev, ino) -> holder count; open addressing, grown at half load. */
struct slot {
    dev_t dev;
    ino_t ino;
    uint32_t holders;
    bool used, named;
    bool known; /* --facts: its name and size are had */
};
static bool g_facts;
static char g_link[4096];
static struct slot *g_tab;
static size_t g_cap, g_n;

static size_t hash(dev_t dev, ino_t ino)
{
    uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
    return (size_t)(h ^ (h >> 29));
}

static struct slot *find(struct slot *tab, size_t cap, dev_t dev, ino_t ino)
{
    size_t i = hash(dev, ino) & (cap - 1);
    while (tab[i].used && !(tab[i].dev == dev && tab[i].ino == ino))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static struct slot *lookup(dev_t dev, ino_t ino)
{
    if ((g_n + 1) * 2 > g_cap) {
        size_t ncap = g_cap ? g_cap * 2 : 1024;
        struct slot *nt = calloc(ncap, sizeof(*nt));
        if (!nt) {
            fputs("floor: out of memory\n", stderr);
            exit(1);
        }
        for (size_t i = 0; i < g_cap; i++)
            if (g_tab[i].used)
                *find(nt, ncap, g_tab[i].dev, g_tab[i].ino) = g_tab[i];
        free(g_tab);
        g_tab = nt;
        g_cap = ncap;
    }
    struct slot *s = find(g_tab, g_cap, dev, ino);
    if (!s->used) {
        s->used = true;
        s->dev = dev;
        s->ino = ino;
        g_n++;
    }
    return s;
}

static bool watched(dev_t dev)
{
    if (g_ndevs <= 4) {
        for (int i = 0; i < g_ndevs; i++)
            if (g_devs[i] == dev)
                return true;
        return false;
    }
    size_t i = hash(dev, 0) & (2 * MAX_DEVS - 1);
    while (g_devset[i] && g_devset[i] != dev)
        i = (i + 1) & (2 * MAX_DEVS - 1);
    return g_devset[i] == dev;
}

static void watch(dev_t dev)
{
    if (g_ndevs == MAX_DEVS || !dev)
        return;
    size_t i = hash(dev, 0) & (2 * MAX_DEVS - 1);
    while (g_devset[i] && g_devset[i] != dev)
        i = (i + 1) & (2 * MAX_DEVS - 1);
    if (g_devset[i])
        return;
    g_devset[i] = dev;
    g_devs[g_ndevs++] = dev;
}

/* Calls fn(dirfd, name, arg) for each entry of dirfd but "." and "..",
 * reading the directory into buf (of 64 KiB). */
static void each_entry(int dirfd, char *buf, void (*fn)(int, const char *, void *), void *arg)
{
    long n;
    while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(g_dents))) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            const char *s = d->d_name;
            if (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2])))
                continue;
            fn(dirfd, s, arg);
        }
    }
}

static void named_entry(int dirfd, const char *name, void *arg)
{
    (void)arg;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        struct slot *s = lookup(st.st_dev, st.st_ino);
        s->named = s->known = true;
    }
}

static size_t g_fd_holders, g_map_holders, g_procs, g_listed;
static bool g_proc_facts; /* --procs */

/* Mount namespaces met, and per pid namespace seen reaching a watched
 * device: the least that tells which pid namespaces can write a mount. */
#define MAX_NS 4096
static unsigned long g_mntns[MAX_NS];
static bool g_mntns_sees[MAX_NS];
static size_t g_nmntns;
static unsigned long g_reach[MAX_NS];
static size_t g_nreach;

static unsigned long ns_link(int piddir, const char *path)
{
    char b[64];
    ssize_t n = readlinkat(piddir, path, b, sizeof(b) - 1);
    if (n <= 0)
        return 0;
    b[n] = '\0';
    const char *s = strchr(b, '[');
    return s ? strtoul(s + 1, NULL, 10) : 0;
}

static ssize_t slurp(int dirfd, const char *path);
static bool shm_mounts(int piddir, size_t len);

/* Does this mountinfo text show a watched device not hidden under another
 * mount on the same mount point? The third field is read first; only a
 * watched line's id and mount point are kept, for a second pass that looks
 * for a mount on top of it. */
static bool mountinfo_sees(size_t len)
{
    unsigned long ids[8];
    const char *mps[8];
    size_t mplens[8], n = 0;
    char *end = g_text + len;
    for (char *p = g_text; p < end && n < 8;) {
        char *nl = memchr(p, '\n', (size_t)(end - p)), *f = p, *e;
        if (!nl)
            nl = end;
        unsigned long id = strtoul(f, &e, 10);
        f = memchr(e + 1, ' ', (size_t)(nl - e - 1));
        if (f) {
            unsigned long maj = strtoul(f + 1, &e, 10);
            if (*e == ':' && watched(makedev(maj, strtoul(e + 1, &e, 10)))) {
                char *mp = memchr(e + 1, ' ', (size_t)(nl - e - 1));
                char *mpe = mp ? memchr(mp + 1, ' ', (size_t)(nl - mp - 1)) : NULL;
                if (mpe) {
                    ids[n] = id;
                    mps[n] = mp + 1;
                    mplens[n++] = (size_t)(mpe - mp - 1);
                }
            }
        }
        p = nl + 1;
    }
    bool hidden[8] = {false};
    for (char *p = g_text; n && p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p)), *e;
        if (!nl)
            nl = end;
        strtoul(p, &e, 10);
        unsigned long parent = strtoul(e + 1, &e, 10);
        char *mp = e;
        for (int k = 0; k < 2 && mp; k++) /* past maj:min and root */
            mp = memchr(mp + 1, ' ', (size_t)(nl - mp - 1));
        char *mpe = mp ? memchr(mp + 1, ' ', (size_t)(nl - mp - 1)) : NULL;
        for (size_t k = 0; mpe && k < n; k++)
            if (parent == ids[k] && (size_t)(mpe - mp - 1) == mplens[k] &&
                memcmp(mp + 1, mps[k], mplens[k]) == 0)
                hidden[k] = true;
        p = nl + 1;
    }
    for (size_t k = 0; k < n; k++)
        if (!hidden[k])
            return true;
    return false;
}

/* One process's namespaces: its mount namespace's mountinfo is read through
 * the first member met, and asked whether it shows a watched device (or,
 * with --all, which shm mounts it has: shm_mounts, below); a pid namespace
 * of a process whose mount namespace does is one that reaches the mounts. */
static void namespaces(int piddir)
{
    unsigned long mnt = ns_link(piddir, "ns/mnt"), pid = ns_link(piddir, "ns/pid");
    if (!mnt || !pid)
        return;
    size_t i = g_nmntns;
    while (i > 0 && g_mntns[i - 1] != mnt)
        i--;
    if (i == 0) { /* first member of this mount namespace */
        if (g_nmntns == MAX_NS)
            return;
        ssize_t len = slurp(piddir, "mountinfo");
        g_mntns[g_nmntns] = mnt;
        g_mntns_sees[g_nmntns++] =
            len > 0 && (g_all ? shm_mounts(piddir, (size_t)len) : mountinfo_sees((size_t)len));
        i = g_nmntns;
    }
    if (!g_mntns_sees[i - 1])
        return;
    for (size_t k = 0; k < g_nreach; k++)
        if (g_reach[k] == pid)
            return;
    if (g_nreach < MAX_NS)
        g_reach[g_nreach++] = pid;
}

/* --all: the shm mounts this mountinfo text shows (a tmpfs at /dev/shm or
 * /run/shm), each opened through the process's root/ for its device; a
 * device not met before is watched and listed. Whether any was found. */
static bool shm_mounts(int piddir, size_t len)
{
    static const char *const points[] = {"/dev/shm", "/run/shm"};
    bool found = false;
    char *end = g_text + len;
    for (char *p = g_text; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        char *mp = p; /* the fifth field: id parent maj:min root mountpoint */
        for (int k = 0; k < 4 && mp; k++) {
            mp = memchr(mp, ' ', (size_t)(nl - mp));
            if (mp)
                mp++;
        }
        for (size_t k = 0; mp && k < 2; k++) {
            size_t plen = strlen(points[k]);
            if ((size_t)(nl - mp) <= plen || memcmp(mp, points[k], plen) != 0 || mp[plen] != ' ')
                continue;
            char *sep = memmem(mp, (size_t)(nl - mp), " - ", 3);
            if (!sep || (size_t)(nl - sep) < 9 || memcmp(sep + 3, "tmpfs ", 6) != 0)
                continue;
            char path[32];
            struct stat st;
            snprintf(path, sizeof(path), "root%s", points[k]);
            int fd = openat(piddir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0)
                continue;
            if (fstat(fd, &st) == 0) {
                found = true;
                if (!watched(st.st_dev)) {
                    watch(st.st_dev);
                    each_entry(fd, g_dents, named_entry, NULL);
                }
            }
            close(fd);
        }
        p = nl + 1;
    }
    return found;
}

static void fd_entry(int dirfd, const char *name, void *arg)
{
    (void)arg;
    struct stat st;
    if (fstatat(dirfd, name, &st, 0) == 0 && watched(st.st_dev)) {
        struct slot *s = lookup(st.st_dev, st.st_ino);
        s->holders++;
        g_fd_holders++;
        if (g_facts && !s->known) { /* the stat gave the size; the name is the link */
            s->known = true;
            if (st.st_nlink == 0 && readlinkat(dirfd, name, g_link, sizeof(g_link)) < 0)
                g_link[0] = '\0';
        }
    }
}

/* Reads all of path (relative to dirfd) into g_text; its length, or -1. */
static ssize_t slurp(int dirfd, const char *path)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    for (;;) {
        if (g_text_cap - len < 4096) {
            g_text_cap *= 2;
            g_text = realloc(g_text, g_text_cap);
            if (!g_text) {
                fputs("floor: out of memory\n", stderr);
                exit(1);
            }
        }
        ssize_t r = read(fd, g_text + len, g_text_cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    g_text[len] = '\0';
    return (ssize_t)len;
}

/* maps: "start-end perms offset maj:min inode path"; only the device field
 * is looked at before a line is known to be on a watched mount. */
static void maps_lines(int piddir, size_t len)
{
    char *p = g_text, *end = g_text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        char *f = p;
        for (int k = 0; k < 3 && f; k++) {
            f = memchr(f, ' ', (size_t)(nl - f));
            if (f)
                f++;
        }
        if (f) {
            char *colon;
            unsigned long maj = strtoul(f, &colon, 16);
            if (*colon == ':') {
                char *sp;
                unsigned long min = strtoul(colon + 1, &sp, 16);
                dev_t dev = makedev(maj, min);
                if (*sp == ' ' && watched(dev)) {
                    unsigned long long ino = strtoull(sp + 1, NULL, 10);
                    struct slot *s = lookup(dev, (ino_t)ino);
                    s->holders++;
                    g_map_holders++;
                    if (g_facts && !s->known) { /* the line has the name; the size: */
                        char mf[64];
                        const char *dash = memchr(p, '-', (size_t)(nl - p));
                        const char *range_end = memchr(p, ' ', (size_t)(nl - p));
                        struct stat st;
                        s->known = true;
                        if (dash && range_end && range_end - p < 40) {
                            snprintf(mf, sizeof(mf), "map_files/%.*s", (int)(range_end - p), p);
                            fstatat(piddir, mf, &st, 0);
                        }
                    }
                }
            }
        }
        p = nl + 1;
    }
}

/* --all: the /proc/PID directories of the first pass, kept open for the
 * second (or, past the open-file limit, their names to open again). */
static int *g_kept;
static char (*g_kept_names)[16];
static size_t g_nkept, g_kept_cap;

static void holdings(int piddir);

static void pid_entry_all(int proc, const char *name, void *arg)
{
    (void)arg;
    if (name[0] < '1' || name[0] > '9' || strlen(name) >= 16)
        return;
    int piddir = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (piddir < 0 && errno != EMFILE && errno != ENFILE)
        return;
    if (piddir >= 0)
        namespaces(piddir); /* with the first pass's part: the shm mounts */
    if (g_nkept == g_kept_cap) {
        g_kept_cap = g_kept_cap ? 2 * g_kept_cap : 1024;
        g_kept = realloc(g_kept, g_kept_cap * sizeof(*g_kept));
        g_kept_names = realloc(g_kept_names, g_kept_cap * sizeof(*g_kept_names));
        if (!g_kept || !g_kept_names) {
            fputs("floor: out of memory\n", stderr);
            exit(1);
        }
    }
    g_kept[g_nkept] = piddir;
    memcpy(g_kept_names[g_nkept++], name, strlen(name) + 1);
}

static void pid_entry(int proc, const char *name, void *arg)
{
    (void)arg;
    if (name[0] < '1' || name[0] > '9')
        return;
    int piddir = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (piddir < 0)
        return;
    namespaces(piddir);
    holdings(piddir);
}

/* One process's fds and maps, against the watched devices; closes piddir. */
static void holdings(int piddir)
{
    g_procs++;
    if (g_proc_facts)
        slurp(piddir, "stat");
    size_t before = g_fd_holders + g_map_holders;
    int fddir = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fddir >= 0) {
        each_entry(fddir, g_dents, fd_entry, NULL);
        close(fddir);
    }
    ssize_t len = slurp(piddir, "maps");
    if (len > 0)
        maps_lines(piddir, (size_t)len);
    if (g_proc_facts && g_fd_holders + g_map_holders > before) { /* a holder: listed */
        struct stat st;
        g_listed++;
        fstat(piddir, &st);
        slurp(piddir, "statm");
        slurp(piddir, "cmdline");
        if (readlinkat(piddir, "exe", g_link, sizeof(g_link)) < 0)
            g_link[0] = '\0';
    }
    close(piddir);
}

int main(int argc, char **argv)
{
    const char *proc_dir = "/proc";
    const char *mounts[MAX_MOUNTS];
    int nmounts = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--proc") == 0 && i + 1 < argc)
            proc_dir = argv[++i];
        else if (strcmp(argv[i], "--facts") == 0)
            g_facts = true;
        else if (strcmp(argv[i], "--procs") == 0)
            g_proc_facts = true;
        else if (strcmp(argv[i], "--all") == 0)
            g_all = true;
        else if (argv[i][0] == '-' || nmounts == MAX_MOUNTS) {
            fputs("usage: floor [--proc DIR] [--facts] [--procs] [MOUNT...|--all]\n", stderr);
            return 2;
        } else
            mounts[nmounts++] = argv[i];
    }
    if (g_all && nmounts) {
        fputs("floor: --all takes no mounts\n", stderr);
        return 2;
    }
    if (!nmounts && !g_all)
        mounts[nmounts++] = "/dev/shm";
    g_text = malloc(g_text_cap);
    if (!g_text)
        return 1;
    for (int i = 0; i < nmounts; i++) {
        int fd = open(mounts[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            fprintf(stderr, "floor: %s: %s\n", mounts[i], strerror(errno));
            return 1;
        }
        watch(st.st_dev);
        each_entry(fd, g_dents, named_entry, NULL);
        close(fd);
    }
    int proc = open(proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0) {
        fprintf(stderr, "floor: %s: %s\n", proc_dir, strerror(errno));
        return 1;
    }
    if (g_all) {
        struct rlimit rl; /* room to keep every /proc/PID open between passes */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        each_entry(proc, g_proc_dents, pid_entry_all, NULL);
        for (size_t i = 0; i < g_nkept; i++) {
            int piddir = g_kept[i] >= 0 ? g_kept[i]
                                        : openat(proc, g_kept_names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (piddir >= 0)
                holdings(piddir);
        }
    } else
        each_entry(proc, g_proc_dents, pid_entry, NULL);
    close(proc);

    size_t named = 0, hidden = 0, held = 0;
    for (size_t i = 0; i < g_cap; i++) {
        const struct slot *s = &g_tab[i];
        if (!s->used)
            continue;
        named += s->named;
        hidden += !s->named;
        held += s->holders > 0;
    }
    printf("floor: %zu processes, %d mounts, %zu named, %zu hidden, %zu held, %zu fd and %zu map "
           "holders; %zu mount namespaces, %zu pid namespaces reach the mounts",
           g_procs, g_ndevs, named, hidden, held, g_fd_holders, g_map_holders, g_nmntns, g_nreach);
    if (g_proc_facts)
        printf("; %zu holding processes' facts read", g_listed);
    putchar('\n');
    return 0;
}
