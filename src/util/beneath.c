#include "util/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/xalloc.h"

int open_beneath_walk(int rootfd, const char *path, int flags)
{
    char *copy = xstrdup(path), *save = NULL;
    const char *comp = strtok_r(copy, "/", &save);
    int dir = rootfd, rc;
    if (!comp)
        comp = "."; /* the root itself */
    for (;;) {
        char *next = strtok_r(NULL, "/", &save);
        if (strcmp(comp, "..") == 0) {
            rc = -EXDEV; /* could climb out of the root */
            break;
        }
        if (!next) {
            rc = openat(dir, comp, flags | O_NOFOLLOW | O_CLOEXEC);
            rc = rc < 0 ? -errno : rc;
            break;
        }
        int sub = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            rc = -errno;
            break;
        }
        if (dir != rootfd)
            close(dir);
        dir = sub;
        comp = next;
    }
    if (dir != rootfd)
        close(dir);
    free(copy);
    return rc;
}

int open_beneath(int rootfd, const char *path, int flags)
{
    return open_in_root(rootfd, path, flags | O_NOFOLLOW);
}

int open_in_root(int rootfd, const char *path, int flags)
{
#ifdef SYS_openat2
    while (*path == '/')
        path++;
    struct open_how how = {
        .flags = (unsigned long long)(flags | O_CLOEXEC),
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    };
    long fd = syscall(SYS_openat2, rootfd, *path ? path : ".", &how, sizeof(how));
    if (fd >= 0)
        return (int)fd;
    if (errno != ENOSYS && errno != EPERM && errno != E2BIG)
        return -errno;
#endif
    return open_beneath_walk(rootfd, path, flags);
}

int read_beneath(int rootfd, const char *path, struct buf *out, size_t max)
{
    buf_reset(out);
    int fd = open_beneath(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode))
        rc = -EINVAL;
    else if ((unsigned long long)st.st_size > max)
        rc = -EFBIG;
    else
        rc = read_fd(fd, out, max); /* -EFBIG too for a file grown since the fstat */
    close(fd);
    if (rc < 0)
        buf_reset(out);
    if (!out->data)
        buf_add(out, "", 0);
    return rc;
}
