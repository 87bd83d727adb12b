/* Where each action happens (actviews.h). */
#include "act/actviews.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/unlink.h"
#include "util/xalloc.h"

void actviews_own(struct actviews *v)
{
    memset(v, 0, sizeof(*v));
    v->mode = ACTVIEWS_OWN;
    v->pid.root = SYSROOT_NONE;
    v->host.root = SYSROOT_NONE;
}

int actviews_open_pid(struct actviews *v, const struct sysroot *host, pid_t pid)
{
    actviews_own(v);
    int rc = actns_open(&v->pid, host, pid, 0, NULL);
    if (rc < 0) {
        actns_close(&v->pid);
        return rc;
    }
    v->mode = ACTVIEWS_PID;
    return 0;
}

/* One view of pid (pinned to start) named label, or a closed one that
 * names it when host is not open. */
static void open_one(struct actns *ns, const struct sysroot *host, pid_t pid,
                     unsigned long long start, const char *label)
{
    if (host->proc >= 0) {
        if (actns_open(ns, host, pid, start, label) == 0)
            sysroot_spare(&ns->root, host); /* hundreds of them: kept closed when short */
    } else {
        memset(ns, 0, sizeof(*ns));
        ns->root = SYSROOT_NONE;
        ns->root.pid = pid;
        ns->root.err = -ESRCH;
        ns->label = xstrdup(label);
    }
}

void actviews_open_all(struct actviews *v, const struct model *m, const struct sysroot *host)
{
    actviews_own(v);
    v->mode = ACTVIEWS_ALL;
    const struct scan_node *n = model_node(m);
    v->nctrs = n->nctrs;
    v->ctrs = xcalloc(n->nctrs, sizeof(*v->ctrs));
    for (size_t k = 0; k < n->nctrs; k++) {
        const struct node_ctr *c = &n->ctrs[k];
        const struct proc *p = model_scan_proc(m, c->pid);
        char *label = actns_label(&c->info, c->pid);
        open_one(&v->ctrs[k], host, c->pid, p ? p->start_ticks : 0, label);
        free(label);
    }
    v->nmounts = n->nmounts;
    v->mounts = xcalloc(n->nmounts, sizeof(*v->mounts));
    for (size_t i = 0; i < n->nmounts; i++) {
        const struct node_mount *nm = &n->mounts[i];
        const struct node_read *at = n->read ? &n->read[i] : NULL;
        v->mounts[i].root = SYSROOT_NONE;
        size_t k = nm->owner != NODE_HOST ? nm->owner : nm->nctrs ? nm->ctrs[0] : NODE_HOST;
        bool own = !at || at->own || at->pid <= 0; /* read in shmwatch's own view */
        if (own && (k == NODE_HOST || k >= n->nctrs))
            continue; /* the host's view */
        char *label = k != NODE_HOST && k < n->nctrs ? actns_label(&n->ctrs[k].info, n->ctrs[k].pid)
                                                     : actns_label(NULL, at->pid);
        struct sysroot none = SYSROOT_NONE; /* never read through a process: refused */
        if (own) /* shmwatch's own namespace, a private one: acted on as the host's view is,
                  * and named as the report names it */
            open_one(&v->mounts[i], host, getpid(), 0, label);
        else
            open_one(&v->mounts[i], at->pid_start ? host : &none, at->pid, at->pid_start, label);
        free(label);
    }
    open_one(&v->host, host, getpid(), 0, "host");
}

const struct actns *actviews_mount(const struct actviews *v, size_t mount)
{
    switch (v->mode) {
    case ACTVIEWS_PID:
        return &v->pid;
    case ACTVIEWS_ALL:
        return mount < v->nmounts && v->mounts[mount].label ? &v->mounts[mount] : &v->host;
    default:
        return NULL;
    }
}

bool actviews_proc(void *ctx, const struct model *m, const struct proc *p, const struct actns **ns)
{
    const struct actviews *v = ctx;
    *ns = NULL;
    if (v->mode == ACTVIEWS_ALL) {
        size_t ctr = model_proc_ctr(m, p); /* a zombie's is its parent's (node_proc_ctr) */
        *ns = ctr != NODE_HOST && ctr < v->nctrs ? &v->ctrs[ctr] : &v->host;
        return true;
    }
    if (v->mode != ACTVIEWS_PID)
        return true;
    const struct proc *q = p;
    if (!q->mntns && q->state == 'Z')
        q = model_scan_proc(m, p->ppid);
    if (!q || !q->mntns || !v->pid.mntns || q->mntns != v->pid.mntns)
        return false;
    *ns = &v->pid;
    return true;
}

void actviews_set_plan(const struct actviews *v, struct unlink_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        p->items[i].ns = actviews_mount(v, p->items[i].mount_index);
}

void actviews_close(struct actviews *v)
{
    actns_close(&v->pid);
    actns_close(&v->host);
    for (size_t k = 0; k < v->nctrs; k++)
        actns_close(&v->ctrs[k]);
    free(v->ctrs);
    for (size_t i = 0; i < v->nmounts; i++)
        actns_close(&v->mounts[i]);
    free(v->mounts);
    actviews_own(v);
}
