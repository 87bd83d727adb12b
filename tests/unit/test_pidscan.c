/* The walk of one process's fds and mappings on a set of devices
 * (procfiles, src/collect/procfiles.c), which the scan and the check before an
 * unlink (holders_find_inodes) share: on the fixture tree
 * tests/fixtures/procfiles (maps as text, as on kernels before 6.11), and on real
 * processes, through PROCMAP_QUERY and with the text forced. What a walk
 * could not see is accounted the same way for both: a process that exited
 * holds nothing; a refused fd list, fd target or maps makes the check
 * blind and is counted once per process by the scan. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/holders.h"
#include "collect/pidscan.h"
#include "collect/procfiles.h"
#include "collect/procmap.h"
#include "collect/walk.h"
#include "util/buf.h"
#include "util/fileio.h"

/* ---- The fixture tree ---- */

/* holders_find_inodes (text: with the maps text, as on kernels before
 * 6.11) through a seam opened on proc; no assertion (some callers run in a
 * child). */
static int find_in(const char *proc, struct inode_query *q, size_t n, pid_t skip_pid,
                   struct holder_blind *blind, bool text)
{
    struct sysroot sys;
    int rc = sysroot_open(&sys, proc, "/", "/");
    if (rc < 0)
        return rc;
    procmap_force(text ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY);
    rc = holders_find_inodes(&sys, q, n, skip_pid, blind);
    procmap_force(PROCMAP_WAY_QUERY);
    sysroot_close(&sys);
    return rc;
}

static const char *fixture_proc(char *b, size_t n)
{
    snprintf(b, n, "%s/procfiles/proc", fixtures_dir());
    return b;
}

static struct stat fixture_file(const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof(p), "%s/procfiles/files/%s", fixtures_dir(), name);
    assert_int_equal(stat(p, &st), 0);
    return st;
}

static int open_pid(const char *proc, const char *pid)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", proc, pid);
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    return fd;
}

/* What a walk returned, copied out of procfiles' buffers. */
struct item {
    enum procfile_kind kind;
    dev_t dev;
    ino_t ino;
    int fd;
    uint64_t start, end, offset;
    char path[128]; /* the text's path, or "" */
    char name[256]; /* procfiles_name */
    bool deleted;
};

/* Walks the process at piddir into it[] (at most max, then stops: the
 * walk is ended part-way); returns the count, the status in *status. */
static size_t walk(struct procfiles *pf, int piddir, struct item *it, size_t max, unsigned *status)
{
    size_t n = 0;
    struct procfile f;
    procfiles_begin(pf, piddir);
    while (n < max && procfiles_next(pf, &f)) {
        struct item *x = &it[n++];
        memset(x, 0, sizeof(*x));
        x->kind = f.kind;
        x->dev = f.dev;
        x->ino = f.ino;
        if (f.kind == PROCFILE_FD) {
            x->fd = f.fd;
            assert_int_equal(f.st->st_dev, f.dev);
            assert_int_equal(f.st->st_ino, f.ino);
        } else {
            x->fd = -1;
            x->start = f.start;
            x->end = f.end;
            x->offset = f.offset;
            x->deleted = f.deleted;
            if (f.path)
                snprintf(x->path, sizeof(x->path), "%s", f.path);
        }
        const char *name = procfiles_name(pf, &f);
        if (name)
            snprintf(x->name, sizeof(x->name), "%s", name);
    }
    *status = procfiles_end(pf);
    return n;
}

#define FAKE(minor) makedev(0xab, (minor))

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* pid 100: its two fds on the fixture's device (not the closed one, not the
 * entries that are no fds), then exactly the watched mappings, in order,
 * and nothing it could not see; the same with the text forced. */
static void test_fixture_walk(void **state)
{
    (void)state;
    char proc[512];
    fixture_proc(proc, sizeof(proc));
    struct stat a = fixture_file("a"), b = fixture_file("b");
    assert_int_equal(a.st_dev, b.st_dev);
    assert_true(major(a.st_dev) != 0xab && major(a.st_dev) != 0xfd);
    dev_t devs[] = {FAKE(2), a.st_dev, FAKE(1)};
    int piddir = open_pid(proc, "100");
    for (int text = 0; text < 2; text++) {
        procmap_force(text ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY); /* read by procfiles_new */
        struct procfiles *pf = procfiles_new(devs, 3, NULL);
        procmap_force(PROCMAP_WAY_QUERY);
        struct item it[16];
        unsigned status = 99;
        size_t n = walk(pf, piddir, it, 16, &status);
        assert_int_equal(status, 0);
        assert_false(procfiles_queried(pf)); /* a plain file refuses PROCMAP_QUERY */
        assert_int_equal(n, 6);
        /* fds first, in the directory's order */
        assert_int_equal(it[0].kind, PROCFILE_FD);
        assert_int_equal(it[1].kind, PROCFILE_FD);
        struct item *fa = it[0].fd == 0 ? &it[0] : &it[1], *fb = it[0].fd == 0 ? &it[1] : &it[0];
        assert_int_equal(fa->fd, 0);
        assert_int_equal(fa->ino, a.st_ino);
        assert_true(ends_with(fa->name, "/files/a"));
        assert_int_equal(fb->fd, 1);
        assert_int_equal(fb->ino, b.st_ino);
        assert_int_equal(fb->dev, b.st_dev);
        /* then the mappings on ab:01 and ab:02, in the file's order */
        const struct {
            unsigned minor;
            ino_t ino;
            uint64_t start, end, offset;
            const char *path;
            bool deleted;
        } want[] = {
            {1, 11, 0x7f0000000000, 0x7f0000002000, 0, "/dev/shm/torch_1_1", false},
            {1, 12, 0x7f0000010000, 0x7f0000011000, 0x1000, "/dev/shm/torch_1_2", true},
            {2, 13, 0x7f0000020000, 0x7f0000021000, 0, "/dev/shm/private copy", false},
            {2, 15, 0x7f0000060000, 0x7f0000061000, 0x2000, "/other/no newline", false},
        };
        for (size_t i = 0; i < 4; i++) {
            const struct item *m = &it[2 + i];
            assert_int_equal(m->kind, PROCFILE_MAP);
            assert_int_equal(m->dev, FAKE(want[i].minor));
            assert_int_equal(m->ino, want[i].ino);
            assert_int_equal(m->start, want[i].start);
            assert_int_equal(m->end, want[i].end);
            assert_int_equal(m->offset, want[i].offset);
            assert_string_equal(m->path, want[i].path);
            assert_string_equal(m->name, want[i].path);
            assert_int_equal(m->deleted, want[i].deleted);
        }
        procfiles_free(pf);
    }
    close(piddir);
}

/* The test hook (procfiles_set_test_stat) stats every fd target in place
 * of the stat that never waits, and the walk finds the same fds by it. */
static int hook_calls;

static int counting_stat(int dirfd, const char *name, struct stat *st)
{
    hook_calls++;
    return fstatat(dirfd, name, st, 0);
}

static void test_stat_hook(void **state)
{
    (void)state;
    char proc[512];
    fixture_proc(proc, sizeof(proc));
    struct stat a = fixture_file("a");
    int piddir = open_pid(proc, "100");
    struct item it[16];
    unsigned status;
    size_t fds[2] = {0, 0};
    for (int hooked = 0; hooked < 2; hooked++) {
        hook_calls = 0;
        procfiles_set_test_stat(hooked ? counting_stat : NULL);
        struct procfiles *pf = procfiles_new(&a.st_dev, 1, NULL);
        size_t n = walk(pf, piddir, it, 16, &status);
        procfiles_free(pf);
        for (size_t i = 0; i < n; i++)
            fds[hooked] += it[i].kind == PROCFILE_FD;
        if (hooked)
            assert_true(hook_calls >= (int)fds[1]);
        else
            assert_int_equal(hook_calls, 0);
    }
    procfiles_set_test_stat(NULL);
    assert_int_equal(fds[0], 2);
    assert_int_equal(fds[1], 2);
    close(piddir);
}

/* Only the devices asked for: without the fixture's device no fd is
 * returned; a device of no line, nothing at all; and so with many devices. */
static void test_fixture_devices(void **state)
{
    (void)state;
    char proc[512];
    fixture_proc(proc, sizeof(proc));
    int piddir = open_pid(proc, "100");
    dev_t only3 = FAKE(3), none = FAKE(7);
    struct item it[16];
    unsigned status;
    struct procfiles *pf = procfiles_new(&only3, 1, NULL);
    assert_int_equal(walk(pf, piddir, it, 16, &status), 1);
    assert_int_equal(it[0].kind, PROCFILE_MAP);
    assert_int_equal(it[0].ino, 14);
    procfiles_free(pf);
    pf = procfiles_new(&none, 1, NULL);
    assert_int_equal(walk(pf, piddir, it, 16, &status), 0);
    assert_int_equal(status, 0);
    procfiles_free(pf);
    /* A node's many devices (--all): the same answers, whether the device
     * asked for is among a few others or among hundreds. */
    dev_t many[300];
    for (size_t n = 2; n <= 300; n += 298) {
        for (size_t i = 0; i < n; i++)
            many[i] = makedev(0xcd, (unsigned)i); /* on no line of the fixture */
        many[n / 2] = only3;
        pf = procfiles_new(many, n, NULL);
        assert_int_equal(walk(pf, piddir, it, 16, &status), 1);
        assert_int_equal(it[0].ino, 14);
        procfiles_free(pf);
        many[n / 2] = none;
        pf = procfiles_new(many, n, NULL);
        assert_int_equal(walk(pf, piddir, it, 16, &status), 0);
        procfiles_free(pf);
    }
    close(piddir);
}

/* A walk ended part-way closes what it opened, and the next one starts
 * afresh; a process without fd/ has exited (vanished), and one without fd/
 * and maps returns nothing. */
static void test_fixture_partial_and_vanished(void **state)
{
    (void)state;
    char proc[512];
    fixture_proc(proc, sizeof(proc));
    struct stat a = fixture_file("a");
    dev_t devs[] = {a.st_dev, FAKE(1), FAKE(2), FAKE(9)};
    struct procfiles *pf = procfiles_new(devs, 4, NULL);
    struct item it[16];
    unsigned status;
    int p100 = open_pid(proc, "100"), p200 = open_pid(proc, "200"), p300 = open_pid(proc, "300");
    assert_int_equal(walk(pf, p100, it, 1, &status), 1);
    assert_int_equal(status, 0);
    assert_int_equal(walk(pf, p100, it, 3, &status), 3);
    assert_int_equal(it[2].kind, PROCFILE_MAP); /* past the fds, into the mappings */
    assert_int_equal(walk(pf, p100, it, 16, &status), 6);

    assert_int_equal(walk(pf, p200, it, 16, &status), 1);
    assert_int_equal(status, PROCFILES_VANISHED);
    assert_int_equal(it[0].dev, FAKE(9));
    assert_int_equal(it[0].ino, 19);
    assert_true(it[0].deleted);
    assert_int_equal(walk(pf, p300, it, 16, &status), 0);
    assert_int_equal(status, PROCFILES_VANISHED);
    procfiles_free(pf);

    /* The scan counts a process that exited once, not once per file. */
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct pidscan *ps = pidscan_new(devs, 4, NULL, &hl, &w, NULL);
    assert_int_equal(pidscan_run(ps, p300, 300), 0);
    assert_int_equal(w.vanished, 1);
    assert_int_equal(pidscan_run(ps, p200, 200), 1);
    assert_int_equal(w.vanished, 2);
    assert_int_equal(w.denied, 0);
    pidscan_free(ps);
    holders_free(&hl);
    warn_free(&w);
    close(p100);
    close(p200);
    close(p300);
}

/* The check before an unlink on the fixture: a holder by fd, by a
 * MAP_PRIVATE mapping, and one on the last of ten devices (the mountinfo
 * comparison stops at eight; the search must not); the processes that
 * exited are not blind. Both ways of reading maps. */
static void test_fixture_find_inodes(void **state)
{
    (void)state;
    char proc[512];
    fixture_proc(proc, sizeof(proc));
    struct stat a = fixture_file("a"), b = fixture_file("b");
    struct inode_query q[11];
    memset(q, 0, sizeof(q));
    q[0].dev = a.st_dev, q[0].ino = a.st_ino;
    for (unsigned i = 1; i <= 8; i++)
        q[i].dev = FAKE(i), q[i].ino = 90 + i; /* held by nobody */
    q[2].ino = 13;                             /* ab:02 13: MAP_PRIVATE in pid 100 */
    q[9].dev = FAKE(9), q[9].ino = 19;         /* the tenth device: pid 200 */
    q[10].dev = b.st_dev, q[10].ino = b.st_ino;
    for (int text = 0; text < 2; text++) {
        struct holder_blind blind;
        int rc = text ? find_in(proc, q, 11, 0, &blind, true)
                      : find_in(proc, q, 11, 0, &blind, false);
        assert_int_equal(rc, 0);
        assert_int_equal(q[0].pid, 100);
        assert_int_equal(q[0].fd, 0);
        assert_int_equal(q[2].pid, 100);
        assert_int_equal(q[2].fd, -1);
        assert_int_equal(q[9].pid, 200);
        assert_int_equal(q[9].fd, -1);
        assert_int_equal(q[10].pid, 100);
        assert_int_equal(q[10].fd, 1);
        for (int i = 1; i <= 8; i++)
            if (i != 2)
                assert_int_equal(q[i].pid, 0);
        assert_int_equal(blind.denied, 0);
    }
}

/* ---- Refused: a tree whose fd targets and maps uid 65534 may not read ---- */

static void put(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(chmod(path, mode), 0);
}

static void mkdir_mode(const char *path, mode_t mode)
{
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* The checks run as uid 65534; each failed one sets a bit of the exit status. */
static int denied_checks(const char *root, dev_t dev, ino_t ino)
{
    int bad = 0;
    char proc[256], p[300];
    snprintf(proc, sizeof(proc), "%s/proc", root);
    snprintf(p, sizeof(p), "%s/100", proc);
    int p100 = open(p, O_RDONLY | O_DIRECTORY);
    snprintf(p, sizeof(p), "%s/200", proc);
    int p200 = open(p, O_RDONLY | O_DIRECTORY);
    if (p100 < 0 || p200 < 0)
        return 1;
    /* pid 100: its fd list is readable, its fd 3's target is not, but its
     * link is (the refusal is the target's own, fd by fd): fd 4 is still
     * found. */
    struct procfiles *pf = procfiles_new(&dev, 1, NULL);
    struct procfile f;
    int found = 0;
    procfiles_begin(pf, p100);
    while (procfiles_next(pf, &f))
        found = f.kind == PROCFILE_FD && f.fd == 4 && !found ? 1 : -1;
    if (found != 1)
        bad |= 2;
    if (procfiles_end(pf) != PROCFILES_DENIED)
        bad |= 4;
    procfiles_begin(pf, p200);
    while (procfiles_next(pf, &f))
        bad |= 2;
    if (procfiles_end(pf) != PROCFILES_DENIED)
        bad |= 4;
    procfiles_free(pf);
    /* The check before an unlink cannot prove the inode free: both blind. */
    struct inode_query q = {.dev = dev, .ino = ino};
    struct holder_blind blind;
    if (find_in(proc, &q, 1, 0, &blind, false) != 0 || q.pid != 0 || blind.denied != 2 ||
        blind.unreachable != 0 || blind.nuids != 1 || blind.uids[0] != 0)
        bad |= 8;
    /* The scan counts each once: 100 for its fd target, 200 once although
     * both its fd list and its maps were refused. */
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct pidscan *ps = pidscan_new(&dev, 1, NULL, &hl, &w, NULL);
    pidscan_run(ps, p100, 100);
    if (w.denied != 1 || hl.n != 1)
        bad |= 16;
    pidscan_run(ps, p200, 200);
    if (w.denied != 2 || w.vanished != 0 || hl.n != 1)
        bad |= 32;
    pidscan_free(ps);
    holders_free(&hl);
    warn_free(&w);
    close(p100);
    close(p200);
    return bad;
}

static void test_denied(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* it makes files another user may not read */
    char root[] = "/tmp/shmwatch-pidscan-XXXXXX", p[128];
    assert_non_null(mkdtemp(root));
    assert_int_equal(chmod(root, 0755), 0);
    snprintf(p, sizeof(p), "%s/private", root);
    mkdir_mode(p, 0700);
    snprintf(p, sizeof(p), "%s/private/seg", root);
    put(p, "x", 0644);
    struct stat seg;
    assert_int_equal(stat(p, &seg), 0);
    const char *dirs[] = {"proc", "proc/100", "proc/100/fd", "proc/200"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
        mkdir_mode(p, 0755);
    }
    snprintf(p, sizeof(p), "%s/proc/200/fd", root);
    mkdir_mode(p, 0700);
    char target[128], stat_line[] = "1 (python3) S 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 "
                                    "100 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 "
                                    "0 0 0 0 0\n";
    snprintf(target, sizeof(target), "%s/private/seg", root);
    snprintf(p, sizeof(p), "%s/proc/100/fd/3", root);
    assert_int_equal(symlink(target, p), 0);
    snprintf(p, sizeof(p), "%s/open", root); /* a readable file on the same device */
    mkdir_mode(p, 0755);
    snprintf(target, sizeof(target), "%s/open/seg", root);
    put(target, "y", 0644);
    snprintf(p, sizeof(p), "%s/proc/100/fd/4", root);
    assert_int_equal(symlink(target, p), 0);
    snprintf(p, sizeof(p), "%s/proc/100/maps", root);
    put(p, "", 0644);
    snprintf(p, sizeof(p), "%s/proc/200/maps", root);
    put(p, "", 0600);
    for (int pid = 100; pid <= 200; pid += 100) {
        snprintf(p, sizeof(p), "%s/proc/%d/stat", root, pid);
        put(p, stat_line, 0644);
    }
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(64);
        _exit(denied_checks(root, seg.st_dev, seg.st_ino));
    }
    int ws;
    assert_int_equal(waitpid(child, &ws, 0), child);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) != 0)
        fprintf(stderr, "# denied checks failed: 0x%x\n", WEXITSTATUS(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

/* Root without a capability the target process has (CAP_SYS_PTRACE here),
 * as a container's watcher is towards the host's init: the target's fd
 * list is readable, each link is refused by the kernel's ptrace check, for
 * the whole process. The walk says so after one fd instead of asking of
 * every fd twice. A walker child drops the capability; the target is
 * this test program, with more fds than one. */
static int refused_walk(pid_t target)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 64;
    d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    d[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
    if (syscall(SYS_capset, &h, d) != 0)
        return 65;
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d", (int)target);
    int piddir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (piddir < 0)
        return 66;
    char c;
    if (readlinkat(piddir, "fd/0", &c, 1) >= 0 || errno != EACCES)
        return 67; /* the kernel lets this walker read the links: nothing to test */
    struct stat me;
    if (fstat(piddir, &me) != 0)
        return 68;
    hook_calls = 0;
    procfiles_set_test_stat(counting_stat);
    struct procfiles *pf = procfiles_new(&me.st_dev, 1, NULL);
    struct procfile f;
    int bad = 0;
    procfiles_begin(pf, piddir);
    while (procfiles_next(pf, &f))
        if (f.kind == PROCFILE_FD)
            bad |= 1;
    if (!(procfiles_end(pf) & PROCFILES_DENIED))
        bad |= 2;
    if (hook_calls != 1)
        bad |= 4;
    procfiles_free(pf);
    return bad;
}

static void test_links_refused(void **state)
{
    (void)state;
    if (geteuid() != 0 || !have_cap(CAP_SYS_PTRACE)) {
        fprintf(stderr, "# skipped: needs root with CAP_SYS_PTRACE\n");
        skip();
    }
    int extra[4];
    for (int i = 0; i < 4; i++)
        assert_true((extra[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
    pid_t me = getpid(), child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(refused_walk(me));
    int ws;
    assert_int_equal(waitpid(child, &ws, 0), child);
    for (int i = 0; i < 4; i++)
        close(extra[i]);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) != 0)
        fprintf(stderr, "# refused walk failed: %d\n", WEXITSTATUS(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

/* ---- Real processes: PROCMAP_QUERY, and the text forced ---- */

/* Files in a private directory under /tmp: one held by fd, one mapped
 * shared at an offset, one mapped MAP_PRIVATE with its fd closed and its
 * name removed. */
struct real {
    char dir[64];
    dev_t dev;
    ino_t by_fd, shared, private;
    int fd;
    void *shared_map, *private_map;
};

static ino_t make(struct real *r, const char *name, size_t size, int *keep)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", r->dir, name);
    int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    r->dev = st.st_dev;
    *keep = fd;
    return st.st_ino;
}

static int real_setup(void **state)
{
    struct real *r = calloc(1, sizeof(*r));
    snprintf(r->dir, sizeof(r->dir), "/tmp/shmwatch-pidscan-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    int fd;
    r->by_fd = make(r, "by_fd", 4096, &r->fd);
    r->shared = make(r, "shared", 8192, &fd);
    r->shared_map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
    close(fd);
    r->private = make(r, "private", 4096, &fd);
    r->private_map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(r->shared_map != MAP_FAILED && r->private_map != MAP_FAILED);
    char path[128];
    snprintf(path, sizeof(path), "%s/private", r->dir);
    assert_int_equal(unlink(path), 0);
    *state = r;
    return 0;
}

static int real_teardown(void **state)
{
    struct real *r = *state;
    munmap(r->shared_map, 4096);
    munmap(r->private_map, 4096);
    close(r->fd);
    char path[128];
    snprintf(path, sizeof(path), "%s/by_fd", r->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/shared", r->dir);
    unlink(path);
    rmdir(r->dir);
    free(r);
    return 0;
}

static const struct item *find_item(const struct item *it, size_t n, ino_t ino)
{
    for (size_t i = 0; i < n; i++)
        if (it[i].ino == ino)
            return &it[i];
    return NULL;
}

/* This process, both ways: its fd, its shared mapping at an offset and its
 * MAP_PRIVATE one, with names and map_files/ stats; PROCMAP_QUERY answers
 * on a kernel that has it, and is not asked when the text is forced. */
static void test_self_both_ways(void **state)
{
    struct real *r = *state;
    int piddir = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(piddir >= 0);
    for (int text = 0; text < 2; text++) {
        procmap_force(text ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY); /* read by procfiles_new */
        struct procfiles *pf = procfiles_new(&r->dev, 1, NULL);
        procmap_force(PROCMAP_WAY_QUERY);
        struct item it[64];
        unsigned status;
        size_t n = walk(pf, piddir, it, 64, &status);
        assert_int_equal(status, 0);
        assert_int_equal(procfiles_queried(pf), !text && kernel_has_query());
        assert_true(n >= 3 && n < 64); /* the program's own files share /tmp's device */
        const struct item *x = find_item(it, n, r->by_fd);
        assert_non_null(x);
        assert_int_equal(x->kind, PROCFILE_FD);
        assert_int_equal(x->fd, r->fd);
        assert_true(ends_with(x->name, "/by_fd"));
        x = find_item(it, n, r->shared);
        assert_non_null(x);
        assert_int_equal(x->kind, PROCFILE_MAP);
        assert_int_equal(x->start, (uintptr_t)r->shared_map);
        assert_int_equal(x->end - x->start, 4096);
        assert_int_equal(x->offset, 4096);
        assert_true(ends_with(x->name, "/shared"));
        x = find_item(it, n, r->private);
        assert_non_null(x);
        assert_int_equal(x->kind, PROCFILE_MAP);
        if (text) { /* the text gives the path with " (deleted)" taken off */
            assert_true(x->deleted);
            assert_true(ends_with(x->path, "/private"));
        } else { /* PROCMAP_QUERY gives none; asked for, it has the suffix */
            assert_string_equal(x->path, "");
            assert_true(ends_with(x->name, "/private (deleted)"));
        }
        if (map_files_readable()) {
            struct procfile f;
            procfiles_begin(pf, piddir);
            size_t stats = 0;
            while (procfiles_next(pf, &f)) {
                struct stat st;
                if (f.kind == PROCFILE_MAP && (f.ino == r->shared || f.ino == r->private)) {
                    assert_true(procfiles_map_stat(pf, &f, &st));
                    assert_int_equal(st.st_size, f.ino == r->shared ? 8192 : 4096);
                    stats++;
                }
            }
            assert_int_equal(procfiles_end(pf), 0);
            assert_int_equal(stats, 2);
        }
        procfiles_free(pf);
    }
    close(piddir);
}

/* On a kernel that does not know PROCMAP_QUERY (the ioctl refused with
 * ENOTTY, as before Linux 6.11, in a child): the first walk's probe turns
 * it to the maps text, which finds the same mappings with their paths, and
 * the next walk of the same procfiles reads the text at once. The child's
 * exit status is the first check that failed. */
static int refused_query_walks(const struct real *r, int piddir)
{
    if (!seccomp_refuse(SYS_ioctl, (uint32_t)PROCMAP_QUERY_IOCTL, ENOTTY))
        return 1;
    struct procfiles *pf = procfiles_new(&r->dev, 1, NULL);
    for (int round = 0; round < 2; round++) {
        struct item it[64];
        unsigned status;
        size_t n = walk(pf, piddir, it, 64, &status);
        if (status != 0 || procfiles_queried(pf))
            return 2;
        const struct item *x = find_item(it, n, r->shared);
        if (!x || x->kind != PROCFILE_MAP || !ends_with(x->path, "/shared"))
            return 3;
        x = find_item(it, n, r->private);
        if (!x || !x->deleted || !ends_with(x->path, "/private"))
            return 4;
    }
    procfiles_free(pf);
    return 0;
}

static void test_query_refused(void **state)
{
    struct real *r = *state;
    int piddir = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(piddir >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(refused_query_walks(r, piddir));
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    close(piddir);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    /* Here, the kernel's own answer decides. */
    struct procfiles *pf = procfiles_new(&r->dev, 1, NULL);
    piddir = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct item it[64];
    unsigned status;
    walk(pf, piddir, it, 64, &status);
    assert_int_equal(status, 0);
    assert_int_equal(procfiles_queried(pf), kernel_has_query());
    close(piddir);
    procfiles_free(pf);
}

/* A child that runs fn(arg) and then waits for the parent to close the
 * pipe; ready once it has written a byte. It first lets go of what it
 * inherited of r (the parent's fd and mappings). */
struct kid {
    pid_t pid;
    int release; /* the parent's end: closed to let the child go */
};

static struct kid spawn(const struct real *r, void (*fn)(void *), void *arg)
{
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    fflush(NULL);
    struct kid k = {.pid = fork()};
    assert_true(k.pid >= 0);
    if (k.pid == 0) {
        close(ready[0]);
        close(go[1]);
        if (r) {
            munmap(r->shared_map, 4096);
            munmap(r->private_map, 4096);
            close(r->fd);
        }
        fn(arg);
        char c = 1, d;
        if (write(ready[1], &c, 1) != 1)
            _exit(1);
        while (read(go[0], &d, 1) > 0)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    k.release = go[1];
    return k;
}

static void reap(struct kid *k)
{
    close(k->release);
    int ws;
    waitpid(k->pid, &ws, 0);
}

/* In the child: only a MAP_PRIVATE mapping of a file (no fd). */
static void map_private(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        _exit(1);
    close(fd);
}

/* The check before an unlink finds a child holding the file only through a
 * MAP_PRIVATE mapping, both ways; a file nobody holds stays free. */
static void test_find_private_mapping(void **state)
{
    struct real *r = *state;
    char path[128];
    snprintf(path, sizeof(path), "%s/shared", r->dir);
    struct kid k = spawn(r, map_private, path);
    struct inode_query q[2] = {{.dev = r->dev, .ino = r->shared}, {.dev = r->dev, .ino = r->by_fd}};
    for (int text = 0; text < 2; text++) {
        struct holder_blind blind;
        int rc = text ? find_in("/proc", q, 2, getpid(), &blind, true)
                      : find_in("/proc", q, 2, getpid(), &blind, false);
        assert_int_equal(rc, 0);
        assert_int_equal(q[0].pid, k.pid);
        assert_int_equal(q[0].fd, -1);
        assert_int_equal(q[1].pid, 0); /* only this process (skipped) holds it */
    }
    reap(&k);
}

/* In the grandchild, pid 1 of a new pid namespace: an fd on the file. */
static void hold_in_pidns(void *arg)
{
    const char *path = arg;
    int fd = open(path, O_RDONLY);
    (void)fd;
    if (fd < 0)
        _exit(1);
}

static void new_pidns(void *arg)
{
    if (unshare(CLONE_NEWPID) != 0)
        _exit(2);
    /* Pid 1 there; it goes when this child exits and closes its release. */
    struct kid g = spawn(NULL, hold_in_pidns, arg);
    (void)g;
}

/* A holder in another pid namespace is found by its pid here. */
static void test_find_other_pidns(void **state)
{
    struct real *r = *state;
    if (!have_cap(CAP_SYS_ADMIN)) {
        fprintf(stderr, "# skipped: a new pid namespace needs CAP_SYS_ADMIN\n");
        skip();
    }
    char path[128];
    snprintf(path, sizeof(path), "%s/shared", r->dir);
    struct kid k = spawn(r, new_pidns, path);
    struct inode_query q = {.dev = r->dev, .ino = r->shared};
    struct holder_blind blind;
    assert_int_equal(find_in("/proc", &q, 1, getpid(), &blind, false), 0);
    assert_true(q.pid > 0);
    assert_true(q.pid != k.pid && q.pid != getpid());
    assert_true(q.fd >= 0);
    char status[64];
    snprintf(status, sizeof(status), "/proc/%d/status", (int)q.pid);
    struct buf b;
    buf_init(&b);
    assert_int_equal(read_file(status, &b, 1 << 16), 0);
    char *ns = strstr(b.data, "NSpid:");
    assert_non_null(ns);
    assert_non_null(strstr(ns, "\t1\n")); /* pid 1 in its own namespace */
    buf_free(&b);
    reap(&k);
}

static void hold_two(void *arg)
{
    const char *path = arg;
    if (open(path, O_RDONLY) < 0 || open(path, O_RDONLY) < 0)
        _exit(1);
}

/* A process that exits in the middle of the walk: the rest is gone, not
 * refused; it holds nothing any more, so nothing is blind. */
static void test_vanishes_mid_walk(void **state)
{
    struct real *r = *state;
    char path[128];
    snprintf(path, sizeof(path), "%s/by_fd", r->dir);
    struct kid k = spawn(r, hold_two, path);
    char p[32];
    snprintf(p, sizeof(p), "/proc/%d", (int)k.pid);
    int piddir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(piddir >= 0);
    struct procfiles *pf = procfiles_new(&r->dev, 1, NULL);
    struct procfile f;
    procfiles_begin(pf, piddir);
    assert_true(procfiles_next(pf, &f));
    assert_int_equal(f.kind, PROCFILE_FD);
    kill(k.pid, SIGKILL);
    reap(&k);
    while (procfiles_next(pf, &f))
        ;
    assert_int_equal(procfiles_end(pf), PROCFILES_VANISHED);
    /* From the start: fd/ is gone. */
    procfiles_begin(pf, piddir);
    assert_false(procfiles_next(pf, &f));
    assert_int_equal(procfiles_end(pf), PROCFILES_VANISHED);
    procfiles_free(pf);
    close(piddir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_walk),
        cmocka_unit_test(test_fixture_devices),
        cmocka_unit_test(test_stat_hook),
        cmocka_unit_test(test_fixture_partial_and_vanished),
        cmocka_unit_test(test_fixture_find_inodes),
        cmocka_unit_test(test_denied),
        cmocka_unit_test(test_links_refused),
        cmocka_unit_test_setup_teardown(test_self_both_ways, real_setup, real_teardown),
        cmocka_unit_test_setup_teardown(test_query_refused, real_setup, real_teardown),
        cmocka_unit_test_setup_teardown(test_find_private_mapping, real_setup, real_teardown),
        cmocka_unit_test_setup_teardown(test_find_other_pidns, real_setup, real_teardown),
        cmocka_unit_test_setup_teardown(test_vanishes_mid_walk, real_setup, real_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
