/* The plain-text snapshot (--once): what a person reads in a terminal or a
 * log. Every name is passed through esc_term: no raw control byte leaves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/ctrref.h"
#include "util/escape.h"
#include "util/rfc3339.h"
#include "util/units.h"

struct text {
    struct buf *out;
    const struct model *m;
    bool ascii;
    /* The node view (--all): only what belongs to container unit (NODE_HOST:
     * the host's) is written; else everything. */
    bool node;
    size_t unit;
};

/* Mount i's owner is the container being written. */
static bool mount_here(const struct text *t, size_t i)
{
    const struct scan_node *n = model_node(t->m);
    return !t->node || (i < n->nmounts && n->mounts[i].owner == t->unit);
}

static bool ctr_here(const struct text *t, size_t ctr)
{
    return !t->node || ctr == t->unit;
}

static const char *sz(char *dst, uint64_t v)
{
    return fmt_size(dst, 16, v);
}

static void name(struct text *t, const char *s)
{
    esc_term(t->out, s, t->ascii);
}

static void bar(struct text *t, double pct, int width)
{
    int full = (int)(pct / 100.0 * width + 0.5);
    if (full > width)
        full = width;
    buf_addc(t->out, '[');
    for (int i = 0; i < width; i++)
        buf_addc(t->out, i < full ? '#' : '.');
    buf_addc(t->out, ']');
}

/* How container c's heading names it: "HOST", "CONTAINER name" (its name,
 * else its hostname, else its id: a digest's first 12 digits),
 * "MOUNT NAMESPACE ..." (no runtime knows it), or "... of pid N" without
 * any of them. */
static void unit_label(struct text *t, size_t c)
{
    if (c == NODE_HOST) {
        buf_adds(t->out, "HOST");
        return;
    }
    const struct node_ctr *ctr = &model_node(t->m)->ctrs[c];
    buf_adds(t->out, container_runtime_name(ctr->info.runtime) ? "CONTAINER " : "MOUNT NAMESPACE ");
    if (ctr->info.name)
        name(t, ctr->info.name);
    else if (ctr->info.hostname)
        name(t, ctr->info.hostname);
    else if (ctr->info.id) {
        char *id = container_label(NULL, NULL, ctr->info.id); /* a digest cut to 12 */
        name(t, id);
        free(id);
    } else
        buf_printf(t->out, "of pid %d", (int)ctr->pid);
}

/* A container with no mount of its own (--ipc=host, --ipc=container:X):
 * each mount it sees, and the heading its figures are written under. */
static void mounts_seen(struct text *t)
{
    const struct scan_node *n = model_node(t->m);
    bool seen = false;
    for (size_t i = 0; i < n->nmounts; i++) {
        const struct node_mount *nm = &n->mounts[i];
        for (size_t k = 0; k < nm->nctrs; k++) {
            if (nm->ctrs[k] != t->unit)
                continue;
            char id[32];
            buf_adds(t->out, seen ? "  and " : "  none of its own: it sees ");
            seen = true;
            name(t, model_mount(t->m, i)->path);
            buf_printf(t->out, " (%s), written under ", report_mount_id(t->m, i, id, sizeof(id)));
            unit_label(t, nm->owner);
            buf_addc(t->out, '\n');
        }
    }
    if (!seen)
        buf_adds(t->out, "  none: it sees no shm mount\n");
}

static void mounts(struct text *t)
{
    char a[16], b[16], c[16], d[16], e[16], f[16], g[16];
    buf_adds(t->out, "MOUNTS\n");
    size_t shown = 0;
    for (size_t i = 0; i < model_nmounts(t->m); i++) {
        if (!mount_here(t, i))
            continue;
        shown++;
        const struct shm_mount *mt = model_mount(t->m, i);
        const struct mount_figures *fg = &t->m->mounts[i];
        double pct = mount_used_pct(mt);
        buf_adds(t->out, "  ");
        name(t, mt->path);
        if (t->node) {
            char id[32];
            buf_printf(t->out, " (%s)", report_mount_id(t->m, i, id, sizeof(id)));
        }
        if (mt->stat_ok) {
            buf_adds(t->out, "  ");
            bar(t, pct, 20);
            buf_printf(t->out, " %5.1f%%  %s of %s used, %s free\n", pct, sz(a, mt->used),
                       sz(b, mt->size), sz(c, mt->avail));
        } else {
            buf_adds(t->out, "  size and use unknown: statfs failed (see WARNINGS)\n");
        }
        const char *unknown = "unknown";
        buf_printf(t->out,
                   "    named %s, hidden %s, orphan %s, unattributed %s, pending %s; "
                   "%zu segments\n",
                   mt->listed ? sz(d, fg->named) : unknown, sz(e, fg->hidden),
                   mt->listed ? sz(f, fg->orphan) : unknown,
                   mt->stat_ok && mt->listed ? sz(g, fg->unattributed) : unknown,
                   sz(a, fg->pending), fg->nsegments);
        if (!mt->listed)
            buf_adds(t->out, "    its directory could not be listed (see WARNINGS)\n");
        const char *pids = pid_evidence_note(fg->pids.evidence);
        if (pids) {
            if (fg->pids.npidns > 1)
                buf_printf(t->out, "    pids (%zu pid namespaces): ", fg->pids.npidns);
            else
                buf_adds(t->out, "    pids: ");
            buf_adds(t->out, pids);
            buf_addc(t->out, '\n');
        }
    }
    if (shown == 0 && !t->node)
        buf_adds(t->out, "  no shm mount found (use --mount PATH)\n");
    else if (shown == 0)
        mounts_seen(t);
}

/* What the busiest DataLoader of this budget's owner teaches: its batch, and
 * how many workers fit at its prefetch factor in the mount and the limit. */
static void budget_loader(struct text *t, const struct budget *b)
{
    if (!b->loader_main)
        return;
    char a[16], c[16], d[16];
    buf_printf(t->out,
               "  loader: main %d, one batch %s in shm, %llu batch%s in flight with %llu "
               "worker%s (prefetch factor %llu)\n",
               (int)b->loader_main, sz(a, b->loader_batch),
               (unsigned long long)b->loader_batches, b->loader_batches == 1 ? "" : "es",
               (unsigned long long)b->loader_workers, b->loader_workers == 1 ? "" : "s",
               (unsigned long long)b->loader_prefetch);
    buf_printf(t->out, "  workers that fit at that factor: %llu in this mount (%s)",
               (unsigned long long)b->fit_workers_shm, sz(c, b->shm_size));
    if (b->fit_workers_limit == UINT64_MAX)
        buf_adds(t->out, ", no memory limit applies\n");
    else
        buf_printf(t->out, ", %llu under the memory limit (%s)\n",
                   (unsigned long long)b->fit_workers_limit, sz(d, b->limit));
}

static void budget_of(struct text *t, const struct budget *b, const struct cgroup_info *cg)
{
    char a[16], c[16], d[16], e[16], f[16], g[16];
    buf_printf(t->out, "  limit %s (%s), app %s, shm %s of %s, ", sz(a, b->limit),
               b->limit_source == LIMIT_CGROUP ? "cgroup" : "MemTotal", sz(c, b->app),
               sz(d, b->shm_used), sz(e, b->shm_size));
    /* The other shm mounts of the cgroup, which the headroom counts too. */
    size_t nother, first;
    uint64_t other = model_budget_other_shm(t->m, b, &nother, &first);
    if (nother == 1) {
        buf_printf(t->out, "other shm %s on ", sz(a, other));
        name(t, model_mount(t->m, first)->path);
        buf_adds(t->out, ", ");
    } else if (nother > 1) {
        buf_printf(t->out, "other shm %s on %zu other mounts, ", sz(a, other), nother);
    }
    buf_printf(t->out, "headroom %s, shm still writable %s\n", sz(f, b->headroom),
               sz(g, b->shm_effective));
    if (cg->present && cg->has_oom_kills)
        buf_printf(t->out, "  oom kills %llu%s\n", (unsigned long long)cg->oom_kills,
                   b->oom_recent ? " (new ones just now: the memory limit was hit)"
                   : cg->oom_kills ? " (the memory limit was hit before)"
                                   : "");
    else if (cg->present)
        buf_adds(t->out, "  oom kills unknown (the kernel does not say)\n");
    budget_loader(t, b);
    buf_printf(t->out, "  verdict: %s\n", verdict_name(b->verdict));
    /* A sentence can name a mount or a cgroup: escaped as every name. */
    for (size_t i = 0; i < b->nadvice; i++) {
        buf_adds(t->out, "  - ");
        name(t, b->advice[i]);
        buf_addc(t->out, '\n');
    }
}

static void budget(struct text *t)
{
    if (!t->node) {
        buf_adds(t->out, "\nBUDGET\n");
        budget_of(t, &t->m->budget, model_cgroup(t->m));
        return;
    }
    for (size_t i = 0; i < model_nmounts(t->m); i++) {
        if (!mount_here(t, i))
            continue;
        const struct cgroup_info *cg = model_mount_cgroup(t->m, i);
        buf_adds(t->out, "\nBUDGET of ");
        name(t, model_mount(t->m, i)->path);
        if (cg->present && cg->path) {
            buf_adds(t->out, ", cgroup ");
            name(t, cg->path);
        }
        buf_addc(t->out, '\n');
        budget_of(t, model_mount_budget(t->m, i), cg);
    }
}

static void holders(struct text *t, const struct segment *sg)
{
    if (!sg->nholders)
        return;
    buf_adds(t->out, "  held by");
    for (size_t h = 0; h < sg->nholders && h < 6; h++) {
        const struct seg_holder *x = &sg->holders[h];
        buf_printf(t->out, " %d", (int)x->pid);
        if (x->fd >= 0)
            buf_printf(t->out, "(fd %d%s)", x->fd, x->mapped ? ",map" : "");
        else
            buf_adds(t->out, "(map)");
    }
    if (sg->nholders > 6)
        buf_printf(t->out, " +%u more", (unsigned)(sg->nholders - 6));
}

static void segment_line(struct text *t, const struct segment *sg, const char *indent)
{
    char a[16], b[16], c[24];
    buf_adds(t->out, indent);
    name(t, sg->name);
    buf_printf(t->out, "  %s %s  %s alloc %s%s", seg_state_name(sg->state),
               seg_kind_name(sg->kind), sz(a, sg->size), sz(b, sg->alloc),
               sg->alloc_known ? "" : "?");
    if (sg->type != FT_REGULAR)
        buf_printf(t->out, "  [%s]", file_type_name(sg->type));
    if (sg->has_creator)
        buf_printf(t->out, "  creator %d%s", (int)sg->creator_pid,
                   sg->creator_alive     ? ""
                   : sg->earlier_run     ? " (of an earlier run: its pid is another's now)"
                   : sg->creator_unknown ? " (not alive here)"
                                         : " (dead)");
    holders(t, sg);
    int64_t age = segment_age_s(t->m, sg);
    if (age > 0)
        buf_printf(t->out, "  age %s", fmt_duration(c, sizeof(c), (double)age));
    buf_addc(t->out, '\n');
    if (sg->note != NOTE_NONE) {
        char note[256];
        buf_printf(t->out, "%s    not an orphan: ", indent);
        name(t, segment_note(t->m, sg, note, sizeof(note)));
        buf_addc(t->out, '\n');
    }
}

static void proc_line(struct text *t, const struct mproc *mp, const char *indent)
{
    const struct proc *p = model_proc(t->m, mp);
    char a[16];
    buf_printf(t->out, "%s%-13s %d  ", indent, proc_role_name(mp->role), (int)p->pid);
    name(t, p->comm);
    buf_printf(t->out, "  state %c  ppid %d", p->state, (int)p->ppid);
    if (mp->nsegments)
        buf_printf(t->out, "  holds %zu segments, %s", mp->nsegments, sz(a, mp->shm_bytes));
    buf_addc(t->out, '\n');
}

static void groups(struct text *t)
{
    const struct model *m = t->m;
    char a[16];
    buf_adds(t->out, "\nDATALOADER GROUPS\n");
    size_t shown = 0;
    for (size_t i = 0; i < m->ngroups; i++) {
        const struct group *g = &m->groups[i];
        if (!ctr_here(t, g->ctr))
            continue;
        shown++;
        const struct proc *mp = model_group_main(m, g);
        buf_printf(t->out, "  main %d  ", (int)g->main_pid);
        /* No command line when it could not be read (the main is exiting). */
        if (mp->cmdline) {
            name(t, mp->cmdline);
        } else {
            buf_addc(t->out, '[');
            name(t, mp->comm);
            buf_addc(t->out, ']');
        }
        buf_printf(t->out, "\n    %zu workers, %zu shm managers, %zu segments, %s\n",
                   g->nworkers, g->nmanagers, g->nsegments, sz(a, g->shm_bytes));
        for (size_t k = 0; k < m->nprocs; k++)
            if (m->procs[k].group == g->main_pid)
                proc_line(t, &m->procs[k], "    ");
        for (size_t k = 0; k < m->nsegs; k++)
            if (m->segs[k].group == g->main_pid)
                segment_line(t, &m->segs[k], "      ");
    }
    if (!shown)
        buf_adds(t->out, "  none\n");
}

static void segments_where(struct text *t, const char *title, enum seg_state state)
{
    bool any = false;
    for (size_t k = 0; k < t->m->nsegs; k++) {
        const struct segment *sg = &t->m->segs[k];
        if (sg->group || sg->state != state || !mount_here(t, sg->mount))
            continue;
        if (!any)
            buf_printf(t->out, "\n%s\n", title);
        any = true;
        segment_line(t, sg, "  ");
    }
}

static void other_procs(struct text *t)
{
    bool any = false;
    for (size_t k = 0; k < t->m->nprocs; k++) {
        if (t->m->procs[k].group || !ctr_here(t, t->m->procs[k].ctr))
            continue;
        if (!any)
            buf_adds(t->out, "\nOTHER PROCESSES (holders, zombies, orphaned workers)\n");
        any = true;
        proc_line(t, &t->m->procs[k], "  ");
    }
}

static void sysv(struct text *t)
{
    const struct sysv_list *sl = model_sysv(t->m);
    char a[16];
    if (!sl->n)
        return;
    buf_adds(t->out, "\nSYSV SHARED MEMORY\n");
    for (size_t i = 0; i < sl->n; i++)
        buf_printf(t->out, "  shmid %d key 0x%llx  %s  attached %lu  creator %d\n",
                   sl->items[i].shmid, (unsigned long long)sl->items[i].key,
                   sz(a, sl->items[i].size), sl->items[i].nattch, (int)sl->items[i].cpid);
}

/* Everything of one container (or, without --all, of the one world). */
static void unit(struct text *t)
{
    mounts(t);
    budget(t);
    groups(t);
    segments_where(t, "HIDDEN (deleted but held, outside any DataLoader group)", SEG_HIDDEN);
    segments_where(t, "IN USE (outside any DataLoader group)", SEG_IN_USE);
    segments_where(t, "ORPHANS (held by nobody, creator dead: safe to remove)", SEG_ORPHAN);
    segments_where(t, "UNHELD (held by nobody; owner unknown or still running)", SEG_UNHELD);
    other_procs(t);
}

/* "== HOST" or "== CONTAINER name (runtime [containerd-namespace/]id, pod ns/pod,
 * host h, pid N)". */
static void heading(struct text *t)
{
    buf_adds(t->out, "== ");
    unit_label(t, t->unit);
    const struct node_ctr *c = t->unit == NODE_HOST ? NULL : &model_node(t->m)->ctrs[t->unit];
    if (!c || (!c->info.name && !c->info.hostname && !c->info.id)) {
        buf_addc(t->out, '\n');
        return;
    }
    const struct container_info *ci = &c->info;
    const char *rt = container_runtime_name(ci->runtime);
    buf_adds(t->out, " (");
    if (rt) {
        buf_printf(t->out, "%s ", rt);
        if (ci->containerd_namespace) {
            name(t, ci->containerd_namespace);
            buf_addc(t->out, '/');
        }
        if (ci->id) {
            /* Twelve digits, as docker ps shows them; an lxc name, or a
             * containerd id that is no digest, whole. */
            char shortid[13];
            snprintf(shortid, sizeof(shortid), "%s", ci->id);
            name(t, ci->runtime == RUNTIME_LXC || ci->runtime == RUNTIME_NSPAWN ||
                            strlen(ci->id) != CONTAINER_ID_HEX
                        ? ci->id
                        : shortid);
        }
        buf_adds(t->out, ", ");
    }
    if (ci->pod) {
        buf_adds(t->out, "pod ");
        if (ci->namespace) {
            name(t, ci->namespace);
            buf_addc(t->out, '/');
        }
        name(t, ci->pod);
        buf_adds(t->out, ", ");
    }
    if (ci->hostname && ci->name) {
        buf_adds(t->out, "host ");
        name(t, ci->hostname);
        buf_adds(t->out, ", ");
    }
    buf_printf(t->out, "pid %d)\n", (int)c->pid);
}

void report_text(struct buf *out, const struct model *m, bool ascii)
{
    struct text t = {.out = out, .m = m, .ascii = ascii};
    char when[RFC3339_LEN];
    rfc3339_format(when, sizeof(when), (double)model_scan_time(m).tv_sec);
    buf_printf(out, "shmwatch %s  %s\n", SHMWATCH_VERSION, when);
    const struct scan_node *n = model_node(m);
    if (model_target_pid(m) > 0) {
        buf_printf(out, "watching pid %d", (int)model_target_pid(m));
        const char *host = model_target_host(m);
        if (host) {
            buf_adds(out, "  host ");
            name(&t, host);
        }
        const struct cgroup_info *cg = model_cgroup(m);
        if (cg->present && cg->path) {
            buf_adds(out, "  cgroup ");
            name(&t, cg->path);
        }
        buf_addc(out, '\n');
    }
    buf_addc(out, '\n');
    if (!n->all) {
        unit(&t);
    } else {
        /* A heading per container, the host's first. */
        t.node = true;
        for (size_t c = NODE_HOST; c == NODE_HOST || c < n->nctrs; c++) {
            t.unit = c;
            heading(&t);
            unit(&t);
            buf_addc(out, '\n');
        }
    }
    sysv(&t);
    const struct warnings *w = model_warnings(m);
    if (w->n) {
        buf_adds(out, "\nWARNINGS\n");
        for (size_t i = 0; i < w->n; i++) {
            buf_adds(out, "  ");
            name(&t, w->msg[i]);
            buf_addc(out, '\n');
        }
    }
}
