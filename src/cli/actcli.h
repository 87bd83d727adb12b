/* What `clean` and `reap` share: one scan and model, the action log, the
 * [y/N] question, and the decision between acting and only showing. */
#ifndef SHMWATCH_ACTCLI_H
#define SHMWATCH_ACTCLI_H

#include <stdbool.h>

#include "act/actlog.h"
#include "act/actviews.h"
#include "cli/options.h"
#include "collect/scan.h"
#include "config/config.h"
#include "model/model.h"

struct actcli {
    const char *cmd;       /* "clean", "reap": prefixes messages */
    struct config cfg;     /* the config file's settings under the command's flags */
    struct sysroot sys;    /* the system scanned (and acted on) */
    struct scan scan;
    struct model model;
    struct actlog log;
    /* where each action happens (act/actviews.h): --pid's view, opened
     * before the scan (which is made through it), or --all's, opened right
     * after it */
    struct actviews views;
};

/* Loads the settings as the main command does (the config file, with the
 * flags in o over it: --mount, --log), then scans the mounts they name and
 * builds the model; with o->pid, in that process's namespaces, with o->all
 * the node view (a.views says where each action happens). Returns
 * 0; 2 for a bad config file, 1 when the scan fails or o->pid cannot be
 * watched, with a message on stderr. Scan warnings go to stderr as notes. */
int actcli_scan(struct actcli *a, const struct options *o);

/* Reads the use of the scan's mounts again (statvfs in the watcher's own
 * world): what model_mount then says of them. */
void actcli_refresh_mounts(struct actcli *a);

/* Whether to act on the plan: --dry-run: no (a dry run); --yes: yes;
 * otherwise ask on a terminal (stdin and stdout), and without one only show
 * (a dry run). *declined is set when the user answered no. On a yes it
 * opens the action log (--log, else the setting log_file, else the
 * default), with a note on stderr if it cannot be written (the actions
 * still happen). */
bool actcli_decide(struct actcli *a, bool dry_run, bool yes, const char *question, bool *declined);

/* --pid, --all: " (in LABEL)", which container, after what is acted on
 * there; nothing for ns NULL (the watcher's own world). */
struct buf;
void actcli_put_where(struct buf *out, const struct actns *ns);

/* The exit status: rc, or 1 when the output could not be written, said in
 * one line on stderr; when acted, the line adds that the actions were still
 * carried out and where they are logged. A reader that closed the pipe is
 * no failure (output_status). */
int actcli_status(const struct actcli *a, int rc, bool acted);

void actcli_free(struct actcli *a);

#endif
