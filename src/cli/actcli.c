#include "cli/actcli.h"
#include "cli/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/scanjob.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/safefile.h"

/* Scans through sys as the snapshots do, watched by the stall limit: a scan
 * that has not ended by then is said and the program exits at once, with
 * nothing done. Returns 0 (a->scan filled), or 1 said on stderr. */
static int run_scan(struct actcli *a, const struct options *o, const struct sysroot *sys)
{
    struct scan_opts so = {.sys = sys,
                           .all = o->all,
                           .mounts = (const char *const *)a->cfg.mounts.item,
                           .nmounts = a->cfg.mounts.n};
    struct scan_job *job = scan_job_start(&so);
    if (!job) {
        fprintf(stderr, "shmwatch %s: cannot start the scan: %s\n", a->cmd, strerror(errno));
        return 1;
    }
    if (!scan_job_wait(job, scan_job_started(job) + scan_stall_limit(0))) {
        struct scan stalled;
        scan_stalled(&stalled, &so, clock_now() - scan_job_started(job), scan_job_beacon(job));
        char *where = esc_term_dup(stalled.warn.msg[0]); /* it names a process */
        fprintf(stderr, "shmwatch %s: %s; nothing was done\n", a->cmd, where);
        free(where);
        /* Its thread may never come back: exit without waiting for it (a
         * leak checker at exit would). */
        scan_job_abandon(job);
        fflush(NULL);
        _exit(1);
    }
    int rc = scan_job_finish(job, &a->scan);
    if (rc == -ESRCH && a->views.mode == ACTVIEWS_PID)
        fprintf(stderr, "shmwatch %s: cannot act in pid %d: the process has exited%s\n", a->cmd,
                (int)a->views.pid.root.pid,
                a->scan.target_state == SCAN_TARGET_REPLACED
                    ? " (its pid now belongs to another process)"
                    : "");
    else if (rc < 0)
        fprintf(stderr, "shmwatch %s: scan failed: %s\n", a->cmd, strerror(-rc));
    return rc < 0 ? 1 : 0;
}

int actcli_scan(struct actcli *a, const struct options *o)
{
    a->log.fd = -1;
    a->sys = SYSROOT_NONE;
    actviews_own(&a->views);
    memset(&a->scan, 0, sizeof(a->scan));
    memset(&a->model, 0, sizeof(a->model));
    char *err = NULL;
    int status = 1, rc;
    const struct sysroot *watched;
    if (settings_load(o, &a->cfg, &err) != 0) {
        fprintf(stderr, "shmwatch %s: %s\n", a->cmd, err);
        status = 2;
        goto fail;
    }
    /* The running system, as the dashboard opens it: a --pid view opened
     * from it holds a pidfd of its process (util/sysroot.h). */
    rc = sysroot_open_system(&a->sys, 0);
    if (rc < 0) {
        fprintf(stderr, "shmwatch %s: cannot open /proc: %s\n", a->cmd, strerror(-rc));
        goto fail;
    }
    /* --pid: the view of that process, opened before the scan, which is made
     * through this same view (pinned to the process's start time). */
    if (o->pid && (rc = actviews_open_pid(&a->views, &a->sys, o->pid)) < 0) {
        fprintf(stderr, "shmwatch %s: cannot act in pid %d: %s\n", a->cmd, (int)o->pid,
                sysroot_pid_why(o->pid, rc, rc == -ESRCH ? "no such process (or it has exited)"
                                                         : strerror(-rc)));
        goto fail;
    }
    watched = a->views.mode == ACTVIEWS_PID ? &a->views.pid.root : &a->sys;
    /* A named mount that is no tmpfs mount is refused before the scan, as
     * for the snapshots: else clean would plan to remove ordinary files. */
    if (settings_check_mounts(o, &a->cfg, watched, &err) != 0) {
        fprintf(stderr, "shmwatch %s: %s\n", a->cmd, err);
        status = 2;
        goto fail;
    }
    if (run_scan(a, o, watched) != 0)
        goto fail;
    for (size_t i = 0; i < a->scan.warn.n; i++) {
        char *w = esc_term_dup(a->scan.warn.msg[i]); /* warnings quote paths and names */
        fprintf(stderr, "shmwatch %s: note: %s\n", a->cmd, w);
        free(w);
    }
    struct model_opts mo;
    model_opts_default(&mo);
    mo.orphan_min_age_s = a->cfg.orphan_min_age_s;
    mo.trust_pids = a->cfg.trust_pids;
    model_build(&a->scan, &mo, &a->model);
    if (o->all)
        actviews_open_all(&a->views, &a->model, &a->sys);
    return 0;
fail:
    free(err);
    actcli_free(a);
    return status;
}

void actcli_refresh_mounts(struct actcli *a)
{
    mounts_refresh(&a->sys, &a->scan.mounts);
}

/* What actcli_decide answers, without opening the log. */
static bool answer(bool dry_run, bool yes, const char *question, bool *declined)
{
    *declined = false;
    if (dry_run)
        return false;
    if (yes)
        return true;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        output_printf("Not a terminal and no --yes: nothing is changed (a dry run follows).\n");
        return false;
    }
    output_printf("%s [y/N] ", question);
    char answer[32];
    *declined = !fgets(answer, sizeof(answer), stdin) || (answer[0] != 'y' && answer[0] != 'Y');
    if (*declined)
        output_printf("Nothing done.\n");
    return !*declined;
}

bool actcli_decide(struct actcli *a, bool dry_run, bool yes, const char *question, bool *declined)
{
    if (!answer(dry_run, yes, question, declined))
        return false;
    if (actlog_open(&a->log, a->cfg.log_file) < 0) {
        char *path = esc_term_dup(a->log.path ? a->log.path : "($XDG_STATE_HOME and $HOME unset)");
        fprintf(stderr,
                "shmwatch %s: note: cannot write the action log %s: %s; actions are not "
                "logged\n",
                a->cmd, path, safefile_strerror(a->log.err));
        free(path);
    }
    return true;
}

void actcli_put_where(struct buf *out, const struct actns *ns)
{
    if (!ns)
        return;
    char *where = actns_where(ns);
    buf_printf(out, " (%s)", where);
    free(where);
}

int actcli_status(const struct actcli *a, int rc, bool acted)
{
    /* A write that failed after the log opened (a full disk) is kept in err. */
    bool logged = a->log.fd >= 0 && !a->log.err;
    if (acted && a->log.fd >= 0 && a->log.err) {
        char *path = esc_term_dup(a->log.path);
        fprintf(stderr, "shmwatch %s: note: cannot write the action log %s: %s; not every "
                        "action is logged\n",
                a->cmd, path, safefile_strerror(a->log.err));
        free(path);
    }
    char *note = NULL;
    if (acted && logged)
        note = str_printf("every action was still carried out and logged in %s", a->log.path);
    else if (acted)
        note = str_printf("every action was still carried out");
    int orc = output_status(a->cmd, note);
    free(note);
    return orc ? orc : rc;
}

void actcli_free(struct actcli *a)
{
    actviews_close(&a->views);
    actlog_close(&a->log);
    model_free(&a->model);
    scan_free(&a->scan);
    sysroot_close(&a->sys);
    config_free(&a->cfg);
}
