/* The walk of one process's files on a set of devices: its fd/ entries
 * (one stat each) and its mappings, through PROCMAP_QUERY where the kernel
 * answers it, else through the maps text (procmap.h, mapstext.h), each line
 * of the text rejected on its device field before anything else is parsed.
 *
 * The scan (pidscan.h) and the check before an unlink (holders_find_inodes)
 * share it: there is one walk of a process's fds and file mappings on a set
 * of devices, and one account of what it could not see. */
#ifndef SHMWATCH_PROCFILES_H
#define SHMWATCH_PROCFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Test hook: set, fd targets are stat'ed by it instead of the stat that
 * never waits (it fills *st like fstatat(dirfd, name, st, 0) and returns 0
 * or -1): the tests of the scan watchdog make a scan hang on a stopped FUSE
 * daemon with a plain fstatat, the stat the walk avoids. NULL,
 * the default, in the program; set before any scan starts (the walk's
 * thread reads it). */
typedef int (*procfiles_stat_hook)(int dirfd, const char *name, struct stat *st);
void procfiles_set_test_stat(procfiles_stat_hook stat_fn);

struct procfiles;

/* devs must outlive the procfiles; b (beacon.h, or NULL) is told which fd
 * or mappings the walk is reading. Mappings are read through
 * PROCMAP_QUERY unless procmap_way says the text. The first process that
 * has any file mapping settles it: when the kernel does not know the ioctl
 * (ENOTTY, EINVAL), the text, for that process and every later one. */
struct scan_beacon;
struct procfiles *procfiles_new(const dev_t *devs, size_t ndevs, struct scan_beacon *b);
void procfiles_free(struct procfiles *pf);
/* True once PROCMAP_QUERY has answered; false while reading the text. */
bool procfiles_queried(const struct procfiles *pf);

enum procfile_kind { PROCFILE_FD, PROCFILE_MAP };

/* One fd or one mapping of an inode on one of the devices. Pointers are
 * valid until the next procfiles_next. */
struct procfile {
    enum procfile_kind kind;
    dev_t dev;
    ino_t ino;
    /* PROCFILE_FD */
    int fd;
    const char *fdname;    /* its fd/ entry */
    const struct stat *st; /* the target's stat */
    /* PROCFILE_MAP */
    uint64_t start, end, offset;
    const char *path; /* the maps text's path, " (deleted)" taken off; NULL
                       * through PROCMAP_QUERY (procfiles_name asks for it) */
    bool deleted;     /* path had " (deleted)" */
};

/* What a walk could not see (procfiles_end). */
enum {
    PROCFILES_VANISHED = 1, /* fd/ or maps was gone: the process exited (it holds nothing) */
    PROCFILES_DENIED = 2,   /* fd/, an fd's target or maps was refused (EACCES/EPERM) */
    PROCFILES_FAILED = 4,   /* another error cut the walk short (an fd/ or maps that
                             * cannot be opened or read, a maps text past its bound) */
};

/* Starts the walk of the process whose /proc directory is piddir (which
 * must stay open until procfiles_end): first its fds, then its mappings.
 * The mapping walk also notes whether the process maps a libtorch library
 * (procfiles_torch); each executable file is named once per procfiles. */
void procfiles_begin(struct procfiles *pf, int piddir);
/* The next fd or mapping on one of the devices; false at the end. The fds
 * all come before the mappings. A mapping of inode 0 is never returned. */
bool procfiles_next(struct procfiles *pf, struct procfile *f);
/* The path of the line of this walk's maps text that maps addr, as the
 * kernel wrote it (" (deleted)" kept); NULL without such a text or line,
 * for a line on a watched device, and for a path that is not plain
 * (pidscan_exe). Valid until the next procfiles_name or walk. */
const char *procfiles_text_path(struct procfiles *pf, uint64_t addr);
/* The name of the current item: the fd's link target or the mapping's path
 * (asked of PROCMAP_QUERY when the text did not give it), with " (deleted)"
 * still on; in a buffer of pf the caller may change. NULL when it cannot
 * be read (gone meanwhile). */
char *procfiles_name(struct procfiles *pf, const struct procfile *f);
/* The stat of the current mapping's inode through map_files/ (root only):
 * the inode's own size and allocation, not the mapping's. */
bool procfiles_map_stat(struct procfiles *pf, const struct procfile *f, struct stat *st);
/* Ends the walk (also part-way: a caller may stop early) and returns what it
 * could not see, PROCFILES_* bits; 0 when everything walked was read. */
unsigned procfiles_end(struct procfiles *pf);
/* After a walk that reached its end: does the process map a libtorch
 * library? */
bool procfiles_torch(const struct procfiles *pf);

#endif
