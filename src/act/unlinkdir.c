/* Removing a folder segment (a joblib memmapping folder) as a whole, under
 * the rules for directories: every entry is read relative to the folder's
 * own fd, never through a link; a symbolic link, a subdirectory, anything
 * but a regular file, or an entry on another file system (a mount inside)
 * refuses the whole folder; every file must be the caller's (unless root),
 * not written to since the scan, held by nobody in a fresh search, and
 * granted the kernel's write lease (not open anywhere, even where the
 * search could not look). Only then are the files unlinked (unlinkat on the
 * folder's fd, each under its lease) and the folder removed. */
#include "act/unlinkdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/xalloc.h"

/* Entries past this are not read: such a folder is refused. */
#define FOLDER_MAX_ENTRIES 100000

struct entry {
    char *name;
    struct stat st;
};

/* Reads and checks every entry of the folder fd into *out (the caller
 * frees them); false (res filled) when one refuses the folder. */
static bool read_entries(int fd, const struct stat *fst, const struct unlink_target *t, uid_t uid,
                         struct entry **out, size_t *nout, struct unlink_result *res)
{
    int dfd = dup(fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        unlink_say(res, UNLINK_FAILED, errno, "cannot read the folder: %s", strerror(errno));
        return false;
    }
    struct entry *e = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone since readdir */
        ok = false;
        if (n >= FOLDER_MAX_ENTRIES)
            unlink_say(res, UNLINK_REFUSED, E2BIG, "more than %d entries in the folder",
                FOLDER_MAX_ENTRIES);
        else if (S_ISLNK(st.st_mode))
            unlink_say(res, UNLINK_REFUSED, EPERM, "a symbolic link inside it (never followed)");
        else if (st.st_dev != fst->st_dev)
            unlink_say(res, UNLINK_REFUSED, EXDEV,
                "another file system is mounted inside it (never crossed)");
        else if (S_ISDIR(st.st_mode))
            unlink_say(res, UNLINK_REFUSED, EPERM, "a directory inside it (never removed)");
        else if (!S_ISREG(st.st_mode))
            unlink_say(res, UNLINK_REFUSED, EPERM, "an entry inside it is not a regular file");
        else if (!unlink_owner_ok(uid, t->ns, st.st_uid, UNLINK_OWNED_IN_FOLDER, res))
            ok = false; /* res says whose it is */
        else if ((int64_t)st.st_mtim.tv_sec > t->mtime)
            unlink_say(res, UNLINK_REFUSED, EBUSY,
                "a file inside it was written to since the scan: something is using it");
        else
            ok = true;
        if (ok) {
            struct entry *x = VEC_PUSH(e, n, cap);
            x->name = xstrdup(de->d_name);
            x->st = st;
        }
    }
    closedir(d);
    *out = e;
    *nout = n;
    return ok;
}

/* The fresh holder search over every file; false (res filled) when one is
 * held or the search cannot prove them free. */
static bool nobody_holds(const struct unlink_opts *o, const struct entry *e, size_t n,
                         struct unlink_result *res)
{
    if (n == 0)
        return true;
    struct inode_query *q = xcalloc(n, sizeof(*q));
    for (size_t i = 0; i < n; i++) {
        q[i].dev = e[i].st.st_dev;
        q[i].ino = e[i].st.st_ino;
    }
    struct holder_blind blind;
    memset(&blind, 0, sizeof(blind));
    bool ok = true;
    if (holders_find_inodes(o->sys, q, n, getpid(), &blind) < 0) {
        unlink_say(res, UNLINK_REFUSED, EACCES, "cannot prove it unused: no process table");
        ok = false;
    }
    for (size_t i = 0; ok && i < n; i++) {
        char why[200];
        if (q[i].pid) {
            res->holder = q[i].pid;
            unlink_say(res, UNLINK_REFUSED, EBUSY, "in use: pid %d %s a file inside it", (int)q[i].pid,
                q[i].fd >= 0 ? "holds" : "maps");
            ok = false;
        } else if (!unlink_blind_ok(&blind, o->uid, e[i].st.st_uid, e[i].st.st_mode, why,
                                    sizeof(why))) {
            unlink_say(res, UNLINK_REFUSED, EACCES, "cannot prove it unused: %s", why);
            ok = false;
        }
    }
    free(q);
    return ok;
}

/* Entry e of the folder fd, pinned (its own fd, the same file as read)
 * under the kernel's lease: unlinked when unlink_it, while the lease holds
 * off any open of it. Returns 0 (done, or it is gone), EBUSY when it is
 * open somewhere, even in a process the holder search could not see
 * (unlink_lease_take), or another errno. A file that cannot be leased
 * (UNLINK_LEASE_UNKNOWN, or one the caller may not read) is left to the
 * other checks, as a file segment is. */
static int lease_entry(int fd, const struct entry *e, bool unlink_it)
{
    int pin = openat(fd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (pin < 0 && errno == ENOENT)
        return 0;
    if (pin < 0 && errno != EACCES && errno != EPERM)
        return errno;
    struct stat st;
    struct unlink_lease_state ls;
    enum unlink_lease lease = UNLINK_LEASE_UNKNOWN;
    int err = 0;
    if (pin >= 0 && (fstat(pin, &st) != 0 || st.st_dev != e->st.st_dev ||
                     st.st_ino != e->st.st_ino))
        err = ESTALE;
    else if (pin >= 0 && (lease = unlink_lease_take(pin, &ls)) == UNLINK_LEASE_BUSY)
        err = EBUSY;
    else if (unlink_it && unlinkat(fd, e->name, 0) != 0 && errno != ENOENT)
        err = errno;
    if (lease == UNLINK_LEASE_HELD)
        unlink_lease_drop(pin, &ls);
    if (pin >= 0)
        close(pin);
    return err;
}

/* No file of the folder is open anywhere, as far as the kernel's leases
 * tell; false (res filled) when one is, or cannot be checked. */
static bool none_open(int fd, const struct entry *e, size_t n, struct unlink_result *res)
{
    for (size_t i = 0; i < n; i++) {
        int err = lease_entry(fd, &e[i], false);
        if (err == EBUSY)
            unlink_say(res, UNLINK_REFUSED, err, "in use: a file inside it is open in a process "
                       "the search could not see (the kernel refuses a lease on it)");
        else if (err == ESTALE)
            unlink_say(res, UNLINK_REFUSED, err, "a file inside it changed while being checked");
        else if (err)
            unlink_say(res, UNLINK_REFUSED, err, "cannot open a file inside it to check it: %s",
                       strerror(err));
        if (err)
            return false;
    }
    return true;
}

void unlinkdir_in(const struct unlink_opts *o, const struct unlink_target *t, int dir,
                  const char *base, struct unlink_result *res)
{
    struct stat st;
    if (!unlink_examine(dir, base, &st, res))
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink_say(res, UNLINK_REFUSED, EPERM, "no longer a folder");
        return;
    }
    if (st.st_dev != t->dev || st.st_ino != t->ino) {
        unlink_say(res, UNLINK_REFUSED, ESTALE, "replaced since the scan");
        return;
    }
    if (!unlink_owner_ok(o->uid, t->ns, st.st_uid, UNLINK_OWNED_FOLDER, res))
        return;
    int fd = openat(dir, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        unlink_say(res, errno == ENOENT ? UNLINK_GONE : UNLINK_REFUSED, errno,
            "cannot open it to check it: %s", strerror(errno));
        return;
    }
    struct stat fst;
    struct entry *e = NULL;
    size_t n = 0;
    bool ok = false;
    if (fstat(fd, &fst) != 0 || fst.st_dev != t->dev || fst.st_ino != t->ino)
        unlink_say(res, UNLINK_REFUSED, ESTALE, "changed while being checked");
    else
        ok = read_entries(fd, &fst, t, o->uid, &e, &n, res) && nobody_holds(o, e, n, res) &&
             none_open(fd, e, n, res);
    struct statvfs before;
    bool measured = false;
    int err = 0;
    if (ok) {
        res->alloc = 0;
        for (size_t i = 0; i < n; i++)
            res->alloc += (uint64_t)e[i].st.st_blocks * 512u;
        if (o->dry_run) {
            unlink_say(res, UNLINK_WOULD, 0, "every check passed (a folder of %zu file%s)", n,
                n == 1 ? "" : "s");
        } else {
            measured = fstatvfs(dir, &before) == 0;
            for (size_t i = 0; i < n && !err; i++)
                err = lease_entry(fd, &e[i], true);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(e[i].name);
    free(e);
    close(fd);
    if (!ok || o->dry_run)
        return;
    if (err == EBUSY || err == ESTALE) {
        unlink_say(res, UNLINK_REFUSED, err, "a file inside it was opened or replaced while the "
                   "folder was being removed: it and the files after it are kept");
        return;
    }
    if (err) {
        unlink_say(res, UNLINK_FAILED, err, "unlink of a file inside it failed: %s", strerror(err));
        return;
    }
    if (unlinkat(dir, base, AT_REMOVEDIR) != 0) {
        err = errno;
        unlink_say(res, UNLINK_FAILED, err, "its files were removed, the folder not: %s", strerror(err));
        return;
    }
    if (measured)
        unlink_measure_freed(dir, &before, res);
    unlink_say(res, UNLINK_REMOVED, 0, "%s", t->why ? t->why : "removed");
}
