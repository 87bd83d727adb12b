/* The root seam: where the system that is watched lives. One small struct of
 * directory fds, opened once (by main, a subcommand or a test) and passed
 * down; every reader below works openat-relative to it and never spells
 * "/proc" or pastes a path prefix into a string. A container's view is the
 * same struct opened on /proc/PID/root; tests open it on fixture trees.
 * (doc/design.md, "The root seam".) */
#ifndef SHMWATCH_SYSROOT_H
#define SHMWATCH_SYSROOT_H

#include <sys/types.h>

struct sysroot {
    int proc;  /* the /proc to read (the host's, or a fixture) */
    int host;  /* the watcher's own root: its mountinfo's mount points (the
                * cgroup hierarchies) are reached below it */
    int root;  /* the watched root: the host's "/" or PID's /proc/PID/root;
                * its shm mounts are listed, and acted in, below it
                * (sysroot_open_below); -1 only from sysroot_open_system,
                * for a root out of reach */
    pid_t pid; /* whose namespaces are watched: 0 for the watcher's own */
    unsigned long long pid_start; /* pid's start time (clock ticks since
                                   * boot) when opened, to refuse a reused
                                   * pid; 0 when pid is 0 */
    /* The running system's /proc only (sysroot_open_system and the views
     * opened from it): a pidfd of the process opened on (> 0; else none),
     * and which (pid, start) it is of. sysroot_pid_alive polls it instead
     * of reading /proc/PID/stat again; a struct whose pid or pid_start is
     * changed by hand is checked by its stat. */
    int pidfd;
    pid_t pidfd_pid;
    unsigned long long pidfd_start;
    int live; /* proc is the /proc of the watcher's own pid namespace */
    /* A pinned view (sysroot_pin) with no fd open: kept closed for want of
     * fds (sysroot_spare), re-opened through via, which outlives it, on
     * each use (sysroot_use). err: why sysroot_pin could not open it
     * (-ESRCH: its process had exited), every use refused with it. */
    const struct sysroot *via;
    int err;
};

/* Opens the three directories (proc, host, root: absolute paths, e.g.
 * "/proc", "/", "/"; tests pass fixture trees). Returns 0 or -errno; on
 * failure r holds no open fd. r->pid is 0. */
int sysroot_open(struct sysroot *r, const char *proc, const char *host, const char *root);

/* The view of process pid, seen through host's /proc: proc and host are
 * duplicated from host, root is host->proc's "PID/root", and pid_start is
 * read from its stat. Returns 0, -ESRCH when pid does not exist (or is a
 * zombie, whose root cannot be opened), or -errno. */
int sysroot_open_pid(struct sysroot *r, const struct sysroot *host, pid_t pid);

/* sysroot_open_pid pinned to start, the start time the caller saw (0:
 * pid's now; another is -ESRCH, the pid being another process's). On
 * failure r still names pid and pid_start, opens nothing, and is refused
 * with that error (sysroot_pid_check: 0 for -ESRCH, else -errno). */
int sysroot_pin(struct sysroot *r, const struct sysroot *host, pid_t pid, unsigned long long start);

/* A pinned view whose fds are past half of the fd limit (sysroot_fd_room:
 * a node of hundreds of containers under a low `ulimit -n`) is closed and
 * kept pinned by (pid, pid_start), re-opened through host (which must
 * outlive it) on each use. Never for a view whose fds a reader uses
 * directly: only through sysroot_use and sysroot_pid_check. */
void sysroot_spare(struct sysroot *r, const struct sysroot *host);

/* The view to read below: r itself (checked to be still its process),
 * or a view kept closed re-opened into *tmp; 0, -ESRCH once the pinned
 * process has exited (or its pid is another's), or -errno. *tmp is always
 * to be closed after (sysroot_close), also when r itself was given. */
int sysroot_use(const struct sysroot *r, struct sysroot *tmp, const struct sysroot **out);

/* The running system: sysroot_open on its proc, "/" and "/" when pid is 0, else
 * sysroot_open_pid(r, that, pid) (the host's fds are closed again): what
 * main, the subcommands and the dashboard watch. Returns 0 or -errno, as
 * those do, except that a pid whose root is refused (EACCES, EPERM:
 * another user's process, watched without privilege) is opened with
 * r->root -1: its proc files are still read, and everything below its root
 * is refused (sysroot_open_below). */
int sysroot_open_system(struct sysroot *r, pid_t pid);

/* Why process pid of the running system could not be opened, from rc
 * (-errno, as sysroot_open_system returns): for -ESRCH, that it is a zombie
 * when /proc shows it as one (it has exited, its parent has not reaped it:
 * its root cannot be opened), else gone; any other, strerror. */
const char *sysroot_pid_why(pid_t pid, int rc, const char *gone);

/* openat below the watched root: the absolute path p (as the watched process
 * sees it) relative to r->root, with flags | O_CLOEXEC; below a watched
 * process's root resolved inside it (open_in_root: an absolute symbolic
 * link on the way never leads to the host's files). -1 with errno EACCES
 * when r->root is -1 (out of reach). */
int sysroot_open_below(const struct sysroot *r, const char *p, int flags);

/* Whether r->pid (if any) is still the process r was opened on: 1 while it
 * is, 0 once it has exited (or is a zombie, or its pid is another
 * process's), -errno when it cannot be told: its stat could not be read
 * for want of fds or memory (EMFILE, ENFILE, ENOMEM) or for another reason
 * than its end. Only 0 may be reported as "exited"; callers refuse
 * to act on both 0 and -errno. A view kept closed is checked through its
 * via's proc. sysroot_pid_alive: the answer is 1 (nothing is ever done on a
 * liveness that is not proven). */
int sysroot_pid_check(const struct sysroot *r);
int sysroot_pid_alive(const struct sysroot *r);
/* sysroot_pid_check as 0 or -errno: 0 while alive, -ESRCH once exited. */
int sysroot_pid_verify(const struct sysroot *r);

/* The start time of pid under procfd (clock ticks since boot, from its
 * stat, 0 on failure): 0, -ESRCH when it does not exist or has exited (a
 * zombie), or -errno. */
int sysroot_start_time(int procfd, pid_t pid, unsigned long long *start);

/* True when every fd r holds is numbered below half of the process's soft
 * fd limit (RLIMIT_NOFILE): fds are handed out lowest first, so a view may
 * then be kept open without starving the reads that follow it (a node of
 * hundreds of containers under `ulimit -n 256`). */
int sysroot_fd_room(const struct sysroot *r);
/* The same for one fd (true for -1): may fd be kept open? */
int fd_in_room(int fd);

/* Closes every fd and empties r as SYSROOT_NONE, but for live (which /proc
 * it was); a closed or zeroed-and-failed struct may be closed again. */
void sysroot_close(struct sysroot *r);

/* How the proc directory is named in a message ("cannot read
 * /proc/self/mountinfo"): the seam holds fds, not the paths they were
 * opened on, so a fixture's proc is named so too. */
const char *sysroot_proc_shown(const struct sysroot *r);

/* The path of an absolute path p relative to a root fd, for openat: p
 * without its leading slashes ("." for "/"). A relative p is returned as
 * it is. */
const char *sysroot_rel(const char *p);

/* The watcher's own pid as r->proc numbers its processes: its "self"
 * link (a /proc of another pid namespace numbers it otherwise, and a
 * fixture's names a process of the fixture); getpid() when the link
 * cannot be read. */
pid_t sysroot_self_pid(const struct sysroot *r);

/* A struct with no fd open (every fd -1, pid 0). A zeroed struct has no
 * pidfd either (only a pidfd above 0 is one). */
#define SYSROOT_NONE ((struct sysroot){.proc = -1, .host = -1, .root = -1, .pidfd = -1})

#endif
