/* Segment churn: inotify on the top directory of each watched shm mount
 * (a container's reached through /proc/PID/root), counting the names
 * created and removed there between two looks. The set of watches follows
 * the mounts of the latest scan. */
#ifndef SHMWATCH_SHMNOTIFY_H
#define SHMWATCH_SHMNOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scan;
struct sysroot;

struct shmnotify_watch {
    char id[32];      /* the mount's id ("MAJ:MIN", the node facts') */
    int wd;           /* -1: not watched (it could not be, or it went) */
    uint64_t created, removed; /* since the last shmnotify_take */
    bool seen;        /* in the latest scan (shmnotify_follow's bookkeeping) */
};

struct shmnotify {
    int fd;           /* the inotify instance, -1 when none could be made */
    struct shmnotify_watch *items;
    size_t n, cap;
};

/* 0, or -errno when inotify cannot be used (sn->fd -1: every count is 0). */
int shmnotify_init(struct shmnotify *sn);
/* Watches the mounts of s (reached below sys as the scan read them),
 * drops the watches of mounts s no longer shows. */
void shmnotify_follow(struct shmnotify *sn, const struct scan *s, const struct sysroot *sys);
/* Reads the events waiting on sn->fd (non-blocking) into the counts. */
void shmnotify_read(struct shmnotify *sn);
/* The counts of mount id since the last take, then set to 0; false when the
 * mount is not watched. */
bool shmnotify_take(struct shmnotify *sn, const char *id, uint64_t *created, uint64_t *removed);
void shmnotify_free(struct shmnotify *sn);

#endif
