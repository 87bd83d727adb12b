/* The JSON snapshot, schema 1 (doc/shmwatch.1, "JSON SNAPSHOT"). Every field
 * of the schema is always present; fields beyond it are additions scripts may
 * ignore. */
#include <stdio.h>
#include <sys/sysmacros.h>

#include "report/jsonw.h"
#include "report/report.h"
#include "util/rfc3339.h"

const char *report_mount_id(const struct model *m, size_t i, char *buf, size_t n)
{
    const struct scan_node *nd = model_node(m);
    if (i < nd->nmounts)
        return nd->mounts[i].id;
    if (i >= model_nmounts(m))
        return NULL;
    dev_t d = model_mount(m, i)->dev; /* a scan made by hand: the same form */
    snprintf(buf, n, "%u:%u", major(d), minor(d));
    return buf;
}

double mount_used_pct(const struct shm_mount *mt)
{
    return mt->size ? 100.0 * (double)mt->used / (double)mt->size : 0.0;
}

static void memory(struct jsonw *w, const struct cgroup_info *cg, const struct budget *b);

/* The container of a process or group: "container", its id, null for the
 * host (and for a private mount namespace that is no container), and
 * "containerd_namespace", null unless containerd's: one id may be two
 * containers in two containerd namespaces. */
static void ctr_ref(struct jsonw *w, const struct model *m, size_t ctr)
{
    const struct node_ctr *c = model_ctr(m, ctr);
    jw_str(w, "container", c ? c->info.id : NULL);
    jw_str(w, "containerd_namespace", c ? c->info.containerd_namespace : NULL);
}

static void container(struct jsonw *w, const struct node_ctr *c)
{
    jw_obj(w, NULL);
    jw_str(w, "id", c->info.id);
    jw_str(w, "name", c->info.name);
    jw_str(w, "runtime", container_runtime_name(c->info.runtime));
    jw_str(w, "pod_uid", c->info.pod_uid);
    jw_str(w, "pod", c->info.pod);
    jw_str(w, "namespace", c->info.namespace);
    jw_str(w, "hostname", c->info.hostname);
    jw_i64(w, "pid", c->pid);
    jw_str(w, "containerd_namespace", c->info.containerd_namespace);
    jw_obj_end(w);
}

/* The node view's fields of mount i: its id, the containers that see it,
 * the cgroup and budget of the one that owns it. */
static void mount_node(struct jsonw *w, const struct model *m, size_t i)
{
    const struct scan_node *n = model_node(m);
    const struct node_mount *nm = i < n->nmounts ? &n->mounts[i] : NULL;
    char id[32];
    jw_str(w, "id", report_mount_id(m, i, id, sizeof(id)));
    jw_arr(w, "containers");
    for (size_t k = 0; nm && k < nm->nctrs; k++)
        container(w, &n->ctrs[nm->ctrs[k]]);
    jw_arr_end(w);
    memory(w, model_mount_cgroup(m, i), model_mount_budget(m, i));
}

static void mounts(struct jsonw *w, const struct model *m)
{
    jw_arr(w, "mounts");
    for (size_t i = 0; i < model_nmounts(m); i++) {
        const struct shm_mount *mt = model_mount(m, i);
        const struct mount_figures *f = &m->mounts[i];
        /* A mount whose statfs failed has no size, use or free space (0,
         * with size_known false, so that schema 1's types stay); one that
         * could not be listed no named or orphan bytes (listed false); either
         * way the model leaves its unattributed bytes at 0. */
        jw_obj(w, NULL);
        mount_node(w, m, i); /* first: "listed" stays last, as it was */
        jw_str(w, "path", mt->path);
        jw_u64(w, "size_bytes", mt->size);
        jw_u64(w, "used_bytes", mt->used);
        jw_u64(w, "avail_bytes", mt->avail);
        jw_dbl(w, "used_pct", mount_used_pct(mt));
        jw_u64(w, "inodes", mt->inodes);
        jw_u64(w, "inodes_free", mt->inodes_free);
        jw_u64(w, "named_bytes", f->named);
        jw_u64(w, "hidden_bytes", f->hidden);
        jw_u64(w, "orphan_bytes", f->orphan);
        jw_u64(w, "unattributed_bytes", f->unattributed);
        jw_u64(w, "pending_bytes", f->pending);
        jw_u64(w, "pid_namespaces", f->pids.npidns);
        jw_str(w, "pid_evidence", pid_evidence_name(f->pids.evidence));
        jw_str(w, "pid_evidence_note", pid_evidence_note(f->pids.evidence));
        jw_str(w, "fstype", mt->fstype);
        jw_u64(w, "segments", f->nsegments);
        jw_bool(w, "size_known", mt->stat_ok);
        jw_bool(w, "listed", mt->listed);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

/* One segment, as schema 1 has it:
 * {"mount":PATH,"mount_id":ID,"name":NAME,"inode":N,"size_bytes":N,
 *  "alloc_bytes":N,"uid":N,"age_s":N,"state":S,"kind":K,"creator_pid":N|null,
 *  "creator_alive":B|null,"holders":[{"pid":N,"fd":N|null,"mapped":B},...],
 *  "group":N|null,"type":T,"alloc_exact":B,"note":S|null} */
static void segment(struct jsonw *w, const struct model *m, const struct segment *sg)
{
    char id[32];
    jw_obj(w, NULL);
    jw_str(w, "mount", model_mount(m, sg->mount)->path);
    jw_str(w, "mount_id", report_mount_id(m, sg->mount, id, sizeof(id)));
    jw_str(w, "name", sg->name);
    jw_u64(w, "inode", (uint64_t)sg->ino);
    jw_u64(w, "size_bytes", sg->size);
    jw_u64(w, "alloc_bytes", sg->alloc);
    jw_u64(w, "uid", sg->uid);
    jw_i64(w, "age_s", segment_age_s(m, sg));
    jw_str(w, "state", seg_state_name(sg->state));
    jw_str(w, "kind", seg_kind_name(sg->kind));
    jw_i64_or_null(w, "creator_pid", sg->has_creator, sg->creator_pid);
    jw_bool_or_null(w, "creator_alive", sg->has_creator && !sg->creator_unknown, sg->creator_alive);
    jw_arr(w, "holders");
    for (size_t h = 0; h < sg->nholders; h++) {
        const struct seg_holder *ho = &sg->holders[h];
        jw_obj(w, NULL);
        jw_i64(w, "pid", ho->pid);
        jw_i64_or_null(w, "fd", ho->fd >= 0, ho->fd);
        jw_bool(w, "mapped", ho->mapped);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_i64_or_null(w, "group", sg->group != 0, sg->group);
    jw_str(w, "type", file_type_name(sg->type));
    jw_bool(w, "alloc_exact", sg->alloc_known);
    char note[256];
    jw_str(w, "note", sg->note != NOTE_NONE ? segment_note(m, sg, note, sizeof(note)) : NULL);
    jw_obj_end(w);
}

static void segments(struct jsonw *w, const struct model *m)
{
    jw_arr(w, "segments");
    for (size_t i = 0; i < m->nsegs; i++)
        segment(w, m, &m->segs[i]);
    jw_arr_end(w);
}

/* One process, as schema 1 has it:
 * {"pid":N,"ppid":N,"state":S,"comm":S,"cmdline":S|null,"uid":N,"role":R,
 *  "group":N|null,"rss_anon_bytes":N,"shm_bytes":N,"segments":N,"pgid":N,
 *  "nspid":N,"start_ticks":N,"container":S|null,"containerd_namespace":S|null} */
static void process(struct jsonw *w, const struct model *m, const struct mproc *mp)
{
    const struct proc *p = model_proc(m, mp);
    char state[2] = {p->state, '\0'};
    jw_obj(w, NULL);
    jw_i64(w, "pid", p->pid);
    jw_i64(w, "ppid", p->ppid);
    jw_str(w, "state", state);
    jw_str(w, "comm", p->comm);
    jw_str(w, "cmdline", p->cmdline);
    jw_u64(w, "uid", p->uid);
    jw_str(w, "role", proc_role_name(mp->role));
    jw_i64_or_null(w, "group", mp->group != 0, mp->group);
    jw_u64(w, "rss_anon_bytes", p->rss_anon);
    jw_u64(w, "shm_bytes", mp->shm_bytes);
    jw_u64(w, "segments", mp->nsegments);
    jw_i64(w, "pgid", p->pgid);
    jw_i64(w, "nspid", p->nspid);
    jw_u64(w, "start_ticks", p->start_ticks);
    ctr_ref(w, m, mp->ctr);
    jw_obj_end(w);
}

static void processes(struct jsonw *w, const struct model *m)
{
    jw_arr(w, "processes");
    for (size_t i = 0; i < m->nprocs; i++)
        process(w, m, &m->procs[i]);
    jw_arr_end(w);
}

static void groups(struct jsonw *w, const struct model *m)
{
    jw_arr(w, "groups");
    for (size_t i = 0; i < m->ngroups; i++) {
        const struct group *g = &m->groups[i];
        jw_obj(w, NULL);
        jw_i64(w, "main_pid", g->main_pid);
        jw_str(w, "cmdline", model_group_main(m, g)->cmdline);
        jw_arr(w, "workers");
        for (size_t k = 0; k < g->nworkers; k++)
            jw_i64(w, NULL, g->workers[k]);
        jw_arr_end(w);
        jw_arr(w, "shm_managers");
        for (size_t k = 0; k < g->nmanagers; k++)
            jw_i64(w, NULL, g->managers[k]);
        jw_arr_end(w);
        jw_u64(w, "segments", g->nsegments);
        jw_u64(w, "shm_bytes", g->shm_bytes);
        jw_u64(w, "peak_shm_bytes", g->peak_shm);
        jw_u64(w, "shm_per_worker_bytes", g->shm_per_worker);
        bool batch = g->batch_shm_bytes != 0; /* null: no batch seen */
        jw_u64_or_null(w, "batch_shm_bytes", batch, g->batch_shm_bytes);
        jw_u64_or_null(w, "batch_largest_segment_bytes", batch, g->batch_segment_bytes);
        jw_u64_or_null(w, "batches_in_flight", batch, g->batches_in_flight);
        jw_u64_or_null(w, "peak_batch_shm_bytes", batch, g->peak_batch_shm);
        ctr_ref(w, m, g->ctr);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

void report_json_observed(struct jsonw *w, const struct group *g)
{
    jw_obj(w, "observed");
    jw_i64(w, "main_pid", g->main_pid);
    jw_u64(w, "workers", g->nworkers);
    jw_u64(w, "segments", g->batch_segments);
    jw_u64(w, "shm_bytes", g->batch_segments_bytes);
    jw_u64(w, "largest_segment_bytes", g->batch_segment_bytes);
    jw_u64(w, "batches_in_flight", g->batches_in_flight);
    jw_u64(w, "prefetch_factor", loader_prefetch_of(g));
    jw_str(w, "method", "shm_bytes / batches_in_flight; one largest segment per batch");
    jw_obj_end(w);
}

static void cgroup(struct jsonw *w, const struct cgroup_info *cg)
{
    if (!cg->present) {
        jw_null(w, "cgroup");
        return;
    }
    jw_obj(w, "cgroup");
    jw_i64(w, "version", cg->version);
    jw_str(w, "path", cg->path ? cg->path : "");
    jw_u64_or_null(w, "limit_bytes", cg->has_limit, cg->limit);
    jw_u64(w, "usage_bytes", cg->usage);
    jw_u64_or_null(w, "peak_bytes", cg->has_peak, cg->peak);
    jw_u64(w, "anon_bytes", cg->anon);
    jw_u64(w, "shmem_bytes", cg->shmem);
    jw_u64(w, "file_bytes", cg->file);
    jw_u64_or_null(w, "oom_kills", cg->has_oom_kills, cg->oom_kills);
    jw_obj_end(w);
}

static void budget(struct jsonw *w, const struct budget *b)
{
    jw_obj(w, "budget");
    jw_u64(w, "limit_bytes", b->limit);
    jw_str(w, "limit_source", b->limit_source == LIMIT_CGROUP ? "cgroup" : "memtotal");
    jw_u64(w, "shm_size_bytes", b->shm_size);
    jw_u64(w, "shm_used_bytes", b->shm_used);
    jw_u64(w, "app_bytes", b->app);
    jw_u64(w, "headroom_bytes", b->headroom);
    jw_u64(w, "shm_effective_bytes", b->shm_effective);
    jw_str(w, "verdict", verdict_name(b->verdict));
    jw_strs(w, "advice", b->advice, b->nadvice);
    jw_u64(w, "recommended_shm_size_bytes", b->rec_shm_size);
    jw_u64(w, "recommended_memory_bytes", b->rec_memory);
    if (b->loader_main) {
        jw_obj(w, "loader");
        jw_i64(w, "main_pid", b->loader_main);
        jw_u64(w, "batch_shm_bytes", b->loader_batch);
        jw_u64(w, "workers", b->loader_workers);
        jw_u64(w, "batches_in_flight", b->loader_batches);
        jw_u64(w, "prefetch_factor", b->loader_prefetch);
        jw_u64(w, "workers_fit_shm", b->fit_workers_shm);
        jw_u64_or_null(w, "workers_fit_limit", b->fit_workers_limit != UINT64_MAX,
                       b->fit_workers_limit);
        jw_obj_end(w);
    } else {
        jw_null(w, "loader");
    }
    jw_u64(w, "oom_kills_recent", b->oom_recent);
    /* Last, so that the others keep their places: what the cgroup's other
     * shm mounts hold, which headroom_bytes subtracts too. */
    jw_u64(w, "shm_other_bytes", b->shm_other);
    jw_obj_end(w);
}

/* The "cgroup" and "budget" blocks of whoever owns the segments: the
 * watched world's at the top level, in the node view each mount's owner's
 * too; one shape in both places. */
static void memory(struct jsonw *w, const struct cgroup_info *cg, const struct budget *b)
{
    cgroup(w, cg);
    budget(w, b);
}

static void totals(struct jsonw *w, const struct totals *t)
{
    jw_obj(w, "totals");
    jw_u64(w, "segments", t->segments);
    jw_u64(w, "hidden", t->hidden);
    jw_u64(w, "hidden_bytes", t->hidden_bytes);
    jw_u64(w, "orphans", t->orphans);
    jw_u64(w, "orphan_bytes", t->orphan_bytes);
    jw_u64(w, "zombies", t->zombies);
    jw_u64(w, "orphan_workers", t->orphan_workers);
    jw_u64(w, "in_use", t->in_use);
    jw_u64(w, "unheld", t->unheld);
    jw_obj_end(w);
}

static void sysv(struct jsonw *w, const struct sysv_list *sl)
{
    jw_arr(w, "sysv");
    for (size_t i = 0; i < sl->n; i++) {
        const struct sysv_seg *s = &sl->items[i];
        jw_obj(w, NULL);
        jw_i64(w, "key", s->key);
        jw_i64(w, "shmid", s->shmid);
        jw_u64(w, "size_bytes", s->size);
        jw_u64(w, "rss_bytes", s->rss);
        jw_u64(w, "nattch", s->nattch);
        jw_i64(w, "cpid", s->cpid);
        jw_i64(w, "lpid", s->lpid);
        jw_u64(w, "uid", s->uid);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

/* The snapshot; a recorded one (reason not NULL) has its time to the
 * millisecond, which orders it among the events beside it, and its reason
 * as a last member (doc/recording.md). */
static void snapshot(struct buf *out, const struct model *m, FILE *sink, const char *reason)
{
    const struct warnings *warn = model_warnings(m);
    struct jsonw w;
    jw_init(&w, out);
    w.sink = sink;
    struct timespec at = model_scan_time(m);
    char when[RFC3339_LEN];
    rfc3339_format(when, sizeof(when), (double)at.tv_sec + (reason ? at.tv_nsec / 1e9 : 0));
    jw_obj(&w, NULL);
    jw_i64(&w, "schema", SNAPSHOT_SCHEMA);
    jw_str(&w, "time", when);
    mounts(&w, m);
    segments(&w, m);
    processes(&w, m);
    groups(&w, m);
    memory(&w, model_cgroup(m), &m->budget);
    totals(&w, &m->totals);
    jw_strs(&w, "warnings", warn->msg, warn->n);
    sysv(&w, model_sysv(m));
    jw_obj(&w, "scan");
    jw_dbl(&w, "duration_s", model_scan_duration(m));
    jw_bool(&w, "holders_scanned", model_holders_scanned(m));
    jw_u64(&w, "vanished", warn->vanished);
    jw_u64(&w, "denied", warn->denied);
    pid_t target = model_target_pid(m);
    jw_i64_or_null(&w, "target_pid", target > 0, target);
    jw_str(&w, "target_host", model_target_host(m));
    pid_t stalled_pid;
    int stalled_fd;
    double stalled_s = model_stalled(m, &stalled_pid, &stalled_fd);
    jw_dbl(&w, "stalled_s", stalled_s);
    jw_i64_or_null(&w, "stalled_pid", stalled_pid > 0, stalled_pid);
    jw_i64_or_null(&w, "stalled_fd", stalled_s > 0 && stalled_fd >= 0, stalled_fd);
    /* Whether /proc lists every process of the machine (its pid namespace
     * is the first one), null when unknown. */
    bool initial;
    unsigned long pidns = model_view_pidns(m, &initial);
    jw_bool_or_null(&w, "initial_pid_namespace", pidns, initial);
    jw_dbl(&w, "orphan_min_age_s", m->orphan_min_age_s);
    jw_bool(&w, "all", model_node(m)->all); /* the node view (--all) */
    jw_obj_end(&w);
    if (reason)
        jw_str(&w, "reason", reason);
    jw_obj_end(&w);
}

void report_json(struct buf *out, const struct model *m)
{
    snapshot(out, m, NULL, NULL);
}

void report_json_stream(struct buf *out, const struct model *m, FILE *sink)
{
    snapshot(out, m, sink, NULL);
}

void report_json_record(struct buf *out, const struct model *m, const char *reason)
{
    snapshot(out, m, NULL, reason);
}
