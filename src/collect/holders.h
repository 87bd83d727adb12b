/* Who holds shm inodes (the records walk.c and pidscan.c collect, and the
 * check before an unlink): every /proc/PID/fd entry whose target lies on a
 * watched device, and every /proc/PID/maps line on such a device. Matching
 * is by device number, never by path text, so unlinked ("(deleted)")
 * segments are found just as named ones are. */
#ifndef SHMWATCH_HOLDERS_H
#define SHMWATCH_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/sysroot.h"
#include "util/warn.h"

struct shm_holder {
    pid_t pid;
    int fd;          /* -1: the inode is only mapped by this process */
    bool mapped;     /* the process maps the inode (maps) */
    dev_t dev;
    ino_t ino;
    char *path;      /* link or maps target text, " (deleted)" removed; read only
                      * when needed: NULL for an inode of a listed file, or one
                      * an earlier record of the scan already names */
    bool deleted;
    bool stat_ok;    /* size, alloc, uid, mtime come from a stat of the inode (a
                      * mapping-only record of an inode listed or stat'ed by an
                      * earlier record is not stat'ed again) */
    uint64_t size, alloc;
    uid_t uid;
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
};

/* True when pid is in hl->torch_pids. */
bool holders_torch_loaded(const struct holder_list *hl, pid_t pid);

/* One parsed /proc/PID/maps line; path points into the line ("" if none). */
struct maps_entry {
    uint64_t start, end, offset;
    unsigned major, minor;
    uint64_t inode;
    char *path;
    bool deleted;
};

/* Parses a maps line in place. Returns false for a malformed line. */
bool maps_parse_line(char *line, struct maps_entry *e);

/* Splits " (deleted)" off a link or maps target in place; true if it was there. */
bool strip_deleted(char *path);

/* The pids worth scanning in the proc directory proc_dirfd (numeric
 * entries, listed through an open of its own), into *pids, ascending. */
size_t proc_list_pids(int proc_dirfd, pid_t **pids, size_t *cap);

void holders_free(struct holder_list *hl);

/* Adds the "permission denied" warning when w->denied grew past denied_before. */
void holders_warn_denied(struct warnings *w, size_t denied_before);

/* One inode asked about by holders_find_inodes, and the first holder found. */
struct inode_query {
    dev_t dev;
    ino_t ino;
    pid_t pid;       /* out: a process that holds it, 0 for none */
    int fd;          /* out: its fd, or -1 when it only maps the inode */
};

/* What a holder search could not see: processes whose fds or maps could
 * not be read. Those whose mount namespace shows none of the searched
 * devices (their mountinfo lists no such mount) cannot open the files by
 * name and are only counted; the owners of the others are kept. */
struct holder_blind {
    size_t denied;      /* processes not fully read */
    size_t unreachable; /* of those, ones whose mounts do not include the devices */
    uid_t uids[8];      /* owners (as /proc/PID shows) of the others, distinct */
    size_t nuids;
    bool more_uids;     /* more owners than fit in uids */
};

/* The check right before an unlink: one pass over sys->proc that looks for
 * exactly these inodes in every process's fds and maps (skip_pid, the
 * caller, excepted), stopping early once each is found held. It reads them
 * as the scan does (procfiles, pidscan.h), but every process whose fd list,
 * an fd's target or maps could not be read is blind: a holder it hides
 * would be missed. Returns 0, or -errno when sys->proc cannot be listed. */
int holders_find_inodes(const struct sysroot *sys, struct inode_query *q, size_t n,
                        pid_t skip_pid, struct holder_blind *blind);
/* The same with the maps text instead of PROCMAP_QUERY, as on kernels
 * before 6.11 (tests of the fallback). */
int holders_find_inodes_text(const struct sysroot *sys, struct inode_query *q, size_t n,
                             pid_t skip_pid, struct holder_blind *blind);

#endif
