/* The shm mounts to watch: every tmpfs at /dev/shm or /run/shm in a
 * mountinfo file, or exactly the ones the user names, with their statvfs
 * figures. */
#ifndef SHMWATCH_MOUNTS_H
#define SHMWATCH_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "util/sysroot.h"
#include "util/warn.h"

struct shm_mount {
    char *path;   /* mount point as the watched process sees it (absolute): it
                   * is reached below the watched root, openat(sys->root,
                   * sysroot_rel(path)) (util/sysroot.h) */
    char *fstype; /* "tmpfs" normally; "?" when the user named a path not in mountinfo */
    dev_t dev;
    bool stat_ok; /* size, used, avail are valid (else 0) */
    int stat_err; /* else the errno of statvfs */
    uint64_t size, used, avail;
    /* statvfs's f_files and f_ffree: the inodes the tmpfs allows
     * (nr_inodes) and those still free; inodes 0 when it sets no limit.
     * With none free, creating a segment fails with ENOSPC whatever the
     * free bytes. */
    uint64_t inodes, inodes_free;
    bool listed;  /* its directory was read (files_collect): false, no named
                   * segment of it is known, nor what its use is made of */
};

struct mount_list {
    struct shm_mount *items;
    size_t n, cap;
};

/* One parsed line of /proc/PID/mountinfo; the strings point into the line. */
struct mountinfo_entry {
    unsigned id, parent; /* the mount's id and its parent's */
    unsigned major, minor;
    char *root;       /* root of the mount within its filesystem */
    char *mountpoint; /* unescaped (\040 -> space) */
    char *fstype;
    char *super_opts; /* superblock options (a v1 cgroup's controllers); "" if absent */
    bool propagates;  /* an optional field shared:N or master:N: the mount has peers
                       * or a master in other mount namespaces */
};

/* Parses one mountinfo line in place. Returns false for a malformed line.
 * The one parser of the format: every reader of a mountinfo text goes
 * through mountinfo_parse, which calls it. */
bool mountinfo_parse_line(char *line, struct mountinfo_entry *e);

/* A mountinfo file read and parsed once: the entries point into text.
 * Malformed lines are left out, and counted. */
struct mountinfo {
    char *text;
    struct mountinfo_entry *items;
    size_t n, cap;
    size_t malformed;
};

/* Parses a whole mountinfo text in place; mi owns text from then on (a
 * malloc'd string, freed by mountinfo_free). */
void mountinfo_parse(char *text, struct mountinfo *mi);

/* Reads and parses path, relative to dirfd (openat). Returns 0; -EFBIG for
 * a file past READ_TEXT_MAX, mi then holding what its first READ_TEXT_MAX
 * bytes list; or another -errno, mi then empty. mountinfo_free it either
 * way. */
int mountinfo_read(int dirfd, const char *path, struct mountinfo *mi);

/* The rule of a hidden mount: entry i is hidden when another mount is
 * stacked on it at the same path (its parent is entry i and its mount point
 * the same). A path lookup then crosses into the one on top, so nothing
 * (shm_open included) reaches the one below by its path. The order of the
 * lines decides nothing: a mount moved onto a busy point, or slid beneath
 * another (move_mount's MOVE_MOUNT_BENEATH), is listed before or after the
 * one it stacks with. A mount covered by one on a parent directory (a bind
 * over /dev) is not hidden by this rule: its path leads to another file
 * system, which a reader finds by its device. */
bool mountinfo_hidden(const struct mountinfo *mi, size_t i);

/* The entry mounted exactly at mountpoint that is not hidden, or NULL (of
 * several, the last listed). */
const struct mountinfo_entry *mountinfo_find(const struct mountinfo *mi, const char *mountpoint);

void mountinfo_free(struct mountinfo *mi);

/* A mount named by --mount (or the setting mounts), reached below
 * sys->root as mounts_collect reaches it: 0 when it is the root of a tmpfs
 * mount, else -1 with *why saying what it is instead (not there, not a
 * directory, another file system, a directory inside a mount), to free.
 * A root out of reach (sys->root -1) is not judged here: 0. */
int mounts_check_named(const struct sysroot *sys, const char *path, char **why);

/* Collects the shm mounts: tmpfs mounts at /dev/shm or /run/shm in mi (the
 * watched process's mountinfo), or, when extra paths are given, exactly
 * those (absolute) paths. Every mount point is reached below sys->root.
 * Mounts sharing one device are listed once (the first name wins, and a
 * mount point stacked over another keeps only the top one). Problems go
 * to w. */
void mounts_collect(const struct sysroot *sys, const struct mountinfo *mi,
                    const char *const *extra, size_t nextra, struct mount_list *out,
                    struct warnings *w);

/* Refreshes size/used/avail with statvfs only (below sys->root, as
 * collected): the cheap, frequent poll. */
void mounts_refresh(const struct sysroot *sys, struct mount_list *ml);

/* Fills m's size, used and avail from sv (stat_ok true), as mounts_refresh
 * does for each mount it reaches. */
struct statvfs;
void mounts_set_statvfs(struct shm_mount *m, const struct statvfs *sv);
/* m's size unknown (stat_ok false) for err: every figure 0, never a stale one. */
void mounts_set_unknown(struct shm_mount *m, int err);

/* The birth time of the directory at fd, a mount's root: when its tmpfs was
 * made (statx, Linux 5.18+). False when the kernel does not say. */
bool mounts_btime(int fd, struct timespec *btime);

/* Index of the mount with this device, or -1. */
long mounts_find_dev(const struct mount_list *ml, dev_t dev);

void mounts_free(struct mount_list *ml);

#endif
