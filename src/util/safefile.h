/* Every file shmwatch creates or writes (the action log, the Prometheus
 * file) is opened here, so that a run as root never writes through a link
 * another user planted: the last component of the path is never followed
 * when it is a symbolic link, an existing file must be a regular file of
 * the caller with one name (a hard link to a file of root's is refused),
 * and a file replaced whole is written to a new, unpredictably named file
 * created exclusively beside it, synced, then renamed over it.
 * The directories on the way are trusted: they are the user's choice.
 *
 * Also the rule for the files that decide what root does (configuration,
 * themes): owned by root and writable by nobody else, as ssh and sudo ask. */
#ifndef SHMWATCH_SAFEFILE_H
#define SHMWATCH_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Refusals, as positive numbers above errno's: functions return them
 * negated, like -errno, and safefile_strerror says either. */
enum safefile_err {
    SAFEFILE_ESYMLINK = 4096, /* the path is a symbolic link */
    SAFEFILE_ENOTREG,         /* not a regular file (a directory, FIFO, device) */
    SAFEFILE_EOWNER,          /* owned by someone other than the caller */
    SAFEFILE_ENLINK,          /* more than one name (a hard link) */
    SAFEFILE_ENOTROOT,        /* a settings file, run as root: not owned by root */
    SAFEFILE_EWRITABLE,       /* a settings file, run as root: group or others may write */
};

/* strerror(err) for an errno value, a short reason for a SAFEFILE_* one
 * ("a symbolic link (never followed)"): for "cannot write FILE: REASON". */
const char *safefile_strerror(int err);

/* Whether an existing file (st from lstat or fstat) may be written by the
 * caller uid: 0, or -SAFEFILE_* (symbolic link, not regular, other owner,
 * link count above 1). */
int safefile_check(const struct stat *st, uid_t caller);

/* Opens path for appending, created with mode (before umask) when missing;
 * never through a final symbolic link, never a FIFO or device, only the
 * caller's regular file with one name (safefile_check with geteuid()).
 * Returns the fd (O_CLOEXEC), or -errno / -SAFEFILE_*. */
int safefile_append(const char *path, mode_t mode);

/* Replaces path with the len bytes of data atomically (a reader sees the
 * old file or the new one): written to PATH.tmp.<random> created with
 * O_EXCL in the same directory with mode (before umask; an existing file's
 * permission bits and group instead, when the caller may give them), fsync'ed, then
 * renamed over path (which must pass safefile_check if it exists), and the
 * directory synced. Nothing is left behind on failure. Returns 0, or
 * -errno / -SAFEFILE_*. */
int safefile_replace(const char *path, const void *data, size_t len, mode_t mode);

/* Whether a file that decides what the caller does (st from fstat of the
 * descriptor read) is trusted: for root (caller 0), owned by root and
 * writable by neither group nor others; for any other caller, always.
 * Returns 0, -SAFEFILE_ENOTROOT or -SAFEFILE_EWRITABLE. */
int safefile_trusted(const struct stat *st, uid_t caller);

/* mkdir -p of path's parents (not path itself), each new level 0700: 0, or
 * the -errno of the first level that could not be made. */
int safefile_make_parents(const char *path);

#endif
