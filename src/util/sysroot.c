/* The root seam (sysroot.h): the only place that opens the directories the
 * readers work relative to. */
#include "util/sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/beneath.h"
#include "util/fileio.h"
#include "util/procstat.h"

int sysroot_open(struct sysroot *r, const char *proc, const char *host, const char *root)
{
    *r = SYSROOT_NONE;
    int *fds[3] = {&r->proc, &r->host, &r->root};
    const char *paths[3] = {proc, host, root};
    for (int i = 0; i < 3; i++) {
        *fds[i] = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*fds[i] < 0) {
            int rc = -errno;
            sysroot_close(r);
            return rc;
        }
    }
    return 0;
}

int sysroot_start_time(int procfd, pid_t pid, unsigned long long *start)
{
    struct procstat st;
    int rc = procstat_read(procfd, pid, &st);
    if (rc == 0 && (st.state == 'Z' || st.state == 'X'))
        rc = -ESRCH;
    *start = rc == 0 ? st.start_ticks : 0;
    return rc;
}

/* A pidfd of pid, above the standard fds (0 means none in a zeroed
 * struct); -ESRCH when pid does not exist, another -errno when the kernel
 * has no pidfd_open (before 5.3) or refuses it. */
static int pidfd_of(pid_t pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return -errno;
    if (fd > 2)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    return high < 0 ? -err : high;
}

/* sysroot_open_pid; with root_optional, a root refused (EACCES, EPERM:
 * another user's process) leaves r->root -1 instead of failing.
 * On the running system's /proc the pidfd is opened first: if its process
 * still runs when all is open, the start time and the root read meanwhile
 * were that process's. */
static int open_pid(struct sysroot *r, const struct sysroot *host, pid_t pid, bool root_optional)
{
    *r = SYSROOT_NONE;
    if (pid <= 0)
        return -EINVAL;
    int pidfd = host->live ? pidfd_of(pid) : -ENOSYS;
    if (pidfd == -ESRCH)
        return -ESRCH;
    unsigned long long start;
    int rc = sysroot_start_time(host->proc, pid, &start);
    if (rc < 0)
        goto fail;
    char name[32];
    pid_file_name(name, pid, "root");
    int root = openat(host->proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 && !(root_optional && (errno == EACCES || errno == EPERM))) {
        rc = errno == ENOENT ? -ESRCH : -errno;
        goto fail;
    }
    r->proc = fcntl(host->proc, F_DUPFD_CLOEXEC, 0);
    r->host = fcntl(host->host, F_DUPFD_CLOEXEC, 0);
    r->root = root;
    r->pid = pid;
    r->pid_start = start;
    r->live = host->live;
    if (pidfd >= 0) {
        r->pidfd = pidfd;
        r->pidfd_pid = pid;
        r->pidfd_start = start;
    }
    /* Opened after the start time was read: if the pid was reused in
     * between, the root may be the newcomer's; check again (a check that
     * cannot be made, out of fds say, is that error, not an exit). */
    rc = r->proc < 0 || r->host < 0 ? -errno : sysroot_pid_verify(r);
    if (rc < 0)
        sysroot_close(r);
    return rc;
fail:
    if (pidfd >= 0)
        close(pidfd);
    return rc;
}

int sysroot_open_pid(struct sysroot *r, const struct sysroot *host, pid_t pid)
{
    return open_pid(r, host, pid, false);
}

/* The pid proc's "self" link names, 0 when it cannot be read or is none. */
static pid_t self_link(int proc)
{
    char b[32];
    ssize_t n = proc >= 0 ? readlinkat(proc, "self", b, sizeof(b) - 1) : -1;
    if (n <= 0)
        return 0;
    b[n] = '\0';
    char *end;
    long v = strtol(b, &end, 10);
    return !*end && v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

int sysroot_open_system(struct sysroot *r, pid_t pid)
{
    int rc = sysroot_open(r, "/proc", "/", "/");
    if (rc < 0)
        return rc;
    /* A pidfd names a process of the watcher's own pid namespace: only a
     * /proc that numbers this process as getpid() does is that one. */
    r->live = self_link(r->proc) == getpid();
    if (pid == 0)
        return 0;
    struct sysroot host = *r;
    rc = open_pid(r, &host, pid, true);
    sysroot_close(&host);
    return rc;
}

int sysroot_pin(struct sysroot *r, const struct sysroot *host, pid_t pid, unsigned long long start)
{
    int rc = sysroot_open_pid(r, host, pid);
    if (rc == 0 && start && r->pid_start != start)
        rc = -ESRCH;
    if (rc < 0) {
        sysroot_close(r);
        r->pid = pid;
        r->pid_start = start;
        r->err = rc;
    }
    return rc;
}

void sysroot_spare(struct sysroot *r, const struct sysroot *host)
{
    if (r->root < 0 || sysroot_fd_room(r))
        return;
    pid_t pid = r->pid;
    unsigned long long start = r->pid_start;
    sysroot_close(r);
    r->pid = pid;
    r->pid_start = start;
    r->via = host;
}

int sysroot_use(const struct sysroot *r, struct sysroot *tmp, const struct sysroot **out)
{
    *tmp = SYSROOT_NONE;
    *out = r;
    if (r->via) {
        *out = tmp;
        return sysroot_pin(tmp, r->via, r->pid, r->pid_start);
    }
    return sysroot_pid_verify(r);
}

const char *sysroot_pid_why(pid_t pid, int rc, const char *gone)
{
    if (rc != -ESRCH)
        return strerror(-rc);
    struct procstat st;
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool zombie = proc >= 0 && procstat_read(proc, pid, &st) == 0 && st.state == 'Z';
    if (proc >= 0)
        close(proc);
    if (zombie)
        return "the process is a zombie (it has exited; its parent has not reaped it yet)";
    return gone;
}

int sysroot_open_below(const struct sysroot *r, const char *p, int flags)
{
    if (r->root < 0) {
        errno = EACCES;
        return -1;
    }
    if (r->pid <= 0) /* the watcher's own root: a path as any of its own */
        return openat(r->root, sysroot_rel(p), flags | O_CLOEXEC);
    /* A watched process's root (a container's): resolved as that process
     * would, an absolute symbolic link on the way staying inside its root,
     * never reaching the host's files. */
    int fd = open_in_root(r->root, p, flags);
    if (fd < 0) {
        errno = -fd;
        return -1;
    }
    return fd;
}

int sysroot_pid_check(const struct sysroot *r)
{
    if (r->err)
        return r->err == -ESRCH || r->err == -ENOENT ? 0 : r->err;
    if (r->pid <= 0)
        return 1;
    if (r->pidfd > 0 && r->pidfd_pid == r->pid && r->pidfd_start == r->pid_start) {
        /* Readable once the process has exited (a zombie included). */
        struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
        int n = poll(&p, 1, 0);
        if (n >= 0)
            return n == 0;
    }
    unsigned long long start;
    int rc = sysroot_start_time(r->via ? r->via->proc : r->proc, r->pid, &start);
    if (rc == -ESRCH)
        return 0; /* gone, or a zombie */
    if (rc < 0)
        return rc; /* EMFILE, ENFILE, ENOMEM...: not an end */
    return start == r->pid_start;
}

int sysroot_pid_alive(const struct sysroot *r)
{
    return sysroot_pid_check(r) == 1;
}

int sysroot_pid_verify(const struct sysroot *r)
{
    int live = sysroot_pid_check(r);
    return live == 1 ? 0 : live == 0 ? -ESRCH : live;
}

int fd_in_room(int fd)
{
    struct rlimit lim;
    if (fd < 0 || getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return 1;
    return (rlim_t)fd < lim.rlim_cur / 2;
}

int sysroot_fd_room(const struct sysroot *r)
{
    /* Every fd is below the bound when the highest is: one getrlimit, not
     * four, for each root the node view considers keeping. */
    int fds[4] = {r->proc, r->host, r->root, r->pidfd}, top = -1;
    for (int i = 0; i < 4; i++)
        if (fds[i] > top)
            top = fds[i];
    return fd_in_room(top);
}

void sysroot_close(struct sysroot *r)
{
    int fds[4] = {r->proc, r->host, r->root, r->pidfd > 0 ? r->pidfd : -1};
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    int live = r->live; /* what its /proc was, not an fd: kept */
    *r = SYSROOT_NONE;
    r->live = live;
}

const char *sysroot_proc_shown(const struct sysroot *r)
{
    (void)r;
    return "/proc";
}

pid_t sysroot_self_pid(const struct sysroot *r)
{
    pid_t self = self_link(r->proc);
    return self ? self : getpid();
}

const char *sysroot_rel(const char *p)
{
    while (*p == '/')
        p++;
    return *p ? p : ".";
}
