/* Where each action of a plan happens: the watcher's own world, one
 * container's (clean/reap --pid) or, in the node view (--all), each mount's
 * and each process's own container. A view (act/actns.h) is opened once per
 * container, pinned to the process the scan saw there, and every unlink
 * target and signal target carries the view it acts through (its ns), so
 * that the re-checks before the action are made through that container's
 * root and refused once it has exited. Shared by the commands and the
 * dashboard. */
#ifndef SHMWATCH_ACTVIEWS_H
#define SHMWATCH_ACTVIEWS_H

#include <stdbool.h>
#include <stddef.h>

#include "act/actns.h"
#include "model/model.h"

enum actviews_mode { ACTVIEWS_OWN, ACTVIEWS_PID, ACTVIEWS_ALL };

struct actviews {
    enum actviews_mode mode;
    struct actns pid;   /* ACTVIEWS_PID: the container of --pid */
    struct actns host;  /* ACTVIEWS_ALL: the host's own world, the
                         * watcher's view, named "host" */
    struct actns *ctrs; /* ACTVIEWS_ALL: per scan->node.ctrs, its processes */
    size_t nctrs;
    struct actns *mounts; /* ACTVIEWS_ALL: per scan->mounts item the watcher's
                           * namespace does not show, the root it was read
                           * through (collect/node.h), named after its owner
                           * (label NULL for the others: the host's view) */
    size_t nmounts;
};

/* The watcher's own world: no view, every ns NULL. */
void actviews_own(struct actviews *v);

/* --pid: the view of pid through host, pinned to pid's start time now,
 * before the scan (which may be made through v->pid.root, the same view).
 * Returns 0, or -ESRCH / -errno (v is then as actviews_own). */
int actviews_open_pid(struct actviews *v, const struct sysroot *host, pid_t pid);

/* --all: after the node view's model m, a view of each of its containers,
 * of each mount the watcher's namespace does not show and of the host's
 * own world, each pinned to the process the scan read it through (a view
 * that cannot be opened still names its container and refuses every
 * action). */
void actviews_open_all(struct actviews *v, const struct model *m, const struct sysroot *host);

/* The view an action on mount i happens through: --pid's; with --all
 * the mount's, or the host's for one the watcher's namespace shows; NULL
 * for the watcher's own world. */
const struct actns *actviews_mount(const struct actviews *v, size_t mount);

/* A reap_where_fn (act/reap.h), ctx the views, for the scan m was built
 * on: with --pid only the processes of the view's mount namespace (a
 * zombie, which has none left, by its parent's); with --all every process,
 * each with its container's view (a zombie its parent's); else every
 * process, with no view. */
bool actviews_proc(void *ctx, const struct model *m, const struct proc *p, const struct actns **ns);

/* Sets each item's ns to the view of its mount (actviews_mount). */
struct unlink_plan;
void actviews_set_plan(const struct actviews *v, struct unlink_plan *p);

void actviews_close(struct actviews *v);

#endif
