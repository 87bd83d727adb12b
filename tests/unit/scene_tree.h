/* A recorded system, built at test time from a description under
 * tests/fixtures/scan (the format is in tests/fixtures/scan/README.md): a
 * fake /proc and a fake watched root in a temporary directory, whose files
 * are real files of the test's own file system, so that the scan's stats
 * through fd/ and map_files/ links, and its matching by device number,
 * work on them as on the real thing. What cannot be recorded (the device
 * and inode numbers the file system hands out, the clock, statvfs of that
 * file system, meminfo) the description declares, and scene_normalize
 * puts the declared values in place of the measured ones. */
#ifndef SHMWATCH_TEST_SCENE_TREE_H
#define SHMWATCH_TEST_SCENE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "collect/scan.h"

/* How long before its "now" a scene's machine booted: its processes' start
 * ticks count from then. */
#define SCENE_UPTIME_S 86400

/* A file of the scene: its inode number as the file system gave it, and as
 * the description declares it. */
struct scene_ino {
    ino_t real, declared;
};

/* A process of the scene and its declared effective uid. */
struct scene_uid {
    pid_t pid;
    uid_t uid;
};

struct scene {
    char *tree;          /* the built tree: tree/proc, tree/root */
    char *proc;          /* tree/proc */
    dev_t dev;           /* the device of the tree's file system */
    bool has_device;
    dev_t declared_dev;  /* the watched tmpfs's device as the scene declares it */
    time_t now;          /* the declared time of the scan */
    pid_t watch;         /* the --pid target, 0 for the watcher's own view */
    bool has_statvfs;
    uint64_t size, used, avail; /* declared statvfs of the watched mount */
    bool has_meminfo;
    uint64_t mem_total, mem_available, mem_shmem;
    uid_t owner;         /* declared owner of every file; files_owned: chown'ed to it */
    bool files_owned;
    struct scene_ino *inos;
    size_t ninos, inos_cap;
    struct scene_uid *uids; /* every process's, for scene_normalize without root */
    size_t nuids, uids_cap;
};

/* Builds the scene described in file desc under a new temporary directory.
 * Returns 0, or -1 with a one-line reason in err. */
int scene_build(struct scene *sc, const char *desc, char *err, size_t errlen);

/* Puts the declared values in place of what cannot be recorded: the scan's
 * time and duration, the boot its processes' start ticks count from
 * (SCENE_UPTIME_S before its time), the device of the tree's file system
 * (in the mounts, their ids, the files and the holders), its mounts'
 * statvfs figures, meminfo, every inode number of the tree, and the owner of the files and
 * of the processes' directories (when they could not be chown'ed). Returns
 * 0, or -1 with the reason in err (an inode of the scan no file of the
 * scene has, a mount not on the tree's device or whose statvfs failed). */
int scene_normalize(const struct scene *sc, struct scan *s, char *err, size_t errlen);

/* Removes the tree and frees sc. */
void scene_free(struct scene *sc);

/* Re-indents compact JSON, one member or element per line. */
char *scene_json_pretty(const char *json);

#endif
