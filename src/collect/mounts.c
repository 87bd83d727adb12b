#include "collect/mounts.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/xalloc.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
    char *d = s;
    while (*s) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *d++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
            s += 4;
        } else {
            *d++ = *s++;
        }
    }
    *d = '\0';
}

static char *next_field(char **cursor)
{
    char *s = *cursor;
    while (*s == ' ')
        s++;
    if (!*s)
        return NULL;
    char *end = s + strcspn(s, " ");
    *cursor = *end ? end + 1 : end;
    *end = '\0';
    return s;
}

/* A decimal field (dec_field) below 2^32. */
static bool u32_until(const char **s, char stop, unsigned *out)
{
    uint64_t v;
    if (!dec_field(s, stop, &v) || v > UINT32_MAX)
        return false;
    *out = (unsigned)v;
    return true;
}

bool mountinfo_parse_line(char *line, struct mountinfo_entry *e)
{
    /* 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue */
    char *cur = line;
    const char *id = next_field(&cur), *parent = next_field(&cur), *dev = next_field(&cur);
    char *root = next_field(&cur), *mp = next_field(&cur), *opts = next_field(&cur);
    if (!id || !parent || !dev || !root || !mp || !opts)
        return false;
    /* The device as "MAJ:MIN" (decimal). mountinfo is read once per mount
     * namespace, and --all on a node reads dozens: no sscanf. */
    if (!u32_until(&id, '\0', &e->id) || !u32_until(&parent, '\0', &e->parent) ||
        !u32_until(&dev, ':', &e->major) || !u32_until(&dev, '\0', &e->minor))
        return false;
    char *f;
    e->propagates = false;
    while ((f = next_field(&cur)) && strcmp(f, "-") != 0) /* optional fields */
        if (strncmp(f, "shared:", 7) == 0 || strncmp(f, "master:", 7) == 0)
            e->propagates = true;
    if (!f)
        return false;
    char *fstype = next_field(&cur), *source = next_field(&cur), *super = next_field(&cur);
    if (!fstype || !source)
        return false;
    unescape_octal(root);
    unescape_octal(mp);
    e->root = root;
    e->mountpoint = mp;
    e->fstype = fstype;
    e->super_opts = super ? super : "";
    return true;
}

void mounts_set_statvfs(struct shm_mount *m, const struct statvfs *sv)
{
    uint64_t frsize = sv->f_frsize ? sv->f_frsize : sv->f_bsize;
    m->size = (uint64_t)sv->f_blocks * frsize;
    m->avail = (uint64_t)sv->f_bavail * frsize;
    m->used = ((uint64_t)sv->f_blocks - (uint64_t)sv->f_bfree) * frsize;
    m->inodes = (uint64_t)sv->f_files;
    m->inodes_free = sv->f_ffree <= sv->f_files ? (uint64_t)sv->f_ffree : (uint64_t)sv->f_files;
    m->stat_ok = true;
}

void mounts_set_unknown(struct shm_mount *m, int err)
{
    m->stat_ok = false;
    m->stat_err = err;
    m->size = m->used = m->avail = m->inodes = m->inodes_free = 0;
}

bool mounts_btime(int fd, struct timespec *btime)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_BTIME, &sx) != 0 ||
        !(sx.stx_mask & STATX_BTIME))
        return false;
    btime->tv_sec = (time_t)sx.stx_btime.tv_sec;
    btime->tv_nsec = (long)sx.stx_btime.tv_nsec;
    return true;
}

/* statvfs of the mount point below root: through an O_PATH fd, which needs
 * no read permission on the directory, as statvfs of a path does not. */
static void statfs_mount(const struct sysroot *sys, struct shm_mount *m)
{
    struct statvfs sv;
    int fd = sysroot_open_below(sys, m->path, O_PATH | O_DIRECTORY);
    if (fd >= 0 && fstatvfs(fd, &sv) == 0)
        mounts_set_statvfs(m, &sv);
    else
        mounts_set_unknown(m, errno);
    if (fd >= 0)
        close(fd);
}

void mounts_refresh(const struct sysroot *sys, struct mount_list *ml)
{
    for (size_t i = 0; i < ml->n; i++)
        statfs_mount(sys, &ml->items[i]);
}

long mounts_find_dev(const struct mount_list *ml, dev_t dev)
{
    for (size_t i = 0; i < ml->n; i++)
        if (ml->items[i].dev == dev)
            return (long)i;
    return -1;
}

static void add_mount(struct mount_list *ml, const struct sysroot *sys, const char *path,
                      const char *fstype, dev_t dev)
{
    struct shm_mount *m = VEC_PUSH(ml->items, ml->n, ml->cap);
    m->path = xstrdup(path);
    m->fstype = xstrdup(fstype);
    m->dev = dev;
    statfs_mount(sys, m);
}

void mountinfo_parse(char *text, struct mountinfo *mi)
{
    memset(mi, 0, sizeof(*mi));
    mi->text = text;
    char *cur = text, *line;
    while (cur && (line = next_line(&cur))) {
        struct mountinfo_entry e;
        if (mountinfo_parse_line(line, &e))
            *VEC_PUSH(mi->items, mi->n, mi->cap) = e;
        else
            mi->malformed++;
    }
}

int mountinfo_read(int dirfd, const char *path, struct mountinfo *mi)
{
    struct buf text;
    buf_init(&text);
    int rc = read_file_at(dirfd, path, &text, READ_TEXT_MAX);
    if (rc < 0 && rc != -EFBIG) {
        memset(mi, 0, sizeof(*mi));
        buf_free(&text);
        return rc;
    }
    mountinfo_parse(buf_steal(&text), mi);
    return rc;
}

bool mountinfo_hidden(const struct mountinfo *mi, size_t i)
{
    const struct mountinfo_entry *e = &mi->items[i];
    for (size_t k = 0; k < mi->n; k++)
        if (mi->items[k].parent == e->id && k != i &&
            strcmp(mi->items[k].mountpoint, e->mountpoint) == 0)
            return true;
    return false;
}

const struct mountinfo_entry *mountinfo_find(const struct mountinfo *mi, const char *mountpoint)
{
    for (size_t i = mi->n; i-- > 0;)
        if (strcmp(mi->items[i].mountpoint, mountpoint) == 0 && !mountinfo_hidden(mi, i))
            return &mi->items[i];
    return NULL;
}

void mountinfo_free(struct mountinfo *mi)
{
    free(mi->text);
    free(mi->items);
    memset(mi, 0, sizeof(*mi));
}

/* The type of the file system on device dev, from the watched process's
 * mountinfo (text: no call into that file system), or NULL. */
static const char *fstype_of(const struct sysroot *sys, struct mountinfo *mi, dev_t dev)
{
    char path[32];
    if (mountinfo_read(sys->proc, pid_file_name(path, sys->pid, "mountinfo"), mi) != 0)
        return NULL;
    for (size_t i = mi->n; i-- > 0;)
        if (makedev(mi->items[i].major, mi->items[i].minor) == dev)
            return mi->items[i].fstype;
    return NULL;
}

int mounts_check_named(const struct sysroot *sys, const char *path, char **why)
{
    *why = NULL;
    if (sys->root < 0)
        return 0;
    /* Nothing here may wait on the file system named: a stalled FUSE or NFS
     * mount would hang the program before its scan (whose watchdog covers
     * the scan alone). The lookup crosses into a mount point without asking
     * the file system mounted there; the stat takes the attributes the
     * kernel holds (AT_STATX_DONT_SYNC), and the type comes from mountinfo,
     * not statfs. */
    int fd = sysroot_open_below(sys, path, O_PATH);
    struct statx sx;
    int flags = AT_EMPTY_PATH | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT;
    if (fd < 0 || statx(fd, "", flags, STATX_TYPE | STATX_MODE, &sx) != 0) {
        *why = xstrdup(strerror(errno));
    } else if (!S_ISDIR(sx.stx_mode)) {
        *why = xstrdup("not a directory");
    } else {
        struct mountinfo mi;
        const char *type = fstype_of(sys, &mi, makedev(sx.stx_dev_major, sx.stx_dev_minor));
        if (type && strcmp(type, "tmpfs") != 0) {
            *why = str_printf("not a tmpfs (it is on %s)", type);
        } else if (type) {
            /* The root of a mount: statx says so where the kernel tells
             * (5.8); else a device of its own, unlike its parent's. */
            struct statx up;
            bool root;
            if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
                root = (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
            else
                root = statx(fd, "..", flags & ~AT_EMPTY_PATH, STATX_INO, &up) != 0 ||
                       up.stx_dev_major != sx.stx_dev_major ||
                       up.stx_dev_minor != sx.stx_dev_minor || up.stx_ino == sx.stx_ino;
            if (!root)
                *why = xstrdup("a directory inside a tmpfs, not the root of its mount");
        }
        /* A device no mountinfo line names cannot be judged here: the scan
         * says what it finds. */
        mountinfo_free(&mi);
    }
    if (fd >= 0)
        close(fd);
    return *why ? -1 : 0;
}

/* The entry of mi for the mount whose root fd is, by its mount id (statx,
 * Linux 5.8); NULL when fd is no mount's root or the kernel does not say. */
static const struct mountinfo_entry *mount_rooted_at(const struct mountinfo *mi, int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) != 0 ||
        !(sx.stx_mask & STATX_MNT_ID) || !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
        !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
        return NULL;
    for (size_t i = 0; i < mi->n; i++)
        if (mi->items[i].id == sx.stx_mnt_id)
            return &mi->items[i];
    return NULL;
}

void mounts_collect(const struct sysroot *sys, const struct mountinfo *mi,
                    const char *const *extra, size_t nextra, struct mount_list *out,
                    struct warnings *w)
{
    for (size_t i = 0; i < nextra; i++) {
        struct stat st;
        int fd = sysroot_open_below(sys, extra[i], O_PATH);
        int found = fd >= 0 && fstat(fd, &st) == 0;
        int err = errno;
        if (!found || !S_ISDIR(st.st_mode)) {
            warn_add(w, "--mount %s: %s", extra[i], found ? "not a directory" : strerror(err));
            if (fd >= 0)
                close(fd);
            continue;
        }
        /* A path that leads to a mount by a symbolic link (/run/shm ->
         * /dev/shm) is named by the mount's own path: the actions, which
         * follow no link, reach it there. */
        const char *path = extra[i];
        const struct mountinfo_entry *e = mountinfo_find(mi, path);
        if (!e && (e = mount_rooted_at(mi, fd)))
            path = e->mountpoint;
        close(fd);
        if (mounts_find_dev(out, st.st_dev) < 0)
            add_mount(out, sys, path, e ? e->fstype : "?", st.st_dev);
    }
    if (nextra > 0)
        return;

    /* Default: the top tmpfs mount at each standard shm path. */
    const char *const standard[] = {"/dev/shm", "/run/shm"};
    for (size_t i = 0; i < 2; i++) {
        const struct mountinfo_entry *e = mountinfo_find(mi, standard[i]);
        if (!e || strcmp(e->fstype, "tmpfs") != 0)
            continue;
        dev_t dev = makedev(e->major, e->minor);
        if (mounts_find_dev(out, dev) >= 0)
            continue; /* /run/shm bound onto /dev/shm: one mount, listed once */
        add_mount(out, sys, standard[i], "tmpfs", dev);
    }
}

void mounts_free(struct mount_list *ml)
{
    for (size_t i = 0; i < ml->n; i++) {
        free(ml->items[i].path);
        free(ml->items[i].fstype);
    }
    free(ml->items);
    memset(ml, 0, sizeof(*ml));
}
