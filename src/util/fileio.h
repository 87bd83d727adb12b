/* Bounded reads of small files relative to a directory fd, the way /proc
 * must be read: a file that vanishes is an answer, not a crash. */
#ifndef SHMWATCH_FILEIO_H
#define SHMWATCH_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/buf.h"

/* The caps of what is read whole: each is written here once. */
enum {
    READ_LINE_MAX = 4096,          /* one-line files: /proc/PID/stat, statm */
    READ_SMALL_MAX = 64u << 10,    /* /proc/PID/status, cgroup, uid_map; cgroup files */
    READ_CMDLINE_MAX = 128u << 10, /* /proc/PID/cmdline */
    READ_TEXT_MAX = 16u << 20,     /* mountinfo, /proc/sysvipc/shm */
};

/* Reads all of dirfd/path into out (replacing its content), to the end of
 * the file however the kernel hands it out, at most max bytes. Returns 0,
 * -EFBIG when the file goes on past max (out then holds its first max
 * bytes), or another -errno. */
int read_file_at(int dirfd, const char *path, struct buf *out, size_t max);

/* Reads fd to its end, appended to out (which stays NUL-terminated): a
 * read that returns less than asked is not the end (a seq_file such as
 * /proc/PID/mountinfo gives a page at a time), only a read of 0 is. Returns
 * 0, -EFBIG when the file goes on past max bytes in out, or another -errno. */
int read_fd(int fd, struct buf *out, size_t max);

/* Writes all of data to fd, again after EINTR. Returns 0 or -errno. */
int write_all(int fd, const void *data, size_t len);

/* Reads a whole file by absolute or relative path (AT_FDCWD). */
int read_file(const char *path, struct buf *out, size_t max);

/* As read_file, with *st the fstat of the very file read (not of whatever
 * the path names a moment later): for checks of who may have written it.
 * The open does not wait for a FIFO's writer: a pipe or FIFO that no process
 * writes to is -ENODATA at once (a shell's <(...) is read as any file). A
 * pipe, FIFO or terminal is waited on for its end; any other file is read
 * without waiting, so one that waits for more instead of ending (/proc/kmsg)
 * is -EAGAIN. */
struct stat;
int read_file_stat(const char *path, struct buf *out, size_t max, struct stat *st);
/* fstatat(dirfd, path, st, flags) that never waits on the file's own file
 * system: a file on a FUSE or network file system whose daemon or server
 * does not answer makes a plain stat wait forever. statx with
 * AT_STATX_DONT_SYNC answers from the inode the kernel holds (FUSE and NFS
 * keep their cached attributes; a FUSE mount closed to this user still
 * gives its device). st_dev is always filled; the rest only when *full
 * (always on tmpfs, whose inode is the truth). Returns 0, or -1 with errno
 * set. */
int stat_nowait(int dirfd, const char *path, int flags, struct stat *st, bool *full);
/* Its two halves, for a caller that decides on the device alone before
 * taking the rest: the statx (sx->stx_mask 0 when only the device could be
 * had), and the fields of st from it (st_dev always; false when a field was
 * missing, the rest then left as it was). */
struct statx;
int statx_nowait(int dirfd, const char *path, int flags, struct statx *sx);
bool stat_from_statx(const struct statx *sx, struct stat *st);

/* The name of pid's directory under /proc (its decimal digits) in name,
 * which is returned; a negative pid is written with its sign. */
char *pid_dir_name(char name[static 16], pid_t pid);

/* "PID/file", a file of pid's directory below proc ("self/file" for pid 0),
 * in name, which is returned; cut at 31 bytes. */
char *pid_file_name(char name[static 32], pid_t pid, const char *file);

/* Opens pid's directory below proc: the fd, or -1 with errno set. */
int pid_dir_open(int proc, pid_t pid);

/* The ascending order of two pids, or of two records that begin with one,
 * for qsort and bsearch. */
int pid_cmp(const void *a, const void *b);

/* Reads the decimal digits at s while their value stays below 10^8, more
 * than any pid or fd number: the value (below 10^9) in *v, and where it
 * stopped, at a digit still when a longer number was cut. Inline: it reads
 * every fd of every process. */
static inline const char *pid_digits(const char *s, int *v)
{
    int x = 0;
    for (; *s >= '0' && *s <= '9' && x < 100000000; s++)
        x = x * 10 + (*s - '0');
    *v = x;
    return s;
}

/* Next line of text in *cursor (newline removed, NUL written in its place);
 * NULL at the end. The text is modified in place. */
char *next_line(char **cursor);

#endif
