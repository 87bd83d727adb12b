/* What `clean` and `reap` share: one scan and model, the action log, the
 * [y/N] question, and the decision between acting and only showing. */
#ifndef SHMWATCH_ACTCLI_H
#define SHMWATCH_ACTCLI_H

#include <stdbool.h>
#include <stddef.h>

#include "act/actlog.h"
#include "collect/scan.h"
#include "model/model.h"

struct actcli {
    const char *cmd;       /* "clean", "reap": prefixes messages */
    struct scan scan;
    struct model model;
    struct actlog log;
};

/* Scans (only the given mounts, if any) and builds the model. Returns 0, or
 * 1 with a message on stderr. Scan warnings go to stderr as notes. */
int actcli_scan(struct actcli *a, const char *const *mounts, size_t nmounts);

/* How the plan is carried out. */
enum actcli_mode { ACTCLI_ACT, ACTCLI_DRY };

/* --dry-run: dry; --yes: act; otherwise ask on a terminal (stdin and
 * stdout), and without one only show (dry). *declined is set when the user
 * answered no. */
enum actcli_mode actcli_decide(bool dry_run, bool yes, const char *question, bool *declined);

/* Opens the action log (path NULL: the default), with a note on stderr if
 * it cannot be written (the actions still happen). */
void actcli_open_log(struct actcli *a, const char *path);

void actcli_free(struct actcli *a);

#endif
