#include "act/unlink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "act/actlog.h"
#include "act/actns.h"
#include "act/procid.h"
#include "act/unlinkdir.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/xalloc.h"

/* Opens the directory that holds the name's last component, walking down
 * from the mount without following any link; *base is that component. */
static int open_parent(int mountfd, const char *name, const char **base, int *err)
{
    int dir = dup(mountfd);
    if (dir < 0) { /* out of descriptors: that is the reason, not the path */
        *err = errno;
        return -1;
    }
    const char *p = name;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
            close(dir);
            *err = EINVAL;
            return -1;
        }
        if (!slash) {
            *base = p;
            return dir;
        }
        char *comp = xstrndup(p, len);
        int sub = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *err = errno;
        free(comp);
        close(dir);
        if (sub < 0)
            return -1;
        dir = sub;
        p = slash + 1;
    }
}

static void probe(struct unlink_run *r)
{
    struct unlink_plan *p = r->plan;
    size_t from = r->next;
    for (size_t i = from; i < p->n; i++) {
        r->q[i].dev = p->items[i].dev;
        r->q[i].ino = p->items[i].ino;
    }
    int rc = holders_find_inodes(r->o.sys, r->q + from, p->n - from, getpid(), &r->blind);
    if (rc < 0) {
        /* No process table: nothing can be proven free. */
        r->blind.denied = (size_t)-1;
        r->blind.nuids = 0;
        r->blind.more_uids = true;
    }
    r->probed = clock_now();
    r->probe_valid = true;
}

static void held_reason(struct unlink_run *r, const struct inode_query *q,
                        struct unlink_result *res)
{
    struct procid who;
    bool named = procid_read(r->o.sys->proc, q->pid, &who) == 0;
    char fd[32] = "maps it";
    if (q->fd >= 0)
        snprintf(fd, sizeof(fd), "holds it open (fd %d)", q->fd);
    res->holder = q->pid;
    unlink_say(res, UNLINK_REFUSED, EBUSY, "in use: pid %d (%s, uid %lu) %s", (int)q->pid,
        named ? who.comm : "?", named ? (unsigned long)who.euid : 0ul, fd);
}

/* The checks of item t's name in dir before it is removed: a regular file,
 * the one scanned (device and inode), an owner the remover may act for, not
 * written to since the scan. Returns a pin on it, an fd of its own, so that
 * what is checked and what is removed are one file (its stat in *pst); -1
 * with res said. */
static int pin_target(const struct unlink_run *r, const struct unlink_target *t, int dir,
                      const char *base, struct stat *pst, struct unlink_result *res)
{
    struct stat st;
    if (!unlink_examine(dir, base, &st, res))
        return -1;
    res->alloc = (uint64_t)st.st_blocks * 512u;
    if (!S_ISREG(st.st_mode)) {
        unlink_say(res, UNLINK_REFUSED, EPERM, "%s", unlink_type_refusal(file_type_of(st.st_mode)));
        return -1;
    }
    if (st.st_dev != t->dev || st.st_ino != t->ino) {
        unlink_say(res, UNLINK_REFUSED, ESTALE, "replaced since the scan (inode %llu, scanned %llu)",
            (unsigned long long)st.st_ino, (unsigned long long)t->ino);
        return -1;
    }
    if (!unlink_owner_ok(r->o.uid, t->ns, st.st_uid, UNLINK_OWNED_FILE, res))
        return -1;
    int pin = openat(dir, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (pin < 0 && (errno == EACCES || errno == EPERM))
        pin = openat(dir, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (pin < 0) {
        int err = errno;
        if (err == ENOENT)
            unlink_say(res, UNLINK_GONE, err, "already gone");
        else
            unlink_say(res, UNLINK_REFUSED, err, "cannot open it to check it: %s", strerror(err));
        return -1;
    }
    if (fstat(pin, pst) != 0 || !S_ISREG(pst->st_mode) || pst->st_dev != t->dev ||
        pst->st_ino != t->ino) {
        unlink_say(res, UNLINK_REFUSED, ESTALE, "changed while being checked");
        goto refuse;
    }
    if ((int64_t)pst->st_mtim.tv_sec > t->mtime) {
        unlink_say(res, UNLINK_REFUSED, EBUSY, "written to since the scan: something is using it");
        goto refuse;
    }
    return pin;
refuse:
    close(pin);
    return -1;
}

/* Whether no process holds item i (its pinned stat st): none in the holder
 * search (fresh enough, one for the plan's items), and none the search
 * could not see may have it. False with res said. */
static bool proven_unused(struct unlink_run *r, size_t i, const struct stat *st,
                          struct unlink_result *res)
{
    if (!r->probe_valid || clock_now() - r->probed > UNLINK_PROBE_MAX_AGE_S)
        probe(r);
    if (r->q[i].pid) {
        held_reason(r, &r->q[i], res);
        return false;
    }
    char why[200];
    if (!unlink_blind_ok(&r->blind, r->o.uid, st->st_uid, st->st_mode, why, sizeof(why))) {
        unlink_say(res, UNLINK_REFUSED, EACCES, "cannot prove it unused: %s", why);
        return false;
    }
    return true;
}

/* Removes item t's name, pinned and checked, under a lease: the kernel's
 * last word that no open file anywhere refers to it, held across the
 * unlink so that nothing opens it in between unseen. Closes pin, the last
 * reference (tmpfs frees the pages then), and says in res what was done
 * and what the mount's use fell by. */
static void remove_pinned(const struct unlink_run *r, const struct unlink_target *t, int dir,
                          const char *base, int pin, struct unlink_result *res)
{
    struct unlink_lease_state ls;
    enum unlink_lease lease = unlink_lease_take(pin, &ls);
    struct statvfs before;
    bool measured = false;
    int unlinked = -1;
    if (lease == UNLINK_LEASE_BUSY) {
        unlink_say(res, UNLINK_REFUSED, EBUSY, "in use: open in a process the search could not "
                                               "see (the kernel refuses a lease on it)");
    } else if (r->o.dry_run) {
        unlink_say(res, UNLINK_WOULD, 0, "every check passed");
    } else {
        measured = fstatvfs(dir, &before) == 0;
        unlinked = unlinkat(dir, base, 0);
        int err = errno;
        if (unlinked != 0 && err == ENOENT)
            unlink_say(res, UNLINK_GONE, err, "already gone");
        else if (unlinked != 0)
            unlink_say(res, UNLINK_FAILED, err, "unlink failed: %s", strerror(err));
    }
    if (lease == UNLINK_LEASE_HELD)
        unlink_lease_drop(pin, &ls);
    struct stat st;
    bool ours = unlinked == 0 && fstat(pin, &st) == 0 && st.st_nlink == 0;
    close(pin);
    if (unlinked != 0)
        return;
    if (measured)
        unlink_measure_freed(dir, &before, res);
    res->caveat = !ours || (res->freed == 0 && res->alloc > 0);
    if (!ours)
        unlink_say(res, UNLINK_REMOVED, 0, "the name was removed but another name keeps the file");
    else if (res->caveat)
        unlink_say(res, UNLINK_REMOVED, 0, "removed, but the mount's use did not fall: a process "
                                    "this search could not see may still hold it");
    else
        unlink_say(res, UNLINK_REMOVED, 0, "%s", t->why ? t->why : "removed");
}

/* The checks and the unlinkat of item i, given its directory. */
static void unlink_in(struct unlink_run *r, size_t i, int dir, const char *base,
                      struct unlink_result *res)
{
    const struct unlink_target *t = &r->plan->items[i];
    struct stat st;
    int pin = pin_target(r, t, dir, base, &st, res);
    if (pin < 0)
        return;
    if (proven_unused(r, i, &st, res))
        remove_pinned(r, t, dir, base, pin, res);
    else
        close(pin);
}

static void log_result(struct unlink_run *r, const struct unlink_target *t,
                       const struct unlink_result *res)
{
    if (!r->o.log || r->o.dry_run)
        return;
    char *path = str_printf("%s/%s", t->mount, t->name);
    struct actlog_entry e = {
        .action = "unlink",
        .target = path,
        .owner = (long long)t->uid,
        .bytes = res->outcome == UNLINK_REMOVED ? res->freed : t->alloc,
        .result = unlink_outcome_name(res->outcome),
        .detail = res->reason,
        .container = t->ns ? t->ns->label : NULL,
    };
    actlog_write(r->o.log, &e);
    free(path);
}

static void (*test_pause)(void);

void unlink_set_test_pause(void (*pause)(void))
{
    test_pause = pause;
}

/* Refuses to act in container ns, whose liveness could not be told (err:
 * -errno, out of fds say); returns -1. */
static int refuse_unknown(struct unlink_result *res, const struct actns *ns, int err)
{
    unlink_say(res, UNLINK_REFUSED, -err,
        "cannot tell whether its container still runs (pid %d: %s): nothing done there",
        (int)ns->root.pid, strerror(-err));
    return -1;
}

/* The mount's directory: in a container (t->ns), below its root and only
 * while it is still there (checked before and after the open, so that what
 * is opened is never a newcomer's view); else below the run's seam, while
 * its watched process (if any) is still the one scanned. Returns the fd, or
 * -1 with res saying why. */
static int open_mount(const struct unlink_run *r, const struct unlink_target *t,
                      struct unlink_result *res)
{
    int fd;
    if (t->ns) {
        int live = actns_check(t->ns);
        if (live < 0)
            return refuse_unknown(res, t->ns, live);
        if (live == 0) {
            unlink_say(res, UNLINK_REFUSED, ESRCH,
                "its container exited (pid %d is gone): nothing done there",
                (int)t->ns->root.pid);
            return -1;
        }
        fd = actns_opendir(t->ns, t->mount);
        live = fd >= 0 ? actns_check(t->ns) : 1;
        if (live < 0) {
            close(fd);
            return refuse_unknown(res, t->ns, live);
        }
        if (live == 0 || fd == -ESRCH) {
            if (fd >= 0)
                close(fd);
            unlink_say(res, UNLINK_REFUSED, ESRCH,
                "its container exited while it was being checked (pid %d is gone)",
                (int)t->ns->root.pid);
            return -1;
        }
        if (fd < 0)
            errno = -fd;
    } else {
        int live = sysroot_pid_check(r->o.sys);
        if (live < 0) {
            unlink_say(res, UNLINK_REFUSED, -live,
                "cannot tell whether the watched process %d still runs (%s): nothing done",
                (int)r->o.sys->pid, strerror(-live));
            return -1;
        }
        if (live == 0) {
            unlink_say(res, UNLINK_REFUSED, ESRCH,
                "the watched process %d has exited: its mounts are no longer the ones scanned",
                (int)r->o.sys->pid);
            return -1;
        }
        fd = sysroot_open_below(r->o.sys, t->mount, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    }
    if (fd < 0)
        unlink_say(res, UNLINK_FAILED, errno, "cannot open the mount %s: %s", t->mount,
            strerror(errno));
    return fd;
}

/* Item i in its mount, still the one scanned, and in the directory of its
 * name: a file segment's checks and unlink, or a folder segment's. */
static void unlink_at_mount(struct unlink_run *r, size_t i, struct unlink_result *res)
{
    const struct unlink_target *t = &r->plan->items[i];
    int mountfd = open_mount(r, t, res);
    if (mountfd < 0)
        return; /* res says why */
    struct stat mst;
    const char *base;
    int err = 0, dir = -1;
    if (fstat(mountfd, &mst) != 0 || mst.st_dev != t->dev)
        unlink_say(res, UNLINK_REFUSED, ESTALE, "the mount at %s is no longer the one scanned",
            t->mount);
    else if ((dir = open_parent(mountfd, t->name, &base, &err)) < 0)
        unlink_say(res, UNLINK_REFUSED, err,
            "a directory on its path is a link, changed or is gone (%s)", strerror(err));
    else if (t->folder)
        unlinkdir_in(&r->o, t, dir, base, res);
    else
        unlink_in(r, i, dir, base, res);
    if (dir >= 0)
        close(dir);
    close(mountfd);
}

void unlink_begin(struct unlink_run *r, struct unlink_plan *p, const struct unlink_opts *o)
{
    memset(r, 0, sizeof(*r));
    r->o = *o;
    r->plan = p;
    r->q = xcalloc(p->n, sizeof(*r->q));
}

bool unlink_step(struct unlink_run *r, struct unlink_result *res, size_t *index)
{
    if (r->next >= r->plan->n)
        return false;
    size_t i = r->next;
    const struct unlink_target *t = &r->plan->items[i];
    memset(res, 0, sizeof(*res));
    *index = i;
    if (t->refuse) {
        unlink_say(res, UNLINK_REFUSED, EPERM, "%s", t->refuse);
    } else {
        if (!r->paused && test_pause) {
            test_pause(); /* once per run; the holder search is then repeated */
            r->probe_valid = false;
        }
        r->paused = true;
        unlink_at_mount(r, i, res);
    }
    switch (res->outcome) {
    case UNLINK_REMOVED:
        r->removed++;
        r->freed += res->freed;
        r->removed_alloc += res->alloc;
        break;
    case UNLINK_WOULD:
        r->would++;
        r->removed_alloc += res->alloc;
        break;
    case UNLINK_GONE: r->gone++; break;
    case UNLINK_REFUSED: r->refused++; break;
    case UNLINK_FAILED: r->failed++; break;
    }
    log_result(r, t, res);
    r->next++;
    return true;
}

void unlink_invalidate(struct unlink_run *r)
{
    r->probe_valid = false;
}

void unlink_end(struct unlink_run *r)
{
    free(r->q);
    r->q = NULL;
}

void unlink_plan_free(struct unlink_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].mount);
        free(p->items[i].name);
        free(p->items[i].why);
    }
    free(p->items);
    memset(p, 0, sizeof(*p));
}

