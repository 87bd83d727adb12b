/* Opening files below a root directory fd that someone else controls (the
 * host's runtime state, a container's root): no path may lead out of the
 * root, the last component is never a symbolic link, and only small regular
 * files are read. */
#ifndef SHMWATCH_BENEATH_H
#define SHMWATCH_BENEATH_H

#include <stddef.h>

#include "util/buf.h"

/* Opens path (relative; a leading '/' is ignored) below rootfd with flags
 * (O_CLOEXEC and O_NOFOLLOW are added): with openat2's RESOLVE_IN_ROOT, so
 * that ".." and absolute symbolic links on the way stay inside rootfd, and
 * magic links (/proc/PID/...) are refused; where the kernel has no openat2
 * (before 5.6, or a seccomp filter refuses it), one component at a time with
 * no symbolic link followed at all. Returns the fd or -errno (-ELOOP: the
 * last component is a symbolic link). */
int open_beneath(int rootfd, const char *path, int flags);

/* open_beneath, except that the last component may be a symbolic link,
 * followed inside rootfd, unless flags has O_NOFOLLOW (a path a user gave,
 * as a watched process would resolve it); without openat2 no symbolic link
 * is followed at all. */
int open_in_root(int rootfd, const char *path, int flags);

/* The fallback of open_beneath on its own, for the tests. */
int open_beneath_walk(int rootfd, const char *path, int flags);

/* Reads the regular file rootfd/path (opened with open_beneath) into out.
 * Returns 0, -EFBIG when it holds more than max bytes (out is then empty),
 * -EINVAL when it is not a regular file (a FIFO is not waited on), or the
 * -errno of the open or the read. */
int read_beneath(int rootfd, const char *path, struct buf *out, size_t max);

#endif
