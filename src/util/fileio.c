#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The start of a file opened with O_NONBLOCK: st its fstat; a pipe (a
 * shell's <(...)) or a FIFO that gives an end of file before any byte has no
 * writer at all: -ENODATA. Else its first byte, if there is one already, is
 * in out, and fd blocks again (the writer is waited for); so does a terminal
 * (--config /dev/stdin, typed). Any other file stays non-blocking: one that
 * has no end but waits for more (/proc/kmsg) is -EAGAIN once it has given
 * what it holds, not a read that never returns. 0 or -errno. */
static int fifo_start(int fd, struct stat *st, struct buf *out)
{
    if (fstat(fd, st) != 0)
        return -errno;
    if (S_ISFIFO(st->st_mode)) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n == 0)
            return -ENODATA;
        if (n < 0 && errno != EAGAIN)
            return -errno;
        if (n == 1)
            buf_add(out, &c, 1);
    } else if (!S_ISCHR(st->st_mode) || !isatty(fd)) {
        return 0;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return -errno;
    return 0;
}

int read_fd(int fd, struct buf *out, size_t max)
{
    for (;;) {
        buf_reserve(out, 16u << 10);
        out->data[out->len] = '\0'; /* a string at every return, after an empty read too */
        size_t room = out->cap - out->len - 1;
        if (room > max - out->len)
            room = max - out->len;
        /* At the cap one byte more tells whether the file goes on. */
        char probe;
        ssize_t n = read(fd, room ? out->data + out->len : &probe, room ? room : 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 0;
        if (!room)
            return -EFBIG;
        out->len += (size_t)n;
    }
}

/* Reads dirfd/path into out with read_fd. With st, the file read is
 * fstat'ed there first. */
static int read_into(int dirfd, const char *path, struct buf *out, size_t max, struct stat *st)
{
    buf_reset(out);
    /* With st (a file named by the user): opened without waiting, as a FIFO
     * that no process has open for writing would block the open until one
     * does (forever, with nothing said). */
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (st ? O_NONBLOCK : 0));
    if (fd < 0)
        return -errno;
    int rc = st ? fifo_start(fd, st, out) : 0;
    if (rc == 0)
        rc = read_fd(fd, out, max);
    close(fd);
    return rc;
}

int read_file_at(int dirfd, const char *path, struct buf *out, size_t max)
{
    return read_into(dirfd, path, out, max, NULL);
}

int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int read_file(const char *path, struct buf *out, size_t max)
{
    return read_file_at(AT_FDCWD, path, out, max);
}

int read_file_stat(const char *path, struct buf *out, size_t max, struct stat *st)
{
    return read_into(AT_FDCWD, path, out, max, st);
}

char *next_line(char **cursor)
{
    char *s = *cursor;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = s + strlen(s);
    }
    return s;
}

/* The fields a caller takes from a stat. They are asked for: with an empty
 * mask a tmpfs leaves its times out (multigrain timestamps, Linux 6.13). */
#define NOWAIT_NEED                                                                                \
    (STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_MTIME | STATX_INO | STATX_SIZE |    \
     STATX_BLOCKS)

int statx_nowait(int dirfd, const char *path, int flags, struct statx *sx)
{
    flags |= AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT;
    if (statx(dirfd, path, flags, NOWAIT_NEED | STATX_CTIME, sx) == 0)
        return 0;
    /* A FUSE mount closed to this user (no allow_other) refuses any field
     * but answers an empty mask with its device. */
    if (errno != EACCES || statx(dirfd, path, flags, 0, sx) != 0)
        return -1;
    sx->stx_mask = 0;
    return 0;
}

bool stat_from_statx(const struct statx *sx, struct stat *st)
{
    st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
    if ((sx->stx_mask & NOWAIT_NEED) != NOWAIT_NEED)
        return false;
    st->st_ino = (ino_t)sx->stx_ino;
    st->st_mode = sx->stx_mode;
    st->st_nlink = sx->stx_nlink;
    st->st_uid = sx->stx_uid;
    st->st_gid = sx->stx_gid;
    st->st_size = (off_t)sx->stx_size;
    st->st_blocks = (blkcnt_t)sx->stx_blocks;
    st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
    st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
    /* The change time, which no utime can set back, where the file system
     * gives it; else the modification time stands in. */
    st->st_ctim = st->st_mtim;
    if (sx->stx_mask & STATX_CTIME) {
        st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
        st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
    }
    return true;
}

int stat_nowait(int dirfd, const char *path, int flags, struct stat *st, bool *full)
{
    struct statx sx;
    if (statx_nowait(dirfd, path, flags, &sx) != 0)
        return -1;
    *full = stat_from_statx(&sx, st);
    return 0;
}

char *pid_dir_name(char name[static 16], pid_t pid)
{
    snprintf(name, 16, "%d", (int)pid);
    return name;
}

int pid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

char *pid_file_name(char name[static 32], pid_t pid, const char *file)
{
    if (pid > 0)
        snprintf(name, 32, "%d/%s", (int)pid, file);
    else
        snprintf(name, 32, "self/%s", file);
    return name;
}

int pid_dir_open(int proc, pid_t pid)
{
    char name[16];
    return openat(proc, pid_dir_name(name, pid), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}
