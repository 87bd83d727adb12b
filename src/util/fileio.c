#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int read_file_at(int dirfd, const char *path, struct buf *out, size_t max)
{
    buf_reset(out);
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    char chunk[8192];
    int rc = 0;
    while (out->len < max) {
        size_t want = sizeof(chunk);
        if (want > max - out->len)
            want = max - out->len;
        ssize_t n = read(fd, chunk, want);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        buf_add(out, chunk, (size_t)n);
    }
    close(fd);
    if (!out->data)
        buf_add(out, "", 0);
    return rc;
}

int read_file(const char *path, struct buf *out, size_t max)
{
    return read_file_at(AT_FDCWD, path, out, max);
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
