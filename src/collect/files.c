#include "collect/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/inomap.h"
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

enum file_type file_type_of(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return FT_REGULAR;
    case S_IFLNK: return FT_SYMLINK;
    case S_IFDIR: return FT_DIR;
    case S_IFIFO: return FT_FIFO;
    case S_IFSOCK: return FT_SOCKET;
    default: return FT_OTHER;
    }
}

static void fill(struct shm_file *f, const struct stat *st)
{
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->type = file_type_of(st->st_mode);
    f->size = (uint64_t)st->st_size;
    f->alloc = (uint64_t)st->st_blocks * 512u;
    f->uid = st->st_uid;
    f->mtime = (int64_t)st->st_mtim.tv_sec;
    f->ctime = (int64_t)st->st_ctim.tv_sec;
    f->stat_pending = false;
}

/* A new entry of mount at the list's end, named name. */
static struct shm_file *add_file(struct file_list *out, size_t mount, const char *name)
{
    struct shm_file *f = VEC_PUSH(out->items, out->n, out->cap);
    f->mount = mount;
    f->name = files_name(out, name);
    return f;
}

/* Lists dirfd (which it closes), a directory of mount ml->items[mount],
 * below prefix ("" at the mount's top). On a tmpfs, at its top (depth 0)
 * regular files are taken from their entries and stat'ed later
 * (files_finish), and at any depth an entry on another device (a file
 * system mounted inside it) is neither listed nor entered: its stat,
 * answered from what the kernel holds (stat_nowait), never waits on that
 * file system. */
static void list_dir(int dirfd, const struct mount_list *ml, size_t mount, bool tmpfs,
                     const char *prefix, int depth, struct file_list *out, struct warnings *w)
{
    const struct shm_mount *m = &ml->items[mount];
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
        if (tmpfs && depth == 0 && de->d_type == DT_REG) {
            struct shm_file *f = add_file(out, mount, de->d_name);
            f->dev = m->dev;
            f->ino = de->d_ino;
            f->type = FT_REGULAR;
            f->stat_pending = true;
            continue;
        }
        struct stat st;
        bool full;
        if (stat_nowait(dirfd, de->d_name, AT_SYMLINK_NOFOLLOW, &st, &full) != 0)
            continue; /* removed between readdir and stat */
        if (tmpfs && st.st_dev != m->dev) {
            warn_add(w, "%s: a file system mounted inside it was not listed", m->path);
            continue;
        }
        if (!full && fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        buf_reset(&name);
        buf_printf(&name, "%s%s", prefix, de->d_name);
        if (S_ISDIR(st.st_mode) && depth == 0 && st.st_dev == m->dev) {
            struct shm_dir *dd = VEC_PUSH(out->dirs, out->ndirs, out->dirs_cap);
            dd->mount = mount;
            dd->name = files_name(out, de->d_name);
            dd->dev = st.st_dev;
            dd->ino = st.st_ino;
            dd->uid = st.st_uid;
            dd->mtime = (int64_t)st.st_mtim.tv_sec;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth >= FILES_MAX_DEPTH) {
                warn_add(w, "%s: directories deeper than %d levels were not listed", m->path,
                         FILES_MAX_DEPTH);
                continue;
            }
            int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                warn_add(w, "%s: a subdirectory could not be opened: %s", m->path,
                         strerror(errno));
                continue;
            }
            /* A folder that is one segment: listed itself, then its files. */
            if (depth == 0 && strncmp(de->d_name, FILES_FOLDER_PREFIX,
                                      sizeof(FILES_FOLDER_PREFIX) - 1) == 0)
                fill(add_file(out, mount, name.data), &st);
            buf_addc(&name, '/');
            list_dir(sub, ml, mount, tmpfs, name.data, depth + 1, out, w);
            continue;
        }
        fill(add_file(out, mount, name.data), &st);
    }
    buf_free(&name);
    closedir(d);
}

void files_collect(const struct sysroot *sys, struct mount_list *ml, struct file_list *out,
                   struct warnings *w)
{
    for (size_t i = 0; i < ml->n; i++) {
        struct shm_mount *m = &ml->items[i];
        int fd = sysroot_open_below(sys, m->path, O_RDONLY | O_DIRECTORY);
        if (fd < 0) {
            warn_add(w, "cannot list %s: %s", m->path, strerror(errno));
            continue;
        }
        m->listed = true;
        /* Only tmpfs is known to give the inode's own number in an entry
         * (an overlay, say, need not). */
        list_dir(fd, ml, i, strcmp(m->fstype, "tmpfs") == 0, "", 0, out, w);
    }
}

void files_trim(struct file_list *fl)
{
    if (fl->n && fl->cap > fl->n) {
        fl->items = xrealloc(fl->items, fl->n * sizeof(*fl->items));
        fl->cap = fl->n;
    }
}

/* Stats the entry f of a mount's top directory; false when it is gone. */
static bool stat_entry(const struct sysroot *sys, const struct mount_list *ml, int *dirfds,
                       struct shm_file *f)
{
    int *fd = &dirfds[f->mount];
    if (*fd == -1)
        *fd = sysroot_open_below(sys, ml->items[f->mount].path, O_RDONLY | O_DIRECTORY);
    struct stat st;
    bool full;
    /* A file mounted over the entry since (another device) is not it. */
    if (*fd < 0 || stat_nowait(*fd, f->name, AT_SYMLINK_NOFOLLOW, &st, &full) != 0 ||
        st.st_dev != f->dev || (!full && fstatat(*fd, f->name, &st, AT_SYMLINK_NOFOLLOW) != 0))
        return false;
    fill(f, &st); /* a file replaced since the listing is taken as it is now */
    return true;
}

void files_take_held(struct file_list *fl, const struct holder_list *hl)
{
    size_t npending = 0;
    for (size_t i = 0; hl && hl->n && i < fl->n; i++) /* no holders: nothing to look up */
        npending += fl->items[i].stat_pending;
    if (!npending)
        return;
    struct inomap pending;
    inomap_init(&pending);
    inomap_reserve(&pending, npending); /* filled without a rehash */
    for (size_t i = 0; i < fl->n; i++)
        if (fl->items[i].stat_pending)
            inomap_put(&pending, fl->items[i].dev, fl->items[i].ino, i);
    for (size_t k = 0; k < hl->n; k++) {
        const struct shm_holder *h = &hl->items[k];
        size_t i;
        if (!h->stat_ok || !inomap_get(&pending, h->dev, h->ino, &i) || !fl->items[i].stat_pending)
            continue;
        struct shm_file *f = &fl->items[i];
        f->size = h->size;
        f->alloc = h->alloc;
        f->uid = h->uid;
        f->mtime = h->mtime;
        f->stat_pending = false;
    }
    inomap_free(&pending);
}

void files_stat_rest(const struct sysroot *sys, const struct mount_list *ml, struct file_list *fl)
{
    int *dirfds = xmalloc(ml->n * sizeof(*dirfds));
    for (size_t m = 0; m < ml->n; m++)
        dirfds[m] = -1;
    size_t kept = 0;
    for (size_t i = 0; i < fl->n; i++) {
        struct shm_file *f = &fl->items[i];
        if (f->stat_pending && !stat_entry(sys, ml, dirfds, f))
            continue; /* removed since it was listed */
        fl->items[kept++] = *f;
    }
    fl->n = kept;
    for (size_t m = 0; m < ml->n; m++)
        if (dirfds[m] >= 0)
            close(dirfds[m]);
    free(dirfds);
}

void files_finish(const struct sysroot *sys, const struct mount_list *ml, struct file_list *fl,
                  const struct holder_list *hl)
{
    files_take_held(fl, hl);
    files_stat_rest(sys, ml, fl);
}

char *files_name(struct file_list *fl, const char *name)
{
    return strpool_dup(&fl->names, name);
}

void files_drop_records(struct file_list *fl)
{
    free(fl->items);
    fl->items = NULL;
    fl->n = fl->cap = 0;
}

void files_free(struct file_list *fl)
{
    free(fl->items);
    free(fl->dirs);
    strpool_free(&fl->names);
    memset(fl, 0, sizeof(*fl));
}
