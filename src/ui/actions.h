/* The dashboard's action keys (unlink, signal, reap) and what they act on.
 *
 * cmd_action (commands.c) calls these with the selection: the row under the
 * cursor and the marked rows, resolved against the model on screen. They
 * never act on a read-only dashboard (cmd_action refuses first). Each action
 * re-checks its targets itself right before acting (src/act; doc/design.md,
 * "Where each rule lives"), asks with dialog_confirm / dialog_menu
 * (ui/dialog.h), reports with ui_message, and calls poller_request_scan
 * afterwards so that the screen shows the result. */
#ifndef SHMWATCH_UI_ACTIONS_H
#define SHMWATCH_UI_ACTIONS_H

#include <stddef.h>

#include "model/model.h"

struct ui;

struct ui_selection {
    const struct model *model;          /* the model the pointers below point into */
    const struct segment *seg;          /* the current row's segment, or NULL */
    const struct mproc *proc;           /* the current row's process (or a group's main), or NULL */
    const struct group *group;          /* the current row's DataLoader group, or NULL */
    const struct segment **marked_segs; /* marked segments still in the model */
    size_t nmarked_segs;
    const struct mproc **marked_procs; /* marked processes still in the model */
    size_t nmarked_procs;
};

/* d, Del: unlink the marked orphans, else the current orphan, else the
 * orphans of the current group. */
void actions_unlink(struct ui *u, const struct ui_selection *sel);
/* D: unlink every orphan, after a confirmation listing them. */
void actions_unlink_orphans(struct ui *u, const struct ui_selection *sel);
/* U: unlink every unheld segment older than min_age, after confirmation. */
void actions_unlink_unheld(struct ui *u, const struct ui_selection *sel);
/* k, F9: the signal menu for the marked processes, else the current one. */
void actions_signal(struct ui *u, const struct ui_selection *sel);
/* K: end every orphaned worker and stuck shm manager, after confirmation. */
void actions_reap(struct ui *u, const struct ui_selection *sel);
/* The action log: its last lines (of this and earlier sessions), newest
 * first, in a list closed by Enter or Esc. Needs no selection and acts on
 * nothing, so it is allowed on a read-only dashboard too. */
void actions_show_log(struct ui *u);

#endif
