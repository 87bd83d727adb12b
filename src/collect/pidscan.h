/* One process's holders of the watched devices: its fd/ entries (one stat
 * each) and its mappings, through PROCMAP_QUERY where the kernel answers
 * it, else through the maps text (procmap.h), each line of the text
 * rejected on its device field before anything else is parsed.
 * A holder's name (a readlink, or a mapping's path) and the stat of a
 * mapped-only inode are taken once per inode per scan, and never for inodes
 * the mount listing already has: the model takes those from the listing.
 *
 * The reading itself (struct procfiles) is shared with the check before an
 * unlink (holders_find_inodes): there is one walk of a process's fds and
 * file mappings on a set of devices, and one account of what it could not
 * see. */
#ifndef SHMWATCH_PIDSCAN_H
#define SHMWATCH_PIDSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/holders.h"
#include "util/warn.h"

/* ---- The walk of one process's files on a set of devices ---- */

/* Test hook: set, fd targets are stat'ed by it instead of the stat that
 * never waits (it fills *st like fstatat(dirfd, name, st, 0) and returns 0
 * or -1): the tests of the scan watchdog make a scan hang on a stopped FUSE
 * daemon with a plain fstatat, as before the walk learnt not to wait. NULL,
 * the default, in the program; set before any scan starts (the walk's
 * thread reads it). */
typedef int (*procfiles_stat_hook)(int dirfd, const char *name, struct stat *st);
void procfiles_set_test_stat(procfiles_stat_hook stat_fn);

struct procfiles;

/* devs must outlive the procfiles. Mappings are read through
 * PROCMAP_QUERY unless procmap_way says the text. The first process that
 * has any file mapping settles it: when the kernel does not know the ioctl
 * (ENOTTY, EINVAL), the text, for that process and every later one. */
struct procfiles *procfiles_new(const dev_t *devs, size_t ndevs);
void procfiles_free(struct procfiles *pf);
/* Reads the maps text whatever the kernel (holders_find_inodes_text, tests
 * of the text). */
void procfiles_force_text(struct procfiles *pf);
/* Says in b (beacon.h) which process, fd or mappings the walk is reading. */
struct scan_beacon;
void procfiles_set_beacon(struct procfiles *pf, struct scan_beacon *b);
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
 * With want_torch the mapping walk also notes whether the process maps a
 * libtorch library (procfiles_torch); each such file is named once per
 * procfiles. */
void procfiles_begin(struct procfiles *pf, int piddir, bool want_torch);
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
/* After a walk with want_torch that reached its end: does the process map
 * a libtorch library? */
bool procfiles_torch(const struct procfiles *pf);

/* ---- The scan's holder records ---- */

struct pidscan;

/* devs must outlive the pidscan. */
struct pidscan *pidscan_new(const dev_t *devs, size_t ndevs, struct holder_list *out,
                            struct warnings *w);
void pidscan_free(struct pidscan *ps);

/* An inode the mount listing has: its holders need no name or stat. */
void pidscan_known(struct pidscan *ps, dev_t dev, ino_t ino);
/* Sizes the inode table for about this many inodes (no rehash while it fills). */
void pidscan_expect(struct pidscan *ps, size_t inodes);
/* Every entry of files (which must outlive the walk) is known, as by
 * pidscan_known: taken in when the first holder record is met, so that a
 * mount of files nobody holds costs no table of them. */
void pidscan_listed(struct pidscan *ps, const struct file_list *files);

/* Appends pid's holder records to out (piddir is its /proc directory).
 * With want_torch it also notes in out->torch_pids whether the process maps
 * a libtorch library. Returns how many records were added. A process is
 * counted once in w when the walk could not see all of it: as denied when
 * its fd list, any fd's target or its maps were refused (a refused fd
 * target hides a holder just as a refused fd list does), else as vanished
 * when it exited meanwhile; never fatal. */
size_t pidscan_run(struct pidscan *ps, int piddir, pid_t pid, bool want_torch);

/* The executable of pid, as its exe link names it, from the maps text
 * this scan read last if it was pid's: the path of the line that maps
 * start_code (stat's startcode, where the executable's code is). NULL
 * when the last walk was another process's or read no text, or the line
 * names no plain path (escaped by the kernel, or on a watched mount):
 * then the caller reads the link. A readlink less for each listed process
 * where the text is read. The string lasts until the next walk. */
const char *pidscan_exe(struct pidscan *ps, pid_t pid, uint64_t start_code);
/* procfiles_force_text for the scan's walk. */
void pidscan_force_text(struct pidscan *ps);
/* procfiles_set_beacon for the scan's walk. */
void pidscan_set_beacon(struct pidscan *ps, struct scan_beacon *b);
/* True once PROCMAP_QUERY has answered (Linux 6.11+); false on the text. */
bool pidscan_queried(const struct pidscan *ps);

/* ---- The maps text (the one parser of it) ---- */

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

#endif
