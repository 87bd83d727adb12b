/* What an action would touch, chosen from the model: the segments `clean`
 * (or the dashboard's d, D and U) removes and the processes `reap` (or K)
 * ends. Pure functions of the model; the checks against the live system
 * happen when acting (unlink.c, signal.c, reap.c). */
#ifndef SHMWATCH_TARGETS_H
#define SHMWATCH_TARGETS_H

#include <stdbool.h>
#include <stddef.h>

#include "act/signal.h"
#include "act/unlink.h"
#include "model/model.h"

struct clean_policy {
    bool all_unheld;   /* also unheld segments at least min_age_s old */
    double min_age_s;  /* default 600 */
    bool own_mounts;   /* only the mounts the watcher's own namespace shows: the
                        * dashboard's own view of a node view scan (--all) */
};

void clean_policy_default(struct clean_policy *p);

/* Every orphan (and, by policy, old unheld) named segment. Entries that are
 * not regular files are listed with a refusal: never touched, reported. */
void targets_clean(const struct model *m, const struct clean_policy *pol, struct unlink_plan *out);

/* The directories the scan recorded at each mount's top (it descends into
 * them without listing them as segments): a directory whose name names a
 * dead creator, or with pol->all_unheld any directory at least min_age_s
 * old, is added as refused, so that it is reported and never touched. */
void targets_add_dirs(const struct model *m, const struct clean_policy *pol,
                      struct unlink_plan *p);

/* One segment the user picked (dashboard). Orphans always qualify, unheld
 * ones only if pol->all_unheld and old enough; anything else returns false
 * with the reason in why and adds nothing. */
bool targets_add_segment(const struct model *m, size_t seg, const struct clean_policy *pol,
                         struct unlink_plan *out, char *why, size_t n);

/* Drops the items of p whose state is not state (U: unheld ones only). */
void targets_keep_state(struct unlink_plan *p, enum seg_state state);

/* The processes of the model with a role reap acts on: orphaned workers,
 * shm managers (candidates: reap.c decides which are stuck) and zombies. */
void targets_role(const struct model *m, enum proc_role role, struct signal_plan *out);

/* A target for process pid of the model; false when the scan does not know it. */
bool targets_proc(const struct model *m, pid_t pid, struct signal_target *t);

#endif
