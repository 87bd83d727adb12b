/* `reap` and the dashboard's K: ending orphaned DataLoader workers and
 * stuck torch_shm_managers, and helping zombies get reaped.
 *
 * The rule for a stuck manager: it is a torch_shm_manager none of whose
 * connected clients is alive, other than orphaned workers this same reap
 * ends first (a forked worker inherits its main's connection, so one
 * surviving worker keeps the manager waiting forever). A manager that loses
 * its last client exits by itself within 2 s and unlinks its segments, so
 * one that had clients until this reap is given SHMMGR_GRACE_S to do that
 * before it is signalled; one whose clients cannot all be seen is left
 * alone. A zombie's parent gets SIGCHLD; the parent itself is ended only
 * when it is one of the processes above. */
#ifndef SHMWATCH_REAP_H
#define SHMWATCH_REAP_H

#include <stdbool.h>
#include <stddef.h>

#include "act/signal.h"
#include "model/model.h"

struct reap_plan {
    struct signal_plan workers;  /* orphaned workers */
    struct signal_plan managers; /* stuck shm managers */
    bool *manager_waits;         /* per manager: it had clients among the workers */
    struct signal_plan zombies;
    struct signal_plan serving;  /* managers left alone; why says why */
};

/* Where a process of the model is acted on (reap --pid, --all): false
 * leaves it out of the plan; true keeps it, and *ns (NULL: the watcher's
 * own world) is the container its target carries (signal.h). */
typedef bool (*reap_where_fn)(void *ctx, const struct model *m, const struct proc *p,
                              const struct actns **ns);

/* Chooses the targets from the model, examining each manager's clients now:
 * only the processes where() keeps (NULL: every one), chosen before the
 * managers are judged (a manager is stuck by the workers of its own
 * container alone). */
void reap_plan_build(const struct model *m, const struct sysroot *sys, reap_where_fn where,
                     void *ctx, struct reap_plan *p);

/* Whether torch_shm_manager t has no live client now (the dashboard's
 * offer to end a zombie's parent); t->why says what was found. */
bool reap_manager_stuck(const struct sysroot *sys, struct signal_target *t);

/* Ends torch_shm_manager t (signal_end) only while it is still stuck,
 * looked at again right before: a manager that a client has connected to
 * since it was offered is refused (res says so). */
void reap_manager_end(const struct signal_opts *o, struct signal_target *t,
                      struct signal_result *res);

/* Number of processes the plan acts on. */
size_t reap_plan_count(const struct reap_plan *p);

/* Called after each target is done, with its result (for progress). */
typedef void (*reap_step_fn)(void *ctx, const struct signal_target *t,
                             const struct signal_result *r);

/* Workers first (together), then managers, then zombies. */
void reap_run(const struct signal_opts *o, struct reap_plan *p, reap_step_fn step, void *ctx);

void reap_plan_free(struct reap_plan *p);

#endif
