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

#include "act/unlinkcheck.h"
#include "collect/walk.h"
#include "model/model.h"

struct unlink_plan {
    struct unlink_target *items;
    size_t n, cap;
    size_t ntry;        /* items without a planning refusal */
    uint64_t bytes;     /* their allocation */
    size_t young;       /* unheld segments left alone: younger than the minimum age */
    size_t live;        /* unheld segments left alone: their creator is alive (a live
                         * job's, a batch in flight) */
    size_t held;        /* segments of a dead creator that a live process holds: kept */
    size_t inflight;    /* held by nobody, creator gone, but younger than orphan_min_age */
    size_t doubtful;    /* held by nobody, but the pid in the name proves nothing here
                         * (a mount shared by pid namespaces, or not shown private) */
    const char *doubt;  /* the mount evidence note of the first doubtful one */
    enum pid_evidence doubtful_evidence; /* and that mount's evidence */
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

void unlink_plan_free(struct unlink_plan *p);

#endif
