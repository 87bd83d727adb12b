/* Bounded reads of small files relative to a directory fd, the way /proc
 * must be read: a file that vanishes is an answer, not a crash. */
#ifndef SHMWATCH_FILEIO_H
#define SHMWATCH_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

#include "util/buf.h"

/* Reads all of dirfd/path into out (replacing its content), at most max bytes.
 * Returns 0 or -errno. */
int read_file_at(int dirfd, const char *path, struct buf *out, size_t max);

/* As read_file_at, for /proc files (and others the kernel makes whole on
 * each read): a read that returns less than asked is the end, which saves
 * the read that would return 0. Not for pipes or FIFOs. */
int read_proc_at(int dirfd, const char *path, struct buf *out, size_t max);

/* Reads a whole file by absolute or relative path (AT_FDCWD). */
int read_file(const char *path, struct buf *out, size_t max);

/* As read_file, with *st the fstat of the very file read (not of whatever
 * the path names a moment later): for checks of who may have written it. */
struct stat;
int read_file_stat(const char *path, struct buf *out, size_t max, struct stat *st);

/* Next line of text in *cursor (newline removed, NUL written in its place);
 * NULL at the end. The text is modified in place. */
char *next_line(char **cursor);

#endif
