#include "util/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

const char *safefile_strerror(int err)
{
    switch (err) {
    case SAFEFILE_ESYMLINK:
        return "refused: a symbolic link (never followed)";
    case SAFEFILE_ENOTREG:
        return "refused: not a regular file";
    case SAFEFILE_EOWNER:
        return "refused: owned by another user";
    case SAFEFILE_ENLINK:
        return "refused: a hard link (the file has other names)";
    case SAFEFILE_ENOTROOT:
        return "not owned by root";
    case SAFEFILE_EWRITABLE:
        return "writable by group or others";
    default:
        return strerror(err);
    }
}

int safefile_check(const struct stat *st, uid_t caller)
{
    if (S_ISLNK(st->st_mode))
        return -SAFEFILE_ESYMLINK;
    if (!S_ISREG(st->st_mode))
        return -SAFEFILE_ENOTREG;
    if (st->st_uid != caller)
        return -SAFEFILE_EOWNER;
    if (st->st_nlink > 1)
        return -SAFEFILE_ENLINK;
    return 0;
}

int safefile_trusted(const struct stat *st, uid_t caller)
{
    if (caller != 0)
        return 0;
    if (st->st_uid != 0)
        return -SAFEFILE_ENOTROOT;
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return -SAFEFILE_EWRITABLE;
    return 0;
}

/* The directory of path, opened, and the last component in *base (a
 * pointer into path). Every later step is relative to that one directory,
 * so it cannot change under us between the steps. */
static int open_parent(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return -EISDIR;
    char *dir = slash ? (slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path)))
                      : xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? -errno : fd;
    free(dir);
    return rc;
}

/* Why dir/base could not be opened: what is there when it is not a
 * regular file (a symbolic link gives ELOOP, a FIFO without a reader
 * ENXIO), else err. */
static int open_failure(int dir, const char *base, int err)
{
    struct stat st;
    if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode))
            return -SAFEFILE_ESYMLINK;
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            return -SAFEFILE_ENOTREG;
    }
    return -err;
}

int safefile_append(const char *path, mode_t mode)
{
    const char *base;
    int dir = open_parent(path, &base);
    if (dir < 0)
        return dir;
    /* O_NONBLOCK: a FIFO planted there must not hang the open. */
    int fd = openat(dir, base,
                    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                    mode);
    int rc = fd;
    if (fd < 0) {
        rc = open_failure(dir, base, errno);
    } else {
        struct stat st;
        rc = fstat(fd, &st) != 0 ? -errno : safefile_check(&st, geteuid());
        if (rc == 0)
            rc = fcntl(fd, F_SETFL, O_APPEND) != 0 ? -errno : fd;
        if (rc < 0)
            close(fd);
    }
    close(dir);
    return rc;
}

/* A new file BASE.tmp.<16 random hex digits> in dir, made with O_EXCL (so
 * never through a link): its fd, with the name in tmp. */
static int create_temp(int dir, const char *base, mode_t mode, struct buf *tmp)
{
    for (int tries = 0; tries < 32; tries++) {
        unsigned long long r;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return -errno;
        buf_reset(tmp);
        buf_printf(tmp, "%s.tmp.%016llx", base, r);
        int fd = openat(dir, tmp->data,
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
    }
    return -EEXIST;
}

/* The new file fd takes the group and permission bits of the file it is to
 * replace, as an editor's save does (chmod 600 or chgrp prometheus holds
 * across rewrites): only from a file the replace would accept (the caller's
 * own regular file: its owner is the caller's already). A group the caller
 * may not give is left as created. 0, or -errno. */
static int keep_attrs(int dir, const char *base, int fd)
{
    struct stat old;
    if (fstatat(dir, base, &old, AT_SYMLINK_NOFOLLOW) != 0 || safefile_check(&old, geteuid()) != 0)
        return 0; /* none yet, or refused later */
    /* A group the caller may not give leaves the caller's own: that is no
     * failure of the write. */
    int ignored = old.st_gid != getegid() ? fchown(fd, (uid_t)-1, old.st_gid) : 0;
    (void)ignored;
    return fchmod(fd, old.st_mode & 0777) != 0 ? -errno : 0;
}

int safefile_replace(const char *path, const void *data, size_t len, mode_t mode)
{
    const char *base;
    int dir = open_parent(path, &base);
    if (dir < 0)
        return dir;
    struct buf tmp;
    buf_init(&tmp);
    int fd = create_temp(dir, base, mode, &tmp);
    int rc = fd < 0 ? fd : keep_attrs(dir, base, fd);
    if (rc == 0)
        rc = write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = -errno;
    /* The file replaced must be one the caller could have appended to: a
     * planted link or another user's file is left as it is. rename() itself
     * never follows a link; this is about not replacing what is not ours. */
    struct stat st;
    if (rc == 0 && fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
        rc = safefile_check(&st, geteuid());
    if (rc == 0 && renameat(dir, tmp.data, dir, base) != 0)
        rc = -errno;
    if (rc == 0)
        fsync(dir); /* the rename itself on disk; a failure here loses nothing written */
    if (rc < 0 && fd >= 0)
        unlinkat(dir, tmp.data, 0);
    buf_free(&tmp);
    close(dir);
    return rc;
}

int safefile_make_parents(const char *path)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = *p ? p + 1 : p; *s; s++) { /* past a leading '/', if any */
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            rc = -errno;
            break;
        }
        *s = '/';
    }
    free(p);
    return rc;
}
