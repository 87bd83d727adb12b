/* Where an action happens when it is not the watcher's own world: inside one
 * container's namespaces (clean and reap with --pid or --all). The view is
 * the root seam's (util/sysroot.h) opened on a process inside the container,
 * the "holder" that pins it: every re-check before an unlink walks from that
 * view's root, never from a "/proc/PID/root" string, and before every unlink
 * and every signal the holder must still be the process it was (pid and
 * start time). A holder that has exited means the container is gone, or its
 * pid may now be another process's: the action is refused, so a reused pid
 * never redirects an unlink or a signal. Signals go to host pids (the walk is
 * the host's); only the refusal and the label come from here. */
#ifndef SHMWATCH_ACTNS_H
#define SHMWATCH_ACTNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/sysroot.h"

struct actns {
    struct sysroot root; /* sysroot_pin on the holder: kept closed for want
                          * of fds when actviews spares it (sysroot_spare) */
    unsigned long mntns; /* the holder's mount namespace (inode), 0 when unknown:
                          * the processes an action there may signal */
    char *label;         /* the container's name, else its short id, else
                          * "pid N": raw bytes, escaped when written */
    /* The holder's user namespace's uid_map, as host uid ranges [start,
     * start + count): the owners whose files the container itself could
     * have made. Read when opened; all_uids set when the holder shares
     * the watcher's user namespace (every uid its own); a map that cannot
     * be read maps nothing. */
    struct actns_uids {
        unsigned long long start, count;
    } *uids;
    size_t nuids;
    bool all_uids;
};

/* Opens the view of pid through host (sysroot_pin). start: the start
 * time the scan saw for pid, 0 when not known; another one is -ESRCH (the
 * pid is another process's now). label: how to name it (NULL: looked up,
 * actns_label of the container pid is in as the host's runtimes know it).
 * Returns 0, -ESRCH, or -errno; on failure ns still names pid (label, or
 * "pid N") and every action through it is refused (actns_alive is false). */
int actns_open(struct actns *ns, const struct sysroot *host, pid_t pid, unsigned long long start,
               const char *label);

/* How a container is named in plans, results and the log: its name, else
 * its id's first 12 digits, else "pid N" (ci NULL: not in a container); a
 * container of a containerd namespace as "NAMESPACE/NAME" (container_label,
 * util/ctrref.h). A new string, raw bytes. */
struct container_info;
char *actns_label(const struct container_info *ci, pid_t pid);

/* Whether the view's holder is still the process it was opened on
 * (util/sysroot.h, sysroot_pid_check): 1 alive, 0 when it has exited (or
 * its pid is another's, or the view was never opened because it had),
 * -errno when it cannot be told (out of fds or memory): refused as well,
 * but not "exited". actns_alive: the answer is 1. */
int actns_check(const struct actns *ns);
bool actns_alive(const struct actns *ns);

/* True when the host uid owner is mapped into the view's user namespace: a
 * file of another owner cannot be its container's own (a user's rootless
 * container may bind any tmpfs it can reach, the host's /run say, at its
 * /dev/shm), so no action through the view touches it. Always true for a
 * container of the host's user namespace. */
bool actns_maps_uid(const struct actns *ns, uid_t owner);

/* Opens the directory at path, absolute as the container sees it (a mount
 * point from its mountinfo), below the view's root (sysroot_use: re-opened
 * when kept closed, refused once its holder has exited) with util/beneath.h's
 * open_beneath: nothing on the way leads out of the container (an absolute
 * link through /proc/PID/root would lead to the host's file of that name),
 * the last component is never a link. Returns the fd, or -errno (-ELOOP or
 * -ENOTDIR: the last component is a link; -EINVAL: path is not absolute). */
int actns_opendir(const struct actns *ns, const char *path);

/* "in LABEL": how a plan or a result line names where it acts (a new
 * string, the label escaped for a terminal). */
char *actns_where(const struct actns *ns);

void actns_close(struct actns *ns);

#endif
