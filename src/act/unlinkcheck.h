/* What both removers share (act/unlink.c, the files; act/unlinkdir.c, a
 * folder segment whole): the target as the scan saw it, the options of a
 * run, the result of one item and its sentence, and the checks they make
 * alike (the first look at a name, who may remove it, whether a holder
 * search that could not read every process still proves a file unused).
 * So neither remover includes the other. */
#ifndef SHMWATCH_UNLINKCHECK_H
#define SHMWATCH_UNLINKCHECK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/walk.h"
#include "model/model.h"

struct actlog;
struct actns;
struct stat;
struct sysroot;

/* A segment chosen for removal, as the scan saw it. */
struct unlink_target {
    char *mount;        /* mount point as the watched process sees it: reached
                         * below the seam's root (sysroot_open_below), or
                         * below ns's root (actns_opendir) */
    size_t mount_index; /* the mount's index in the scan's list */
    char *name;         /* below the mount; raw bytes */
    dev_t dev;
    ino_t ino;
    uid_t uid;
    int64_t mtime;      /* modification time as scanned (whole seconds, as the
                         * model keeps it): a later one means something wrote
                         * to it since, so it is in use */
    uint64_t alloc;
    enum seg_state state;
    char *why;          /* why it is garbage, a sentence */
    const char *refuse; /* set when planning refused it: never touched, reported */
    bool folder;        /* a folder segment (joblib's): removed whole, see unlinkdir.h */
    const struct actns *ns; /* the container it is in (clean --pid, --all), not
                             * owned: mount is reached from its root and the
                             * item refused once it has exited; NULL: the
                             * run's seam (unlink_opts.sys) */
};

enum unlink_outcome {
    UNLINK_REMOVED,
    UNLINK_WOULD,       /* dry run: every check passed */
    UNLINK_GONE,        /* the name had already disappeared */
    UNLINK_REFUSED,     /* a check failed: left in place */
    UNLINK_FAILED,      /* unlinkat (or opening the mount) failed */
};

struct unlink_result {
    enum unlink_outcome outcome;
    int err;            /* errno behind a failure or refusal, else 0 */
    char reason[320];   /* what happened and why, one sentence */
    bool caveat;        /* REMOVED, but the reason says something went otherwise
                         * than planned (another name keeps the file; the mount's
                         * use did not fall) */
    uint64_t alloc;     /* allocation of the inode when checked */
    uint64_t freed;     /* fall of the mount's used bytes across the unlinkat (statvfs) */
    pid_t holder;       /* REFUSED for being in use: a process that holds it */
};

struct unlink_opts {
    /* The system the plan's scan read (util/sysroot.h): the mounts are
     * opened below its root, the holders searched in its proc; in a --pid
     * view, an item is refused once sysroot_pid_alive says the watched
     * process is gone (its root is then no longer the one scanned). */
    const struct sysroot *sys;
    uid_t uid;            /* the caller's effective uid */
    bool dry_run;         /* check everything, remove nothing, log nothing */
    struct actlog *log;   /* NULL: not logged */
};

/* Why an entry of this type is never removed (the plan's refusal and the
 * re-check's); NULL for a regular file. */
const char *unlink_type_refusal(enum file_type t);

/* The removers' first look at base in dir, never following a link: true
 * with *st filled, or false with res saying "already gone" or why it could
 * not be examined. */
bool unlink_examine(int dir, const char *base, struct stat *st, struct unlink_result *res);

/* res->freed: what the use of dir's mount fell by since before (its
 * fstatvfs before the unlink); left as it is when dir cannot be measured. */
struct statvfs;
void unlink_measure_freed(int dir, const struct statvfs *before, struct unlink_result *res);

/* Sets res's outcome, errno and reason (a printf format), for the removers
 * (unlink.c, unlinkdir.c). */
void unlink_say(struct unlink_result *res, enum unlink_outcome o, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* What an owner check is about, for its sentence. */
enum unlink_owned {
    UNLINK_OWNED_FILE,      /* a file segment (unlink.c) */
    UNLINK_OWNED_FOLDER,    /* a folder segment itself (unlinkdir.c) */
    UNLINK_OWNED_IN_FOLDER, /* a file inside a folder segment */
};

/* The owner checks of both removers, in one place: an entry of host uid
 * owner may be removed by the caller (uid caller) only when the caller is
 * root or its owner, and, in a container (ns not NULL), only when that
 * container's user namespace maps owner (actns_maps_uid: a file of another
 * owner is not the container's own). true, or false with res REFUSED
 * (EPERM) and the sentence for what. */
bool unlink_owner_ok(uid_t caller, const struct actns *ns, uid_t owner, enum unlink_owned what,
                     struct unlink_result *res);

/* Whether a search that could not read some processes still proves that
 * nobody holds a file of this owner and mode: false, with the reason in
 * why, when an unread process that can reach the mount (see struct
 * holder_blind) could have opened it. For root any such process refuses.
 * Other callers cannot see root's processes (nor non-dumpable programs)
 * and accept that; they refuse when one of their own processes, or of
 * another user while the mode lets others open the file, was unread. */
bool unlink_blind_ok(const struct holder_blind *b, uid_t caller, uid_t owner, mode_t mode,
                     char *why, size_t n);

/* The kernel's own answer to "is it open anywhere", asked right before an
 * unlink: a write lease on a file is granted only while no other open file
 * refers to its inode (an fd or a mapping, a read-only one too on kernels
 * that count readers), whoever holds it: a process of another user or of a
 * pid namespace the /proc search could not see. pin is the remover's own
 * open fd of the file. UNLINK_LEASE_HELD: taken, held until
 * unlink_lease_drop (an open of the file meanwhile waits for the drop);
 * UNLINK_LEASE_BUSY: the file is open elsewhere; UNLINK_LEASE_UNKNOWN: the
 * kernel cannot say (leases disabled, a pin of O_PATH, a file system
 * without leases), and the other checks decide alone. */
enum unlink_lease { UNLINK_LEASE_HELD, UNLINK_LEASE_BUSY, UNLINK_LEASE_UNKNOWN };
struct unlink_lease_state {
    struct sigaction old_sigio; /* a lease break signals its holder: ignored while held */
};
enum unlink_lease unlink_lease_take(int pin, struct unlink_lease_state *ls);
void unlink_lease_drop(int pin, struct unlink_lease_state *ls);

const char *unlink_outcome_name(enum unlink_outcome o);

#endif
