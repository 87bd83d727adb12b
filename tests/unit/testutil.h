/* Shared includes and helpers of the cmocka unit tests. */
#ifndef SHMWATCH_TESTUTIL_H
#define SHMWATCH_TESTUTIL_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/sysroot.h"

/* fork() for a child that waits until it is killed: it is also killed
 * when the test program ends, so that a failed assertion, which ends the
 * test before its own kill, leaves no child behind. */
static inline pid_t test_fork(void)
{
    pid_t pid = fork();
    if (pid == 0)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    return pid;
}

/* A child of this test that does nothing until it is killed (a process to
 * open views on, or to see exit). */
static inline pid_t paused_child(void)
{
    pid_t child = test_fork();
    assert_true(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    return child;
}

/* An older kernel, for a forked tester: a seccomp filter makes system
 * call nr fail with err, from now on in this process and its children;
 * only when its second argument is arg1 (an ioctl's request), unless arg1
 * is -1. False when the filter cannot be set. */
static inline bool seccomp_refuse(int nr, long long arg1, int err)
{
    struct sock_filter f[6];
    unsigned short n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, arg1 < 0 ? 1 : 3);
    if (arg1 >= 0) {
        f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                              offsetof(struct seccomp_data, args[1]));
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)arg1, 0, 1);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = n, .filter = f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* Whether this process has capability cap (linux/capability.h) in its
 * effective set: root in a container often lacks CAP_SYS_ADMIN and
 * CAP_SYS_PTRACE. */
static inline bool have_cap(int cap)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    return syscall(SYS_capget, &h, d) == 0 && (d[cap / 32].effective & (1u << (cap % 32)));
}

/* Whether this process may follow map_files/ links (stat the file
 * mapped), which the kernel allows only with CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE: its own first file-backed mapping's link,
 * tried. */
static inline bool map_files_readable(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[512], range[64], path[96];
    struct stat st;
    unsigned long ino = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "%63s %*s %*s %*s %lu", range, &ino) == 2 && ino)
            break;
    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "/proc/self/map_files/%s", range);
    return ino && stat(path, &st) == 0;
}

/* The fixtures directory (tests/fixtures), from the FIXTURES variable. */
static inline const char *fixtures_dir(void)
{
    const char *d = getenv("FIXTURES");
    return d ? d : "tests/fixtures";
}

/* A config or theme fixture: tests/fixtures/config/REL, into buf. */
static inline const char *fixture(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/config/%s", fixtures_dir(), rel);
    return buf;
}

/* A file of the source tree (fixtures are at <src>/tests/fixtures). */
static inline const char *source(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/../../%s", fixtures_dir(), rel);
    return buf;
}

/* A root seam on proc (a fixture tree, or the real "/proc") with host
 * and root (NULL: "/"); the test closes it with sysroot_close. */
static inline struct sysroot test_sysroot(const char *proc, const char *root)
{
    struct sysroot r;
    assert_int_equal(sysroot_open(&r, proc, root ? root : "/", root ? root : "/"), 0);
    return r;
}

/* A temporary tree of directories and files that a test builds (a small
 * /proc, a cgroup hierarchy) and removes whole, links not followed. */
struct test_tree {
    char dir[64];   /* its root: /tmp/NAME.XXXXXX */
    char path[512]; /* what tree_path made last */
};

static inline void tree_make(struct test_tree *t, const char *name)
{
    snprintf(t->dir, sizeof(t->dir), "/tmp/%s.XXXXXX", name);
    assert_non_null(mkdtemp(t->dir));
}

/* The path of rel below the tree, in t->path (until the next call). */
static inline const char *tree_path(struct test_tree *t, const char *rel)
{
    snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, rel);
    return t->path;
}

/* The directory rel and those above it below the tree. */
static inline void tree_dir(struct test_tree *t, const char *rel)
{
    tree_path(t, rel);
    for (char *p = t->path + strlen(t->dir) + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            assert_true(mkdir(t->path, 0755) == 0 || errno == EEXIST);
            *p = c;
        }
        if (!*p)
            break;
    }
}

/* The file rel holding text, its directories made as needed. */
static inline void tree_file(struct test_tree *t, const char *rel, const char *text)
{
    const char *slash = strrchr(rel, '/');
    if (slash) {
        char up[256];
        snprintf(up, sizeof(up), "%.*s", (int)(slash - rel), rel);
        tree_dir(t, up);
    }
    FILE *f = fopen(tree_path(t, rel), "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static inline int tree_remove_one_(const char *path, const struct stat *st, int flag,
                                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes the tree and everything in it. */
static inline void tree_remove(struct test_tree *t)
{
    assert_int_equal(nftw(t->dir, tree_remove_one_, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Linux 6.11 or later: PROCMAP_QUERY answers on a maps file. */
static inline bool kernel_has_query(void)
{
    struct utsname u;
    unsigned major = 0, minor = 0;
    return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
           (major > 6 || (major == 6 && minor >= 11));
}

/* Every fd used up (a `ulimit -n` too low for the work): the soft fd limit
 * lowered to 64 and each free fd below it taken, so the next open, dup or
 * pidfd_open fails with EMFILE until fds_unsqueeze. Assert nothing in
 * between: cmocka's own report may need an fd. */
struct fd_squeeze {
    struct rlimit old;
    int fds[64];
    int n;
};

static inline void fds_squeeze(struct fd_squeeze *q)
{
    q->n = 0;
    getrlimit(RLIMIT_NOFILE, &q->old);
    struct rlimit low = q->old;
    low.rlim_cur = 64;
    setrlimit(RLIMIT_NOFILE, &low);
    int fd;
    while (q->n < 64 && (fd = dup(0)) >= 0)
        q->fds[q->n++] = fd;
}

static inline void fds_unsqueeze(struct fd_squeeze *q)
{
    while (q->n > 0)
        close(q->fds[--q->n]);
    setrlimit(RLIMIT_NOFILE, &q->old);
}

#endif
