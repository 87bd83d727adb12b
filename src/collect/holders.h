/* Who holds shm inodes: the plain records the scan's walk of fds and maps
 * (pidscan.h, on procfiles.h) collects, every fd entry whose target lies on a watched
 * device and every mapping on such a device. Matching is by device number,
 * never by path text, so unlinked ("(deleted)") segments are found just as
 * named ones are. */
#ifndef SHMWATCH_HOLDERS_H
#define SHMWATCH_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/strpool.h"
#include "util/sysroot.h"
#include "util/warn.h"

struct shm_holder {
    /* Ordered so that the record has no padding: a scan keeps one per fd
     * and mapping on a watched device (thousands), and their pages are a
     * good part of what a snapshot costs (doc/performance.md). */
    pid_t pid;
    int fd;          /* -1: the inode is only mapped by this process */
    uid_t uid;
    bool mapped;     /* the process maps the inode (maps) */
    bool deleted;
    bool stat_ok;    /* size, alloc, uid, mtime come from a stat of the inode (a
                      * mapping-only record of an inode listed or stat'ed by an
                      * earlier record is not stat'ed again) */
    dev_t dev;
    ino_t ino;
    char *path;      /* link or maps target text, " (deleted)" removed; read only
                      * when needed: NULL for an inode of a listed file, or one
                      * an earlier record of the scan already names. Its bytes
                      * are in the list's pool. */
    uint64_t size, alloc;
    int64_t mtime;
    uint64_t map_bytes; /* highest mapped offset+length seen in maps */
};

struct holder_list {
    struct shm_holder *items;
    size_t n, cap;
    /* Pids whose maps show a libtorch library: processes with PyTorch
     * loaded, ascending. */
    pid_t *torch_pids;
    size_t ntorch, torch_cap;
    /* The bytes of every record's path: a scan names a thousand unlinked
     * segments through their holders, which would otherwise be a thousand
     * allocations and frees. */
    struct strpool paths;
    /* The distinct inodes of the records that the listing given to the
     * walk does not have (all of them when it was given none): a bound on
     * the hidden segments, so that the model is sized once. 0 in a list
     * not made by a walk: a hint, never a limit. */
    size_t unlisted;
};

/* True when pid is in hl->torch_pids. */
bool holders_torch_loaded(const struct holder_list *hl, pid_t pid);

void holders_free(struct holder_list *hl);

/* Adds the "permission denied" warning when w->denied grew past denied_before. */
void holders_warn_denied(struct warnings *w, size_t denied_before);

#endif
