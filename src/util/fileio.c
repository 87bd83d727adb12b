#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads dirfd/path into out, straight into its buffer, until the end of the
 * file or max bytes; with short_is_end, a read that does not fill the room
 * it was given is the end. With st, the file read is fstat'ed there first. */
static int read_into(int dirfd, const char *path, struct buf *out, size_t max, bool short_is_end,
                     struct stat *st)
{
    buf_reset(out);
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (st && fstat(fd, st) != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    while (out->len < max) {
        buf_reserve(out, 16u << 10);
        size_t room = out->cap - out->len - 1;
        if (room > max - out->len)
            room = max - out->len;
        ssize_t n = read(fd, out->data + out->len, room);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        out->len += (size_t)n;
        out->data[out->len] = '\0';
        if (n == 0 || (short_is_end && (size_t)n < room))
            break;
    }
    close(fd);
    if (!out->data)
        buf_add(out, "", 0);
    return rc;
}

int read_file_at(int dirfd, const char *path, struct buf *out, size_t max)
{
    return read_into(dirfd, path, out, max, false, NULL);
}

int read_proc_at(int dirfd, const char *path, struct buf *out, size_t max)
{
    return read_into(dirfd, path, out, max, true, NULL);
}

int read_file(const char *path, struct buf *out, size_t max)
{
    return read_file_at(AT_FDCWD, path, out, max);
}

int read_file_stat(const char *path, struct buf *out, size_t max, struct stat *st)
{
    return read_into(AT_FDCWD, path, out, max, false, st);
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
