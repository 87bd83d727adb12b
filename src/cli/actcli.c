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
#include "util/units.h"
#include "util/xalloc.h"

/* --pid: the view of that process, opened before the scan, which is made
 * through this same view (pinned to the process's start time). Returns 0,
 * or 1 said on stderr. */
static int open_target(struct actcli *a, pid_t pid)
{
    int rc = actns_open(&a->ns, &a->sys, pid, 0, NULL);
    if (rc < 0) {
        fprintf(stderr, "shmwatch %s: cannot act in pid %d: %s\n", a->cmd, (int)pid,
                rc == -ESRCH ? "no such process (or it has exited)" : strerror(-rc));
        return 1;
    }
    a->in_ns = true;
    return 0;
}

/* --all: a view of every container of the node view, of every mount the
 * watcher's own namespace does not show and of the host's own world, each
 * pinned to the process the scan read it through (its start time in the
 * scan). One that cannot be opened (exited since) still names its
 * container, and refuses every action (actns_open). */
static void open_node(struct actcli *a)
{
    const struct scan_node *n = &a->scan.node;
    const struct sysroot *host = &a->sys;
    int hrc = host->proc >= 0 ? 0 : -EBADF;
    a->nctr_ns = n->nctrs;
    a->ctr_ns = xcalloc(n->nctrs ? n->nctrs : 1, sizeof(*a->ctr_ns));
    for (size_t k = 0; k < n->nctrs; k++) {
        const struct node_ctr *c = &n->ctrs[k];
        const struct proc *p = procs_find(&a->scan.procs, c->pid);
        char *label = actns_label(&c->info, c->pid);
        a->ctr_ns[k].root = SYSROOT_NONE;
        if (hrc == 0)
            actns_open(&a->ctr_ns[k], host, c->pid, p ? p->start_ticks : 0, label);
        else
            a->ctr_ns[k].label = xstrdup(label);
        free(label);
    }
    a->nmnt_ns = n->nmounts;
    a->mnt_ns = xcalloc(n->nmounts ? n->nmounts : 1, sizeof(*a->mnt_ns));
    a->mnt_open = xcalloc(n->nmounts ? n->nmounts : 1, sizeof(*a->mnt_open));
    for (size_t i = 0; i < n->nmounts; i++) {
        const struct node_mount *m = &n->mounts[i];
        a->mnt_ns[i].root = SYSROOT_NONE;
        if (m->own || m->pid <= 0)
            continue; /* the host's view */
        a->mnt_open[i] = true;
        size_t k = m->owner != NODE_HOST ? m->owner : m->nctrs ? m->ctrs[0] : NODE_HOST;
        char *label = k != NODE_HOST && k < n->nctrs ? actns_label(&n->ctrs[k].info, n->ctrs[k].pid)
                                                     : actns_label(NULL, m->pid);
        if (hrc == 0)
            actns_open(&a->mnt_ns[i], host, m->pid, m->pid_start, label);
        else
            a->mnt_ns[i].label = xstrdup(label);
        free(label);
    }
    if (hrc == 0)
        actns_open(&a->host_ns, host, getpid(), 0, "host");
    else
        a->host_ns.label = xstrdup("host");
}

const struct actns *actcli_mount_ns(const struct actcli *a, size_t mount)
{
    if (a->all)
        return mount < a->nmnt_ns && a->mnt_open[mount] ? &a->mnt_ns[mount] : &a->host_ns;
    return a->in_ns ? &a->ns : NULL;
}

/* --all: the container of process p (a zombie, which has no namespaces
 * left, is its parent's). */
static const struct actns *proc_ns(const struct actcli *a, const struct proc *p)
{
    const struct scan_node *n = &a->scan.node;
    const struct proc_list *pl = &a->scan.procs;
    size_t ctr = node_proc_ctr(n, (size_t)(p - pl->items));
    if (ctr == NODE_HOST && !p->mntns && p->state == 'Z') {
        const struct proc *parent = procs_find(pl, p->ppid);
        if (parent)
            ctr = node_proc_ctr(n, (size_t)(parent - pl->items));
    }
    return ctr != NODE_HOST && ctr < a->nctr_ns ? &a->ctr_ns[ctr] : &a->host_ns;
}

bool actcli_proc_where(void *ctx, const struct model *m, const struct proc *p,
                       const struct actns **ns)
{
    const struct actcli *a = ctx;
    *ns = NULL;
    if (a->all) {
        *ns = proc_ns(a, p);
        return true;
    }
    if (!a->in_ns)
        return true;
    const struct proc *q = p;
    if (!q->mntns && q->state == 'Z')
        q = procs_find(&m->scan->procs, p->ppid);
    if (!q || !q->mntns || !a->ns.mntns || q->mntns != a->ns.mntns)
        return false;
    *ns = &a->ns;
    return true;
}

bool actcli_parse_pid(const char *s, pid_t *out)
{
    long long v;
    if (!parse_int(s, 1, 0x7fffffff, &v))
        return false;
    *out = (pid_t)v;
    return true;
}

int actcli_scan(struct actcli *a, const struct options *o)
{
    a->log.fd = -1;
    a->sys = SYSROOT_NONE;
    a->ns.root = SYSROOT_NONE;
    a->host_ns.root = SYSROOT_NONE;
    char *err = NULL;
    if (settings_load(o, &a->cfg, &err) != 0) {
        fprintf(stderr, "shmwatch %s: %s\n", a->cmd, err);
        free(err);
        config_free(&a->cfg);
        return 2;
    }
    int rc = sysroot_open(&a->sys, "/proc", "/", "/");
    if (rc < 0) {
        fprintf(stderr, "shmwatch %s: cannot open /proc: %s\n", a->cmd, strerror(-rc));
        config_free(&a->cfg);
        return 1;
    }
    if (o->pid && open_target(a, o->pid) != 0) {
        sysroot_close(&a->sys);
        config_free(&a->cfg);
        return 1;
    }
    a->all = o->all;
    struct scan_opts so = {.sys = a->in_ns ? &a->ns.root : &a->sys,
                           .all = o->all,
                           .mounts = (const char *const *)a->cfg.mounts.item,
                           .nmounts = a->cfg.mounts.n};
    /* Watched as the snapshots' scans are: one that has not ended after
     * the stall limit is said, and nothing is done. */
    struct scan_job *job = scan_job_start(&so);
    if (!job) {
        fprintf(stderr, "shmwatch %s: cannot start the scan: %s\n", a->cmd, strerror(errno));
        sysroot_close(&a->sys);
        config_free(&a->cfg);
        actns_close(&a->ns);
        return 1;
    }
    if (!scan_job_wait(job, scan_job_started(job) + scan_stall_limit(0))) {
        struct scan stalled;
        scan_stalled(&stalled, &so, clock_now() - scan_job_started(job), scan_job_beacon(job));
        fprintf(stderr, "shmwatch %s: %s; nothing was done\n", a->cmd, stalled.warn.msg[0]);
        /* Its thread may never come back: exit without waiting for it (a
         * leak checker at exit would). */
        scan_job_abandon(job);
        fflush(NULL);
        _exit(1);
    }
    rc = scan_job_finish(job, &a->scan);
    if (rc < 0) {
        if (rc == -ESRCH && a->in_ns)
            fprintf(stderr, "shmwatch %s: cannot act in pid %d: the process has exited%s\n",
                    a->cmd, (int)a->ns.root.pid,
                    a->scan.target_state == SCAN_TARGET_REPLACED
                        ? " (its pid now belongs to another process)"
                        : "");
        else
            fprintf(stderr, "shmwatch %s: scan failed: %s\n", a->cmd, strerror(-rc));
        scan_free(&a->scan);
        sysroot_close(&a->sys);
        config_free(&a->cfg);
        actns_close(&a->ns);
        return 1;
    }
    for (size_t i = 0; i < a->scan.warn.n; i++)
        fprintf(stderr, "shmwatch %s: note: %s\n", a->cmd, a->scan.warn.msg[i]);
    struct model_opts mo;
    model_opts_default(&mo);
    mo.orphan_min_age_s = a->cfg.orphan_min_age_s;
    mo.trust_pids = a->cfg.trust_pids;
    model_build(&a->scan, &mo, &a->model);
    if (a->all)
        open_node(a);
    return 0;
}

enum actcli_mode actcli_decide(bool dry_run, bool yes, const char *question, bool *declined)
{
    *declined = false;
    if (dry_run)
        return ACTCLI_DRY;
    if (yes)
        return ACTCLI_ACT;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        output_printf("Not a terminal and no --yes: nothing is changed (a dry run follows).\n");
        return ACTCLI_DRY;
    }
    output_printf("%s [y/N] ", question);
    char answer[32];
    if (!fgets(answer, sizeof(answer), stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
        output_printf("Nothing done.\n");
        *declined = true;
        return ACTCLI_DRY;
    }
    return ACTCLI_ACT;
}

void actcli_open_log(struct actcli *a)
{
    if (actlog_open(&a->log, a->cfg.log_file) < 0) {
        char *path = esc_term_dup(a->log.path ? a->log.path : "($XDG_STATE_HOME and $HOME unset)");
        fprintf(stderr,
                "shmwatch %s: note: cannot write the action log %s: %s; actions are not "
                "logged\n",
                a->cmd, path, safefile_strerror(a->log.err));
        free(path);
    }
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
    actns_close(&a->ns);
    for (size_t k = 0; k < a->nctr_ns; k++)
        actns_close(&a->ctr_ns[k]);
    free(a->ctr_ns);
    for (size_t i = 0; i < a->nmnt_ns; i++)
        if (a->mnt_open[i])
            actns_close(&a->mnt_ns[i]);
    free(a->mnt_ns);
    free(a->mnt_open);
    actns_close(&a->host_ns);
    actlog_close(&a->log);
    model_free(&a->model);
    scan_free(&a->scan);
    sysroot_close(&a->sys);
    config_free(&a->cfg);
}
