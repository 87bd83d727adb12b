/* What both removers share: outcome names, the sentence of a result, the
 * refusal of a file type, the first look at a name, the owner checks, whether a blind
 * holder search still proves a file unused, and what a removal freed (act/unlinkcheck.h). */
#include "act/unlinkcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "act/actns.h"

const char *unlink_outcome_name(enum unlink_outcome o)
{
    switch (o) {
    case UNLINK_REMOVED: return "removed";
    case UNLINK_WOULD: return "would remove";
    case UNLINK_GONE: return "gone";
    case UNLINK_REFUSED: return "refused";
    default: return "failed";
    }
}

void unlink_say(struct unlink_result *res, enum unlink_outcome o, int err, const char *fmt, ...)
{
    res->outcome = o;
    res->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
}

const char *unlink_type_refusal(enum file_type t)
{
    switch (t) {
    case FT_REGULAR: return NULL;
    case FT_SYMLINK: return "a symbolic link (never followed or removed)";
    case FT_DIR: return "a directory (never removed)";
    case FT_FIFO: return "a FIFO (never removed)";
    case FT_SOCKET: return "a socket (never removed)";
    default: return "not a regular file (never removed)";
    }
}

bool unlink_blind_ok(const struct holder_blind *b, uid_t caller, uid_t owner, mode_t mode,
                     char *why, size_t n)
{
    if (b->nuids == 0 && !b->more_uids)
        return true; /* every process was read, or the unread ones cannot reach the mount */
    bool others_may_open = (mode & 0066) != 0;
    for (size_t i = 0; i < b->nuids; i++) {
        uid_t u = b->uids[i];
        if (caller != 0 && u == 0)
            continue; /* root's processes: beyond an ordinary user's sight */
        if (caller == 0 || u == owner || u == caller || others_may_open) {
            snprintf(why, n, "a process of uid %lu that can reach this mount could not be "
                             "searched%s",
                     (unsigned long)u, caller ? "; run as root to check every process" : "");
            return false;
        }
    }
    if (b->more_uids && (caller == 0 || others_may_open)) {
        snprintf(why, n, "processes of several users that can reach this mount could not be "
                         "searched");
        return false;
    }
    return true;
}

bool unlink_examine(int dir, const char *base, struct stat *st, struct unlink_result *res)
{
    if (fstatat(dir, base, st, AT_SYMLINK_NOFOLLOW) == 0)
        return true;
    if (errno == ENOENT)
        unlink_say(res, UNLINK_GONE, ENOENT, "already gone");
    else
        unlink_say(res, UNLINK_FAILED, errno, "cannot examine it: %s", strerror(errno));
    return false;
}

bool unlink_owner_ok(uid_t caller, const struct actns *ns, uid_t owner, enum unlink_owned what,
                     struct unlink_result *res)
{
    unsigned long u = (unsigned long)owner;
    if (caller != 0 && owner != caller) {
        if (what == UNLINK_OWNED_IN_FOLDER)
            unlink_say(res, UNLINK_REFUSED, EPERM, "a file inside it is owned by uid %lu, not by you",
                u);
        else
            unlink_say(res, UNLINK_REFUSED, EPERM,
                "owned by uid %lu, not by you (uid %lu): only its owner or root may remove it", u,
                (unsigned long)caller);
        return false;
    }
    if (ns && !actns_maps_uid(ns, owner)) {
        if (what == UNLINK_OWNED_IN_FOLDER)
            unlink_say(res, UNLINK_REFUSED, EPERM, "a file inside it is owned by uid %lu, which its "
                "container's user namespace does not map", u);
        else
            unlink_say(res, UNLINK_REFUSED, EPERM, "owned by uid %lu, which its container's user "
                "namespace does not map: not its container's %s", u,
                what == UNLINK_OWNED_FOLDER ? "folder" : "file");
        return false;
    }
    return true;
}

enum unlink_lease unlink_lease_take(int pin, struct unlink_lease_state *ls)
{
    /* Whoever opens the file while the lease is held makes the kernel
     * signal the holder (SIGIO, whose default ends the process): ignored
     * until the drop, which lets that open go on. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    if (sigaction(SIGIO, &ign, &ls->old_sigio) != 0)
        return UNLINK_LEASE_UNKNOWN;
    if (fcntl(pin, F_SETLEASE, F_WRLCK) == 0)
        return UNLINK_LEASE_HELD;
    int err = errno;
    sigaction(SIGIO, &ls->old_sigio, NULL);
    return err == EAGAIN ? UNLINK_LEASE_BUSY : UNLINK_LEASE_UNKNOWN;
}

void unlink_lease_drop(int pin, struct unlink_lease_state *ls)
{
    (void)fcntl(pin, F_SETLEASE, F_UNLCK);
    sigaction(SIGIO, &ls->old_sigio, NULL);
}

void unlink_measure_freed(int dir, const struct statvfs *before, struct unlink_result *res)
{
    struct statvfs after;
    if (fstatvfs(dir, &after) != 0)
        return;
    uint64_t u0 = (uint64_t)(before->f_blocks - before->f_bfree) * before->f_frsize;
    uint64_t u1 = (uint64_t)(after.f_blocks - after.f_bfree) * after.f_frsize;
    res->freed = u0 > u1 ? u0 - u1 : 0;
}
