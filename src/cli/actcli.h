/* What `clean` and `reap` share: one scan and model, the action log, the
 * [y/N] question, and the decision between acting and only showing. */
#ifndef SHMWATCH_ACTCLI_H
#define SHMWATCH_ACTCLI_H

#include <stdbool.h>
#include <stddef.h>

#include "act/actlog.h"
#include "act/actns.h"
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
    /* --pid: the container's view, opened before the scan (which is pinned
     * to the same process) and re-checked before every action */
    struct actns ns;
    bool in_ns;
    /* --all: the node view, opened right after the scan, each view pinned
     * to the process the scan read through (its start time then): each
     * container of scan.node (ctr_ns, indexed like scan.node.ctrs: its
     * processes), each mount the watcher's namespace does not show
     * (mnt_ns, indexed like scan.mounts: through the root its size was read
     * through, collect/node.h) and the host's own world (host_ns, the
     * watcher's view, named "host") */
    bool all;
    struct actns *ctr_ns;
    size_t nctr_ns;
    struct actns *mnt_ns;
    bool *mnt_open;
    size_t nmnt_ns;
    struct actns host_ns;
};

/* Loads the settings as the main command does (the config file, with the
 * flags in o over it: --mount, --log), then scans the mounts they name and
 * builds the model; with o->pid, in that process's namespaces (a.ns); with
 * o->all, the node view (a.ctr_ns, a.host_ns). Returns
 * 0; 2 for a bad config file, 1 when the scan fails or o->pid cannot be
 * watched, with a message on stderr. Scan warnings go to stderr as notes. */
int actcli_scan(struct actcli *a, const struct options *o);

/* The container an action on mount i of the scan happens in (set on each
 * unlink target): --pid's; with --all the host's view for a mount the
 * watcher's namespace shows, else the view of the process it was read
 * through, named after the mount's owner (collect/node.h); NULL for the
 * watcher's own world. */
const struct actns *actcli_mount_ns(const struct actcli *a, size_t mount);

/* A reap_where_fn (act/reap.h), ctx the actcli: with --pid, only the
 * processes of the target's mount namespace (a zombie, which has none left,
 * by its parent's), each carrying the container; with --all every process,
 * each with its container (a zombie's is its parent's); else every process. */
bool actcli_proc_where(void *ctx, const struct model *m, const struct proc *p,
                       const struct actns **ns);

/* --pid's value: a process id (1 and up). */
bool actcli_parse_pid(const char *s, pid_t *out);

/* How the plan is carried out. */
enum actcli_mode { ACTCLI_ACT, ACTCLI_DRY };

/* --dry-run: dry; --yes: act; otherwise ask on a terminal (stdin and
 * stdout), and without one only show (dry). *declined is set when the user
 * answered no. */
enum actcli_mode actcli_decide(bool dry_run, bool yes, const char *question, bool *declined);

/* Opens the action log (--log, else the setting log_file, else the
 * default), with a note on stderr if it cannot be written (the actions
 * still happen). */
void actcli_open_log(struct actcli *a);

/* The exit status: rc, or 1 when the output could not be written, said in
 * one line on stderr; when acted, the line adds that the actions were still
 * carried out and where they are logged. A reader that closed the pipe is
 * no failure (output_status). */
int actcli_status(const struct actcli *a, int rc, bool acted);

void actcli_free(struct actcli *a);

#endif
