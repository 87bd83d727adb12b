/* Removing segments safely. Every item is re-proven right before its
 * unlinkat: the mount directory is opened without following links, the name
 * is checked with fstatat(AT_SYMLINK_NOFOLLOW) and pinned with
 * openat(O_NOFOLLOW|O_NONBLOCK), it must be the same (device, inode) as
 * scanned, a regular file, not written to since the scan, owned by the
 * caller unless root, and a fresh
 * search of every process's fds and maps must find nobody holding it. Names
 * are bytes: nothing here prints them. */
#ifndef SHMWATCH_UNLINK_H
#define SHMWATCH_UNLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/walk.h"
#include "model/model.h"

struct actlog;
struct actns;

/* A segment chosen for removal, as the scan saw it. */
struct unlink_target {
    char *mount;        /* mount point as the watched process sees it: reached
                         * below the seam's root (sysroot_open_below), or
                         * below ns's root (actns_opendir) */
    size_t mount_index; /* the mount's index in the scan's list */
    char *name;         /* below the mount; raw bytes */
    dev_t dev;
    ino_t ino;
    uid_t uid;
    int64_t mtime;      /* modification time as scanned (whole seconds, as the
                         * model keeps it): a later one means something wrote
                         * to it since, so it is in use */
    uint64_t alloc;
    enum seg_state state;
    char *why;          /* why it is garbage, a sentence */
    const char *refuse; /* set when planning refused it: never touched, reported */
    bool folder;        /* a folder segment (joblib's): removed whole, see unlinkdir.h */
    const struct actns *ns; /* the container it is in (clean --pid, --all), not
                             * owned: mount is reached from its root and the
                             * item refused once it has exited; NULL: the
                             * run's seam (unlink_opts.sys) */
};

struct unlink_plan {
    struct unlink_target *items;
    size_t n, cap;
    size_t ntry;        /* items without a planning refusal */
    uint64_t bytes;     /* their allocation */
    size_t young;       /* unheld segments left alone: younger than the minimum age */
    size_t held;        /* segments of a dead creator that a live process holds: kept */
    size_t inflight;    /* held by nobody, creator gone, but younger than orphan_min_age */
    size_t doubtful;    /* held by nobody, but the pid in the name proves nothing here
                         * (a mount shared by pid namespaces, or not shown private) */
    const char *doubt;  /* the mount evidence note of the first doubtful one */
    enum pid_evidence doubtful_evidence; /* and that mount's evidence */
};

enum unlink_outcome {
    UNLINK_REMOVED,
    UNLINK_WOULD,       /* dry run: every check passed */
    UNLINK_GONE,        /* the name had already disappeared */
    UNLINK_REFUSED,     /* a check failed: left in place */
    UNLINK_FAILED,      /* unlinkat (or opening the mount) failed */
};

struct unlink_result {
    enum unlink_outcome outcome;
    int err;            /* errno behind a failure or refusal, else 0 */
    char reason[320];   /* what happened and why, one sentence */
    bool caveat;        /* REMOVED, but the reason says something went otherwise
                         * than planned (another name keeps the file; the mount's
                         * use did not fall) */
    uint64_t alloc;     /* allocation of the inode when checked */
    uint64_t freed;     /* fall of the mount's used bytes across the unlinkat (statvfs) */
    pid_t holder;       /* REFUSED for being in use: a process that holds it */
};

struct unlink_opts {
    /* The system the plan's scan read (util/sysroot.h): the mounts are
     * opened below its root, the holders searched in its proc; in a --pid
     * view, an item is refused once sysroot_pid_alive says the watched
     * process is gone (its root is then no longer the one scanned). */
    const struct sysroot *sys;
    uid_t uid;            /* the caller's effective uid */
    bool dry_run;         /* check everything, remove nothing, log nothing */
    struct actlog *log;   /* NULL: not logged */
};

/* One pass over a plan, an item at a time (the dashboard shows progress and
 * asks about failures between items). */
struct unlink_run {
    struct unlink_opts o;
    struct unlink_plan *plan;
    size_t next;
    struct inode_query *q;   /* fresh holder search, one per plan item */
    struct holder_blind blind;
    double probed;           /* when the search ran (clock_now) */
    bool probe_valid;
    bool paused;             /* the test hook has run */
    size_t removed, would, gone, refused, failed;
    uint64_t freed;          /* statvfs falls summed */
    uint64_t removed_alloc;  /* allocation removed (dry: that would be) */
};

/* A search older than this is repeated before the next unlink. */
#define UNLINK_PROBE_MAX_AGE_S 0.5

/* Test hook: called once per run, after the scan and before the first
 * check, so that a test can open a segment in that window (the holder
 * search is then repeated). NULL, the default, in the program; the tests
 * set it (tests/helpers/shmwatch_hooked.c for the integration tests). */
void unlink_set_test_pause(void (*pause)(void));

void unlink_begin(struct unlink_run *r, struct unlink_plan *p, const struct unlink_opts *o);
/* Checks and removes (or, dry, only checks) the next item: fills res and
 * *index. Returns false when no item is left. */
bool unlink_step(struct unlink_run *r, struct unlink_result *res, size_t *index);
/* Forces a fresh holder search before the next item (after a pause, e.g. a
 * question to the user). */
void unlink_invalidate(struct unlink_run *r);
void unlink_end(struct unlink_run *r);

/* Why an entry of this type is never removed (the plan's refusal and the
 * re-check's); NULL for a regular file. */
const char *unlink_type_refusal(enum file_type t);

/* The removers' first look at base in dir, never following a link: true
 * with *st filled, or false with res saying "already gone" or why it could
 * not be examined. */
struct stat;
bool unlink_examine(int dir, const char *base, struct stat *st, struct unlink_result *res);

/* Sets res's outcome, errno and reason (a printf format), for the removers
 * (unlink.c, unlinkdir.c). */
void unlink_say(struct unlink_result *res, enum unlink_outcome o, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Whether a search that could not read some processes still proves that
 * nobody holds a file of this owner and mode: false, with the reason in
 * why, when an unread process that can reach the mount (see struct
 * holder_blind) could have opened it. For root any such process refuses.
 * Other callers cannot see root's processes (nor non-dumpable programs)
 * and accept that; they refuse when one of their own processes, or of
 * another user while the mode lets others open the file, was unread. */
bool unlink_blind_ok(const struct holder_blind *b, uid_t caller, uid_t owner, mode_t mode,
                     char *why, size_t n);

const char *unlink_outcome_name(enum unlink_outcome o);

void unlink_plan_free(struct unlink_plan *p);

#endif
