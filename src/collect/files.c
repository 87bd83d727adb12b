#include "collect/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/xalloc.h"

const char *file_type_name(enum file_type t)
{
    switch (t) {
    case FT_REGULAR: return "file";
    case FT_SYMLINK: return "symlink";
    case FT_DIR: return "dir";
    case FT_FIFO: return "fifo";
    case FT_SOCKET: return "socket";
    default: return "other";
    }
}

static enum file_type type_of(mode_t mode)
{
    if (S_ISREG(mode))
        return FT_REGULAR;
    if (S_ISLNK(mode))
        return FT_SYMLINK;
    if (S_ISDIR(mode))
        return FT_DIR;
    if (S_ISFIFO(mode))
        return FT_FIFO;
    if (S_ISSOCK(mode))
        return FT_SOCKET;
    return FT_OTHER;
}

/* Lists dirfd (which it closes) below prefix ("" at the mount's top). */
static void list_dir(int dirfd, size_t mount, const char *mpath, const char *prefix, int depth,
                     struct file_list *out, struct warnings *w)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return;
    }
    struct buf name;
    buf_init(&name);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* removed between readdir and stat */
        buf_reset(&name);
        buf_printf(&name, "%s%s", prefix, de->d_name);
        if (S_ISDIR(st.st_mode)) {
            if (depth >= FILES_MAX_DEPTH) {
                warn_add(w, "%s: directories deeper than %d levels were not listed", mpath,
                         FILES_MAX_DEPTH);
                continue;
            }
            int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                warn_add(w, "%s: a subdirectory could not be opened: %s", mpath, strerror(errno));
                continue;
            }
            buf_addc(&name, '/');
            list_dir(sub, mount, mpath, name.data, depth + 1, out, w);
            continue;
        }
        struct shm_file *f = VEC_PUSH(out->items, out->n, out->cap);
        f->mount = mount;
        f->name = xstrdup(name.data);
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->type = type_of(st.st_mode);
        f->size = (uint64_t)st.st_size;
        f->alloc = (uint64_t)st.st_blocks * 512u;
        f->uid = st.st_uid;
        f->mtime = (int64_t)st.st_mtim.tv_sec;
    }
    buf_free(&name);
    closedir(d);
}

void files_collect(const struct mount_list *ml, struct file_list *out, struct warnings *w)
{
    for (size_t i = 0; i < ml->n; i++) {
        const struct shm_mount *m = &ml->items[i];
        int fd = open(m->access, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            warn_add(w, "cannot list %s: %s", m->path, strerror(errno));
            continue;
        }
        list_dir(fd, i, m->path, "", 0, out, w);
    }
    /* The list lives as long as the scan (a dashboard keeps two): no slack. */
    if (out->n && out->cap > out->n) {
        out->items = xrealloc(out->items, out->n * sizeof(*out->items));
        out->cap = out->n;
    }
}

void files_free(struct file_list *fl)
{
    for (size_t i = 0; i < fl->n; i++)
        free(fl->items[i].name);
    free(fl->items);
    memset(fl, 0, sizeof(*fl));
}
