/* The node view (--all, doc/shmwatch.1 "THE NODE VIEW"): every shm mount of
 * every mount namespace the watcher can read, each mount identified by its
 * device and naming the containers that see it, each container with its own
 * memory cgroup.
 *
 * How it is read: a first phase over the scan's pid list (the one listing
 * of /proc, which the walk then reads) reads each process's mount namespace
 * link, and for each distinct mount namespace one mountinfo (through one
 * member), both kept in the scan's nsmap (so the walk reads neither again). A mount
 * is a tmpfs at /dev/shm, /run/shm or a --mount path inside a namespace; one
 * device seen by several namespaces is one mount. Its size is read through
 * the root of a member of a namespace that sees it (a struct sysroot opened
 * on that member; another member is tried when one has exited). After the
 * walk, each mount namespace other than the host's is given its container
 * (collect/containers.h) from the cgroup of its first member that names
 * one (one that names none decides only when no member does), and each
 * process the container of its mount namespace.
 *
 * Without --all the same struct says what the one watched world is: every
 * mount the host's (no container), every process the host's. */
#ifndef SHMWATCH_NODE_H
#define SHMWATCH_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/cgroup.h"
#include "collect/containers.h"
#include "collect/files.h"
#include "collect/holders.h"
#include "collect/mounts.h"
#include "collect/nsmap.h"
#include "collect/procs.h"
#include "util/sysroot.h"
#include "util/warn.h"

/* "Not in a container": the host's (or a mount namespace that is none). */
#define NODE_HOST ((size_t)-1)

/* One container (or a private mount namespace that is no container: its
 * info.runtime RUNTIME_NONE and id NULL) that sees at least one shm mount of
 * its own, or is a runtime's container. */
struct node_ctr {
    struct container_info info; /* names as found, escape when writing */
    pid_t pid;                  /* a host pid inside it (the member read) */
    unsigned long mntns;        /* its mount namespace */
    struct cgroup_info cgroup;  /* its memory cgroup (present false: none found) */
};

/* What the node view adds to each mount (indexed like scan->mounts). */
struct node_mount {
    char id[32];    /* "MAJ:MIN" of its device: unique in a snapshot, stable */
    size_t *ctrs;   /* indexes into ctrs of the containers that see it, ascending */
    size_t nctrs;
    size_t owner;   /* whose cgroup and budget it is: NODE_HOST (the host's,
                     * scan->cgroup) or a container's index (node_owner_of) */
    bool host_sees; /* the host's own mount namespace shows it */
};

struct scan_node {
    bool all;               /* --all: this is the node view */
    struct node_ctr *ctrs;  /* host first is implicit: these are the others */
    size_t nctrs, ctrs_cap;
    struct node_mount *mounts; /* one per scan->mounts item */
    size_t nmounts;
    size_t *proc_ctr;       /* per scan->procs item: its container, or NODE_HOST */
    size_t nprocs;
    unsigned long host_mntns; /* the host's mount namespace (the watcher's), 0 unknown */
    /* Per mount found by node_discover (indexed like scan->mounts), NULL
     * without --all: the process through whose root (/proc/PID/root) its
     * size was read and its directory is listed, with its start time, so
     * that the gauges and an action pin the same process (util/sysroot.h,
     * sysroot_pin) and refuse once its pid is another's (pid_start 0: read
     * through none); own: the watcher's own mount namespace shows it (then
     * it is reached by its path). */
    struct node_read {
        pid_t pid;
        unsigned long long pid_start;
        bool own;
        bool propagates;       /* its namespace's mountinfo tags it shared: or master: */
        bool btime_ok;
        struct timespec btime; /* birth of its root (statx) */
    } *read;
    /* Per mount (indexed like read): the view its size was read through
     * (util/sysroot.h, pinned to that process; kept closed when fds are
     * short, sysroot_spare), for the scan's listing (node_files_collect,
     * _finish); closed by node_roots_close. */
    struct sysroot *roots;
    size_t nroots;
    /* The mount namespaces whose mountinfo was read before the walk. */
    struct node_ns *ns;
    size_t nns, nscap;
    size_t unreadable;      /* processes whose mount namespace could not be read */
    size_t cut;             /* mount namespaces whose mountinfo passes READ_TEXT_MAX */
};

/* --- Filling it (collect/scan.c) ------------------------------------- */

/* Without --all: every mount the host's, with its id. */
void node_single(struct scan_node *n, const struct mount_list *ml);

/* --all, before the walk: the first phase above over pids (the scan's
 * listing of sys->proc, ascending; sys: the watcher's own view,
 * sysroot_open_system(.., 0)) into map (nsmap_init'ed with no devices), and
 * the shm mounts (at extra's paths, else /dev/shm and /run/shm) with their
 * statvfs into ml, which must be empty. */
void node_discover(struct scan_node *n, const struct sysroot *sys, const pid_t *pids, size_t npids,
                   struct nsmap *map, const char *const *extra, size_t nextra,
                   struct mount_list *ml, struct warnings *w);

/* After nsmap_watch on ml's devices: each mount's propagation and birth
 * time, as node_discover read them, into map->reach. */
void node_facts(const struct scan_node *n, struct nsmap *map);

/* --all: files_collect and files_finish (collect/files.h) of each mount
 * below the root it was read through (the same process, or none: not
 * listed, with a warning); files_finish as its two halves, the holders'
 * facts taken once for every mount. */
void node_files_collect(const struct scan_node *n, const struct sysroot *sys,
                        struct mount_list *ml, struct file_list *out, struct warnings *w);
void node_files_finish(const struct scan_node *n, const struct sysroot *sys,
                       const struct mount_list *ml, struct file_list *fl,
                       const struct holder_list *hl);

/* Closes the roots kept since node_discover (after node_files_finish). */
void node_roots_close(struct scan_node *n);

/* The dashboard's gauges between scans (--all): per mount read through a
 * process's root, a view of that process (util/sysroot.h, sysroot_pin:
 * its pidfd and start time, kept closed when fds are short), kept from
 * scan to scan while the process (pid and start time) and the device stay
 * the same, so that a refresh is a check of the view and one open below
 * its root. own: the watcher's own mount, refreshed below sys. */
struct node_gauge {
    struct sysroot view;
    dev_t dev;
    bool own;
};

/* After a scan: *g (*ng items) becomes the views of ml's mounts (read:
 * that scan's node.read, indexed like ml); views of the same process,
 * start time and device are kept, the others closed, new ones opened
 * through sys (which must outlive them). */
void node_gauges_update(struct node_gauge **g, size_t *ng, const struct node_read *read,
                        const struct sysroot *sys, const struct mount_list *ml);

/* mounts_refresh (the cheap statvfs poll) of each mount through its view
 * (g indexed like ml); a mount whose process has exited (or whose pid is
 * now another's) gets stat_ok false, stat_err ESRCH. */
void node_gauges_refresh(const struct node_gauge *g, const struct sysroot *sys,
                         struct mount_list *ml);

void node_gauges_free(struct node_gauge **g, size_t *ng);

/* --all, after the walk: the container of each mount namespace that sees a
 * mount (read below sys->proc; the runtimes' state below sys->host), its
 * cgroup (self_mi: where the hierarchies are), each mount's containers and
 * owner, each process's container. */
void node_assign(struct scan_node *n, const struct sysroot *sys, const struct mountinfo *self_mi,
                 const struct mount_list *ml, const struct proc_list *pl, struct warnings *w);

void node_free(struct scan_node *n);

/* Whose cgroup and budget mount m is: the host's when the host sees it
 * (--ipc=host), else that of the container that sees it and is charged for
 * the most shared memory outside the mounts it alone sees (a tmpfs page is
 * charged to the cgroup that first wrote it: a pod's workload rather than
 * its pause container, the container that writes into another's shm with
 * --ipc=container:X; a container's own --tmpfs /run/shm says nothing of who
 * wrote the shared one), the first one on a tie. ml: the scan's mounts,
 * indexed like n->mounts, whose used bytes are those of the mounts alone. */
size_t node_owner_of(const struct scan_node *n, const struct mount_list *ml,
                     const struct node_mount *m);

/* The container of process index i (NODE_HOST when none or unknown). */
size_t node_proc_ctr(const struct scan_node *n, size_t proc_index);

/* The container's cgroup for mount i: the owner's, or NULL for the host's. */
const struct node_ctr *node_owner(const struct scan_node *n, size_t mount);
/* The same as an index into n->ctrs, or NODE_HOST. */
size_t node_owner_index(const struct scan_node *n, size_t mount);

/* Test hook (tests/helpers/shmwatch_hooked.c; never set by the program):
 * called with the pid of the member of a mount namespace about to be read,
 * where node.c tries the next member when that one has exited: the first
 * member whose mountinfo node_discover reads (NODE_HOOK_MOUNTINFO), each
 * member whose cgroup names the namespace's container (NODE_HOOK_CONTAINER).
 * A test kills the member there. */
enum node_hook_at { NODE_HOOK_MOUNTINFO, NODE_HOOK_CONTAINER };
typedef void (*node_member_hook)(enum node_hook_at at, pid_t pid);
void node_set_test_member_hook(node_member_hook fn);

#endif
