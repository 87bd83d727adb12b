/* A schema-1 JSON snapshot read back into a scan and its model
 * (model/snapload.h). The members are those report/json.c writes, read
 * in the same order; a member missing or of another type reads as zero,
 * so that a snapshot with fields added later still loads. */
#include "model/snapload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "model/pidtrust.h"
#include "util/fileio.h"
#include "util/rfc3339.h"
#include "util/xalloc.h"

/* --- Names back to their enums ------------------------------------------- */

JD_NAME_READER(state_of, enum seg_state, seg_state_name, SEG_IN_USE, SEG_UNHELD, SEG_UNHELD)
JD_NAME_READER(role_of, enum proc_role, proc_role_name, ROLE_NONE, ROLE_HOLDER, ROLE_NONE)
JD_NAME_READER(type_of, enum file_type, file_type_name, FT_REGULAR, FT_OTHER, FT_OTHER)
JD_NAME_READER(evidence_of, enum pid_evidence, pid_evidence_name, PIDS_SOUND, PIDS_UNPROVEN,
               PIDS_UNPROVEN)
JD_NAME_READER(verdict_of, enum verdict, verdict_name, VERDICT_OK, VERDICT_CRITICAL, VERDICT_OK)
JD_NAME_READER(runtime_of, enum container_runtime, container_runtime_name, RUNTIME_DOCKER,
               RUNTIME_NSPAWN, RUNTIME_NONE)

/* The note's kind from its sentence (model.c segment_note writes them; the
 * sentence itself is made again from the figures when it is written). */
static enum seg_note note_of(const char *s)
{
    if (!s)
        return NOTE_NONE;
    if (strncmp(s, "written ", 8) == 0)
        return NOTE_YOUNG;
    if (strstr(s, " is alive in none of the "))
        return NOTE_SHARED;
    return NOTE_UNPROVEN;
}

/* --- The scan's parts ------------------------------------------------------- */

static void cgroup_load(const struct jd *v, struct cgroup_info *cg)
{
    memset(cg, 0, sizeof(*cg));
    if (!jd_is(v, JD_OBJ))
        return;
    cg->present = true;
    cg->version = (int)jd_getint(v, "version", 0);
    cg->path = xstrdup(jd_getstr(v, "path", ""));
    cg->has_limit = jd_has(v, "limit_bytes", JD_NUM);
    cg->limit = jd_getu64(v, "limit_bytes");
    cg->usage = jd_getu64(v, "usage_bytes");
    cg->has_peak = jd_has(v, "peak_bytes", JD_NUM);
    cg->peak = jd_getu64(v, "peak_bytes");
    cg->anon = jd_getu64(v, "anon_bytes");
    cg->shmem = jd_getu64(v, "shmem_bytes");
    cg->file = jd_getu64(v, "file_bytes");
    cg->has_oom_kills = jd_has(v, "oom_kills", JD_NUM);
    cg->oom_kills = jd_getu64(v, "oom_kills");
}

static void budget_load(const struct jd *v, struct budget *b)
{
    memset(b, 0, sizeof(*b));
    if (!jd_is(v, JD_OBJ))
        return;
    b->limit = jd_getu64(v, "limit_bytes");
    b->limit_source =
        strcmp(jd_getstr(v, "limit_source", ""), "cgroup") == 0 ? LIMIT_CGROUP : LIMIT_MEMTOTAL;
    b->shm_size = jd_getu64(v, "shm_size_bytes");
    b->shm_used = jd_getu64(v, "shm_used_bytes");
    b->app = jd_getu64(v, "app_bytes");
    b->headroom = jd_getu64(v, "headroom_bytes");
    b->shm_effective = jd_getu64(v, "shm_effective_bytes");
    b->verdict = verdict_of(jd_getstr(v, "verdict", NULL));
    const struct jd *adv = jd_get(v, "advice");
    b->advice = xcalloc(jd_len(adv), sizeof(*b->advice));
    for (size_t i = 0; i < jd_len(adv); i++)
        b->advice[b->nadvice++] = xstrdup(jd_str(jd_at(adv, i), ""));
    b->rec_shm_size = jd_getu64(v, "recommended_shm_size_bytes");
    b->rec_memory = jd_getu64(v, "recommended_memory_bytes");
    const struct jd *ld = jd_get(v, "loader");
    if (jd_is(ld, JD_OBJ)) {
        b->loader_main = (int)jd_getint(ld, "main_pid", 0);
        b->loader_batch = jd_getu64(ld, "batch_shm_bytes");
        b->loader_workers = jd_getu64(ld, "workers");
        b->loader_batches = jd_getu64(ld, "batches_in_flight");
        b->loader_prefetch = jd_getu64(ld, "prefetch_factor");
        b->fit_workers_shm = jd_getu64(ld, "workers_fit_shm");
        b->fit_workers_limit = jd_has(ld, "workers_fit_limit", JD_NUM)
                                   ? jd_getu64(ld, "workers_fit_limit")
                                   : UINT64_MAX;
    }
    b->oom_recent = jd_getu64(v, "oom_kills_recent");
    b->shm_other = jd_getu64(v, "shm_other_bytes");
}

/* The container c stands for: found as the same container
 * (containers_same; a private mount namespace that is no container has no
 * id: then by its pid), else added. */
static size_t ctr_add(struct scan_node *nd, const struct jd *c)
{
    struct container_info ci = {
        .runtime = runtime_of(jd_getstr(c, "runtime", NULL)),
        .id = jd_strdup(jd_get(c, "id")),
        .name = jd_strdup(jd_get(c, "name")),
        .pod_uid = jd_strdup(jd_get(c, "pod_uid")),
        .pod = jd_strdup(jd_get(c, "pod")),
        .namespace = jd_strdup(jd_get(c, "namespace")),
        .hostname = jd_strdup(jd_get(c, "hostname")),
        .containerd_namespace = jd_strdup(jd_get(c, "containerd_namespace")),
    };
    pid_t pid = (pid_t)jd_getint(c, "pid", 0);
    size_t k = 0;
    while (k < nd->nctrs && !(ci.id ? containers_same(&nd->ctrs[k].info, &ci)
                                    : !nd->ctrs[k].info.id && nd->ctrs[k].pid == pid))
        k++;
    if (k < nd->nctrs) {
        containers_free(&ci);
    } else {
        struct node_ctr *e = VEC_PUSH(nd->ctrs, nd->nctrs, nd->ctrs_cap);
        e->info = ci;
        e->pid = pid;
    }
    return k;
}

/* The container record o (a process, a group) names by its id and
 * containerd namespace (util/ctrref.h: an older record by its id alone),
 * NODE_HOST for none or one the mounts do not name. */
static size_t ctr_find(const struct scan_node *nd, const struct jd *o)
{
    struct container_ref ref = container_ref_read(o, "container");
    for (size_t k = 0; k < nd->nctrs; k++) {
        struct container_ref c = containers_ref(&nd->ctrs[k].info);
        if (container_ref_same(&c, &ref))
            return k;
    }
    return NODE_HOST;
}

static void shm_mount_load(const struct jd *o, struct shm_mount *mt)
{
    mt->path = xstrdup(jd_getstr(o, "path", ""));
    mt->fstype = xstrdup(jd_getstr(o, "fstype", "tmpfs"));
    unsigned maj = 0, min = 0;
    if (sscanf(jd_getstr(o, "id", ""), "%u:%u", &maj, &min) == 2)
        mt->dev = makedev(maj, min);
    mt->stat_ok = jd_getbool(o, "size_known", false);
    mt->size = jd_getu64(o, "size_bytes");
    mt->used = jd_getu64(o, "used_bytes");
    mt->avail = jd_getu64(o, "avail_bytes");
    mt->inodes = jd_getu64(o, "inodes");
    mt->inodes_free = jd_getu64(o, "inodes_free");
    mt->listed = jd_getbool(o, "listed", false);
}

/* A mount's containers and its owner. The snapshot names the containers
 * and gives the cgroup of the owner: a mount no container sees is the
 * host's, as is one whose cgroup is the watched world's own, top
 * (--ipc=host); else its first container owns it. */
static void node_mount_load(const struct jd *o, const struct cgroup_info *top, struct scan_node *nd,
                            struct node_mount *nm)
{
    snprintf(nm->id, sizeof(nm->id), "%s", jd_getstr(o, "id", ""));
    const struct jd *cs = jd_get(o, "containers");
    nm->ctrs = xcalloc(jd_len(cs), sizeof(*nm->ctrs));
    for (size_t k = 0; k < jd_len(cs); k++)
        nm->ctrs[nm->nctrs++] = ctr_add(nd, jd_at(cs, k));
    struct cgroup_info cg;
    cgroup_load(jd_get(o, "cgroup"), &cg);
    bool own = cg.present == top->present &&
               (!cg.present || strcmp(cg.path, top->path ? top->path : "") == 0);
    nm->host_sees = !nm->nctrs || own;
    nm->owner = nm->host_sees ? NODE_HOST : nm->ctrs[0];
    struct node_ctr *owner = nm->owner == NODE_HOST ? NULL : &nd->ctrs[nm->owner];
    if (owner && !owner->cgroup.present && cg.present)
        owner->cgroup = cg;
    else
        cgroup_free(&cg);
}

/* The mounts: the scan's, the node's (with its containers), and each
 * one's budget and figures in the model. */
static void mounts_load(const struct jd *arr, const struct cgroup_info *top, struct scan *s,
                        struct model *m)
{
    size_t n = jd_len(arr);
    s->node.nmounts = n;
    s->node.mounts = xcalloc(n, sizeof(*s->node.mounts));
    m->mounts = xcalloc(n, sizeof(*m->mounts));
    m->mount_budgets = xcalloc(n, sizeof(*m->mount_budgets));
    m->nmount_budgets = n;
    for (size_t i = 0; i < n; i++) {
        const struct jd *o = jd_at(arr, i);
        shm_mount_load(o, VEC_PUSH(s->mounts.items, s->mounts.n, s->mounts.cap));
        node_mount_load(o, top, &s->node, &s->node.mounts[i]);
        budget_load(jd_get(o, "budget"), &m->mount_budgets[i]);

        struct mount_figures *f = &m->mounts[i];
        f->named = jd_getu64(o, "named_bytes");
        f->hidden = jd_getu64(o, "hidden_bytes");
        f->orphan = jd_getu64(o, "orphan_bytes");
        f->unattributed = jd_getu64(o, "unattributed_bytes");
        f->pending = jd_getu64(o, "pending_bytes");
        f->nsegments = (size_t)jd_getu64(o, "segments");
        f->pids.npidns = (size_t)jd_getu64(o, "pid_namespaces");
        f->pids.evidence = evidence_of(jd_getstr(o, "pid_evidence", NULL));
    }
}

static size_t mount_index(const struct scan *s, const char *id, const char *path)
{
    for (size_t i = 0; id && i < s->node.nmounts; i++)
        if (strcmp(s->node.mounts[i].id, id) == 0)
            return i;
    for (size_t i = 0; path && i < s->mounts.n; i++)
        if (strcmp(s->mounts.items[i].path, path) == 0)
            return i;
    return SIZE_MAX;
}

static int32_t proc_at(const struct scan *s, pid_t pid)
{
    const struct proc *p = procs_find(&s->procs, pid);
    return p ? (int32_t)(p - s->procs.items) : -1;
}

static void proc_load(const struct jd *o, struct proc *p)
{
    p->pid = (pid_t)jd_getint(o, "pid", 0);
    p->ppid = (pid_t)jd_getint(o, "ppid", 0);
    const char *st = jd_getstr(o, "state", "?");
    p->state = st[0] ? st[0] : '?';
    snprintf(p->comm, sizeof(p->comm), "%s", jd_getstr(o, "comm", ""));
    p->cmdline = jd_strdup(jd_get(o, "cmdline"));
    p->uid = (uid_t)jd_getu64(o, "uid");
    p->rss_anon = jd_getu64(o, "rss_anon_bytes");
    p->pgid = (pid_t)jd_getint(o, "pgid", 0);
    p->nspid = (pid_t)jd_getint(o, "nspid", p->pid);
    p->start_ticks = (unsigned long long)jd_getu64(o, "start_ticks");
}

/* The processes: the snapshot's (the model's interesting ones), and a
 * group's main that it does not list, so that every group has its main
 * process. Sorted by pid, as procs_find wants. */
static void procs_load(const struct jd *procs, const struct jd *groups, struct scan *s)
{
    for (size_t i = 0; i < jd_len(procs); i++)
        proc_load(jd_at(procs, i), VEC_PUSH(s->procs.items, s->procs.n, s->procs.cap));
    procs_sort(&s->procs);
    for (size_t i = 0; i < jd_len(groups); i++) {
        const struct jd *g = jd_at(groups, i);
        pid_t main = (pid_t)jd_getint(g, "main_pid", 0);
        if (procs_find(&s->procs, main))
            continue;
        struct proc *p = VEC_PUSH(s->procs.items, s->procs.n, s->procs.cap);
        p->pid = p->nspid = main;
        p->state = '?';
        p->cmdline = jd_strdup(jd_get(g, "cmdline"));
        procs_sort(&s->procs);
    }
}

static void mprocs_load(const struct jd *procs, struct scan *s, struct model *m)
{
    s->node.nprocs = s->procs.n;
    s->node.proc_ctr = xmalloc(s->procs.n * sizeof(*s->node.proc_ctr));
    for (size_t i = 0; i < s->procs.n; i++)
        s->node.proc_ctr[i] = NODE_HOST;
    for (size_t i = 0; i < jd_len(procs); i++) {
        const struct jd *o = jd_at(procs, i);
        int32_t at = proc_at(s, (pid_t)jd_getint(o, "pid", 0));
        if (at < 0)
            continue;
        struct mproc *mp = VEC_PUSH(m->procs, m->nprocs, m->procs_cap);
        mp->proc = (size_t)at;
        mp->role = role_of(jd_getstr(o, "role", NULL));
        mp->group = (pid_t)jd_getint(o, "group", 0);
        mp->shm_bytes = jd_getu64(o, "shm_bytes");
        mp->nsegments = (size_t)jd_getu64(o, "segments");
        mp->ctr = ctr_find(&s->node, o);
        s->node.proc_ctr[at] = mp->ctr;
    }
}

static pid_t *pid_array(const struct jd *arr, size_t *n, size_t *cap)
{
    *n = *cap = jd_len(arr);
    pid_t *out = xcalloc(*n, sizeof(*out));
    for (size_t i = 0; i < *n; i++)
        out[i] = (pid_t)jd_int(jd_at(arr, i), 0);
    return out;
}

static void groups_load(const struct jd *groups, const struct scan *s, struct model *m)
{
    for (size_t i = 0; i < jd_len(groups); i++) {
        const struct jd *o = jd_at(groups, i);
        struct group *g = VEC_PUSH(m->groups, m->ngroups, m->groups_cap);
        g->main_pid = (pid_t)jd_getint(o, "main_pid", 0);
        g->main_proc = (size_t)proc_at(s, g->main_pid); /* procs_load added any missing */
        g->workers = pid_array(jd_get(o, "workers"), &g->nworkers, &g->workers_cap);
        g->managers = pid_array(jd_get(o, "shm_managers"), &g->nmanagers, &g->managers_cap);
        g->nsegments = (size_t)jd_getu64(o, "segments");
        g->shm_bytes = jd_getu64(o, "shm_bytes");
        g->peak_shm = jd_getu64(o, "peak_shm_bytes");
        g->shm_per_worker = jd_getu64(o, "shm_per_worker_bytes");
        g->batch_shm_bytes = jd_getu64(o, "batch_shm_bytes");
        g->batch_segment_bytes = jd_getu64(o, "batch_largest_segment_bytes");
        g->batches_in_flight = (size_t)jd_getu64(o, "batches_in_flight");
        g->peak_batch_shm = jd_getu64(o, "peak_batch_shm_bytes");
        g->ctr = ctr_find(&s->node, o);
    }
}

/* A segment's holders, hs, in m's pool from *used on. */
static void holders_load(const struct jd *hs, const struct scan *s, struct model *m, size_t *used,
                         struct segment *sg)
{
    sg->holders = &m->holder_pool[*used];
    for (size_t k = 0; k < jd_len(hs); k++) {
        const struct jd *h = jd_at(hs, k);
        struct seg_holder *ho = &m->holder_pool[(*used)++];
        ho->pid = (pid_t)jd_getint(h, "pid", 0);
        ho->fd = jd_has(h, "fd", JD_NUM) ? (int)jd_getnum(h, "fd", 0) : -1;
        ho->mapped = jd_getbool(h, "mapped", false);
        ho->proc = proc_at(s, ho->pid);
        sg->nholders++;
    }
}

/* Segment o on mount, as the scan's file f and the model's segment sg. */
static void segment_load(const struct jd *o, size_t mount, struct scan *s, struct model *m,
                         struct shm_file *f, struct segment *sg)
{
    f->mount = mount;
    f->name = files_name(&s->files, jd_getstr(o, "name", "?"));
    sg->name = f->name;
    sg->mount = (uint32_t)mount;
    sg->dev = f->dev = s->mounts.items[mount].dev;
    sg->ino = f->ino = (ino_t)jd_getu64(o, "inode");
    sg->size = f->size = jd_getu64(o, "size_bytes");
    sg->alloc = f->alloc = jd_getu64(o, "alloc_bytes");
    sg->uid = f->uid = (uid_t)jd_getu64(o, "uid");
    int64_t age = jd_getint(o, "age_s", 0);
    sg->mtime = f->mtime = m->now - (age > 0 ? age : 0);
    sg->state = state_of(jd_getstr(o, "state", NULL));
    sg->kind = KIND_OTHER; /* unless the name is known */
    seg_kind_parse(jd_getstr(o, "kind", "other"), &sg->kind);
    sg->has_creator = jd_has(o, "creator_pid", JD_NUM);
    sg->creator_pid = (pid_t)jd_getnum(o, "creator_pid", 0);
    sg->creator_unknown = sg->has_creator && !jd_has(o, "creator_alive", JD_BOOL);
    sg->creator_alive = jd_getbool(o, "creator_alive", false);
    sg->creator_proc = sg->creator_alive ? proc_at(s, sg->creator_pid) : -1;
    sg->group = (pid_t)jd_getint(o, "group", 0);
    sg->type = f->type = type_of(jd_getstr(o, "type", NULL));
    sg->alloc_known = jd_getbool(o, "alloc_exact", false);
    sg->note = note_of(jd_getstr(o, "note", NULL));
}

/* The segments, their names kept in the scan's file list (the model's names
 * are the scan's strings) and their holders in one pool. */
static void segments_load(const struct jd *segs, struct scan *s, struct model *m)
{
    size_t n = jd_len(segs), nh = 0;
    for (size_t i = 0; i < n; i++)
        nh += jd_len(jd_get(jd_at(segs, i), "holders"));
    m->holder_pool = xcalloc(nh, sizeof(*m->holder_pool));
    m->segs = xcalloc(n, sizeof(*m->segs));
    m->segs_cap = n;
    s->files.items = xcalloc(n, sizeof(*s->files.items));
    s->files.cap = n;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const struct jd *o = jd_at(segs, i);
        size_t mount = mount_index(s, jd_getstr(o, "mount_id", NULL), jd_getstr(o, "mount", NULL));
        if (mount == SIZE_MAX)
            continue; /* a segment of no listed mount: nothing shows it */
        struct segment *sg = &m->segs[m->nsegs++];
        segment_load(o, mount, s, m, &s->files.items[s->files.n++], sg);
        holders_load(jd_get(o, "holders"), s, m, &used, sg);
    }
}

/* By the index of their process: the scan's processes are sorted by pid,
 * so this is the order by pid. */
static int cmp_mproc(const void *a, const void *b)
{
    size_t x = ((const struct mproc *)a)->proc, y = ((const struct mproc *)b)->proc;
    return (x > y) - (x < y);
}

/* The orders the model's lookups rely on (processes by pid, groups by main
 * pid: the writer's own), and no reference to a group the snapshot does
 * not have: a snapshot of shmwatch is so already, a damaged or foreign one
 * is made so. */
static void make_consistent(struct model *m)
{
    if (m->nprocs)
        qsort(m->procs, m->nprocs, sizeof(*m->procs), cmp_mproc);
    if (m->ngroups)
        qsort(m->groups, m->ngroups, sizeof(*m->groups), pid_cmp);
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].group && !model_find_group(m, m->procs[i].group))
            m->procs[i].group = 0;
    for (size_t i = 0; i < m->nsegs; i++)
        if (m->segs[i].group && !model_find_group(m, m->segs[i].group))
            m->segs[i].group = 0;
}

static void totals_load(const struct jd *v, struct totals *t)
{
    t->segments = (size_t)jd_getu64(v, "segments");
    t->hidden = (size_t)jd_getu64(v, "hidden");
    t->hidden_bytes = jd_getu64(v, "hidden_bytes");
    t->orphans = (size_t)jd_getu64(v, "orphans");
    t->orphan_bytes = jd_getu64(v, "orphan_bytes");
    t->zombies = (size_t)jd_getu64(v, "zombies");
    t->orphan_workers = (size_t)jd_getu64(v, "orphan_workers");
    t->in_use = (size_t)jd_getu64(v, "in_use");
    t->unheld = (size_t)jd_getu64(v, "unheld");
}

static void sysv_load(const struct jd *arr, struct sysv_list *sl)
{
    for (size_t i = 0; i < jd_len(arr); i++) {
        const struct jd *o = jd_at(arr, i);
        struct sysv_seg *sv = VEC_PUSH(sl->items, sl->n, sl->cap);
        sv->key = (long long)jd_getint(o, "key", 0);
        sv->shmid = (int)jd_getint(o, "shmid", 0);
        sv->size = jd_getu64(o, "size_bytes");
        sv->rss = jd_getu64(o, "rss_bytes");
        sv->nattch = (unsigned long)jd_getu64(o, "nattch");
        sv->cpid = (pid_t)jd_getint(o, "cpid", 0);
        sv->lpid = (pid_t)jd_getint(o, "lpid", 0);
        sv->uid = (uid_t)jd_getu64(o, "uid");
    }
}

/* The scan's account of itself, and its warnings. */
static void account_load(const struct jd *doc, struct scan *s, struct model *m)
{
    const struct jd *w = jd_get(doc, "warnings");
    for (size_t i = 0; i < jd_len(w); i++) {
        const char *msg = jd_str(jd_at(w, i), NULL);
        if (msg)
            *VEC_PUSH(s->warn.msg, s->warn.n, s->warn.cap) = xstrdup(msg);
    }
    const struct jd *sc = jd_get(doc, "scan");
    s->duration_s = jd_getnum(sc, "duration_s", 0);
    s->holders_scanned = jd_getbool(sc, "holders_scanned", false);
    s->warn.vanished = (size_t)jd_getu64(sc, "vanished");
    s->warn.denied = (size_t)jd_getu64(sc, "denied");
    s->target_pid = (pid_t)jd_getint(sc, "target_pid", 0);
    s->target_host = jd_strdup(jd_get(sc, "target_host"));
    s->stalled_s = jd_getnum(sc, "stalled_s", 0);
    s->stalled_pid = (pid_t)jd_getint(sc, "stalled_pid", 0);
    s->stalled_fd = (int)jd_getint(sc, "stalled_fd", -1);
    if (jd_has(sc, "initial_pid_namespace", JD_BOOL)) {
        s->ns.view_pidns = 1; /* known; which namespace it was is not recorded */
        s->ns.view_initial = jd_getbool(sc, "initial_pid_namespace", false);
    }
    m->orphan_min_age_s = jd_getnum(sc, "orphan_min_age_s", ORPHAN_MIN_AGE_DEFAULT);
    s->node.all = jd_getbool(sc, "all", false);
}

int snapload_build(const struct jd *doc, struct scan *s, struct model *m, char *err, size_t n)
{
    memset(s, 0, sizeof(*s));
    memset(m, 0, sizeof(*m));
    m->scan = s;
    s->stalled_fd = -1;
    double when = 0;
    const char *bad = NULL;
    if (!jd_is(doc, JD_OBJ))
        bad = "not a JSON object";
    else if (jd_getint(doc, "schema", 0) != 1)
        bad = "not a schema-1 snapshot";
    else if (!rfc3339_parse(jd_getstr(doc, "time", NULL), &when))
        bad = "a snapshot without a valid \"time\"";
    if (bad) {
        snprintf(err, n, "%s", bad);
        return -EINVAL;
    }
    /* A recorded snapshot's milliseconds are kept: it is written back as
     * it was read. */
    s->time.tv_sec = whole_seconds(when);
    s->time.tv_nsec = (long)((when - (double)s->time.tv_sec) * 1e9);
    m->now = (int64_t)s->time.tv_sec;
    cgroup_load(jd_get(doc, "cgroup"), &s->cgroup);
    mounts_load(jd_get(doc, "mounts"), &s->cgroup, s, m);
    procs_load(jd_get(doc, "processes"), jd_get(doc, "groups"), s);
    mprocs_load(jd_get(doc, "processes"), s, m);
    groups_load(jd_get(doc, "groups"), s, m);
    segments_load(jd_get(doc, "segments"), s, m);
    make_consistent(m);
    budget_load(jd_get(doc, "budget"), &m->budget);
    totals_load(jd_get(doc, "totals"), &m->totals);
    sysv_load(jd_get(doc, "sysv"), &s->sysv);
    account_load(doc, s, m);
    return 0;
}
