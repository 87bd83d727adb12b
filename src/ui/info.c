/* The budget page (the arithmetic behind the verdict, with the live
 * numbers) and the details page of a segment, process, group or section. */
#include <sys/sysmacros.h>
#include <stdio.h>

#include "collect/procs.h"
#include "config/config.h"
#include "report/report.h"
#include "ui/page.h"
#include "ui/term.h"
#include "util/container_id.h"
#include "util/passwd.h"
#include "util/units.h"

#define SZ(b) fmt_size((char[16]){0}, 16, (b))

/* --- Budget ---------------------------------------------------------------- */

/* What the running DataLoader teaches: its batch and how many workers fit. */
static void budget_loader(struct page *p, const struct budget *b)
{
    if (!b->loader_main)
        return;
    page_blank(p);
    page_add(p, THEME_header, 0, "The DataLoader of main pid %d, as its segments show it",
             b->loader_main);
    page_add(p, THEME_normal, 4,
             "  one batch %s in /dev/shm; %llu batches in flight with %llu workers: prefetch "
             "factor %llu",
             SZ(b->loader_batch), (unsigned long long)b->loader_batches,
             (unsigned long long)b->loader_workers, (unsigned long long)b->loader_prefetch);
    page_add(p, THEME_normal, 4,
             "  workers that fit at that factor: %llu in this /dev/shm (%s)%s",
             (unsigned long long)b->fit_workers_shm, SZ(b->shm_size),
             b->fit_workers_limit == UINT64_MAX ? ", no memory limit applies" : "");
    if (b->fit_workers_limit != UINT64_MAX)
        page_add(p, THEME_normal, 4, "  and %llu under this memory limit (%s)",
                 (unsigned long long)b->fit_workers_limit, SZ(b->limit));
}

/* The error messages the state leads to, and the limit behind them. */
static void budget_errors(struct page *p, const struct model *m, size_t mount)
{
    const struct shm_error *e[8];
    enum shm_limit first;
    size_t n = shm_errors_ahead(m, mount, &first, e, 8);
    page_blank(p);
    page_add(p, THEME_header, 0, "Errors this state leads to");
    page_add(p, THEME_normal, 4, "  %s runs out first; then expect:", shm_limit_name(first));
    for (size_t i = 0; i < n; i++)
        page_add(p, THEME_normal, 6, "    %s", e[i]->message);
    page_add(p, THEME_muted, 4, "  %s",
             first == SHM_LIMIT_MEMORY
                 ? "Raise -m (or lower --shm-size below -m minus the app); see the guide, "
                   "\"Errors you will meet\"."
                 : "Raise --shm-size (fewer workers, a smaller batch or prefetch factor need "
                   "less); see the guide, \"Errors you will meet\".");
}

static void budget_limit(struct page *p, const struct budget *b, const struct cgroup_info *cg)
{
    if (b->limit_source == LIMIT_CGROUP) {
        char path[256]; /* the cgroup's path is the system's text: escaped */
        term_escape(path, sizeof(path), cg->path ? cg->path : "?");
        page_add(p, THEME_normal, 27, "  limit     %12s   memory cgroup v%d %s (%s)", SZ(b->limit),
                 cg->version, path,
                 cg->version == 2 ? "memory.max" : "memory.limit_in_bytes");
        if (cg->limit_inherited)
            page_add(p, THEME_muted, 27, "%27sthe limit is set on a parent cgroup", "");
    } else {
        page_add(p, THEME_normal, 27,
                 "  limit     %12s   MemTotal: no memory cgroup limit applies, so the machine's "
                 "memory is the limit",
                 SZ(b->limit));
    }
    page_add(p, THEME_normal, 27, "  app       %12s   %s", SZ(b->app),
             !cg->present       ? "anonymous memory (RssAnon) of the watched processes"
             : cg->version == 2 ? "anonymous memory charged to the cgroup (memory.stat anon)"
                                : "anonymous memory charged to the cgroup (memory.stat "
                                  "total_rss)");
}

/* How many processes the OOM killer has ended in the cgroup, and whether it
 * has just happened: the count is the kernel's, since the cgroup was made. */
static void budget_oom(struct page *p, const struct budget *b, const struct cgroup_info *cg)
{
    if (!cg->present)
        return;
    const char *file = cg->version == 2 ? "memory.events oom_kill" : "memory.oom_control oom_kill";
    if (!cg->has_oom_kills) {
        page_add(p, THEME_muted, 27, "  oom kills %12s   the kernel does not say (%s missing)",
                 "unknown", file);
        return;
    }
    unsigned long long n = (unsigned long long)cg->oom_kills;
    const char *cause =
        b->limit_source == LIMIT_CGROUP ? "the memory limit (-m) was hit" : "memory ran out";
    if (b->oom_recent)
        page_add(p, THEME_verdict_critical, 27,
                 "  oom kills %12llu   %llu just now: the OOM killer ended %s because %s (%s)", n,
                 (unsigned long long)b->oom_recent, b->oom_recent == 1 ? "a process" : "processes",
                 cause, file);
    else if (n)
        page_add(p, THEME_warning, 27,
                 "  oom kills %12llu   since the cgroup was made: %s at least once (%s)", n, cause,
                 file);
    else
        page_add(p, THEME_normal, 27, "  oom kills %12llu   none since the cgroup was made (%s)",
                 n, file);
}

void info_budget(struct ui *u, struct page *p)
{
    snprintf(p->title, sizeof(p->title), "Budget: how much shared memory fits");
    if (!u->snap) {
        page_add(p, THEME_muted, 0, "Waiting for the first scan.");
        return;
    }
    size_t mi;
    const struct budget *b = ui_budget(u, &mi);
    const struct cgroup_info *cg = ui_cgroup(u);
    const struct shm_mount *mt =
        mi < model_nmounts(&u->snap->model) ? model_mount(&u->snap->model, mi) : NULL;
    uint64_t avail = mt ? mt->avail : 0;
    if (ui_node(u)) {
        char label[256];
        ui_ctr_label(&u->snap->model, ui_selected_ctr(u), label, sizeof(label));
        page_add(p, THEME_header, 0, "Node view: the budget of %s (the container of the selected row; "
                 "select another container's row for its budget)", label);
        page_blank(p);
    }
    page_add(p, THEME_normal, 0,
             "A container has one memory limit. Everything it uses counts against it: the "
             "application's own (anonymous) memory, and every page written to /dev/shm, which "
             "is charged to the cgroup of the process that first wrote it. /dev/shm also has "
             "its own size (docker --shm-size). Whichever runs out first decides how a "
             "DataLoader dies: \"No space left on device\" or a Bus error (SIGBUS) when "
             "/dev/shm is full, an OOM kill when the limit is reached.");
    page_blank(p);
    page_add_name(p, THEME_header, 0, mt ? "The figures for " : "The figures", mt ? mt->path : "");
    budget_limit(p, b, cg);
    page_add(p, THEME_normal, 27,
             "  shm used  %12s   pages written in the mount (statfs: size - free)",
             SZ(b->shm_used));
    page_add(p, THEME_normal, 27, "  shm size  %12s   the size of the tmpfs", SZ(b->shm_size));
    size_t nother, first;
    uint64_t other = model_budget_other_shm(&u->snap->model, b, &nother, &first);
    if (nother == 1) {
        char label[128];
        snprintf(label, sizeof(label),
                 "  other shm %12s   pages written in another shm mount charged to the same "
                 "cgroup: ", SZ(other));
        page_add_name(p, THEME_normal, 27, label, model_mount(&u->snap->model, first)->path);
    } else if (nother > 1) {
        page_add(p, THEME_normal, 27, "  other shm %12s   pages written in %zu other shm mounts "
                 "charged to the same cgroup", SZ(other), nother);
    }
    budget_oom(p, b, cg);
    page_blank(p);
    page_add(p, THEME_header, 0, "The arithmetic");
    char minus_other[32] = "";
    if (nother)
        snprintf(minus_other, sizeof(minus_other), " - %s", SZ(other));
    page_add(p, THEME_normal, 15, "  headroom   = limit - app - shm used%s",
             nother ? " - other shm" : "");
    page_add(p, THEME_normal, 15, "             = %s - %s - %s%s = %s%s", SZ(b->limit), SZ(b->app),
             SZ(b->shm_used), minus_other, SZ(b->headroom),
             b->limit < b->app + b->shm_used + other ? " (over the limit: counted as 0)" : "");
    page_add(p, THEME_normal, 15,
             "  shm free   = shm size - shm used = %s (what statfs reports free)", SZ(avail));
    page_add(p, THEME_normal, 15, "  writable   = min(shm free, headroom) = min(%s, %s) = %s",
             SZ(avail), SZ(b->headroom), SZ(b->shm_effective));
    char path[96]; /* the mount's path is the system's text: escaped */
    term_escape(path, sizeof(path), mt ? mt->path : "/dev/shm");
    if (avail <= b->headroom)
        page_add(p, THEME_normal, 15,
                 "             %s fills up first: the next writer gets \"No space left on "
                 "device\" or a Bus error", path);
    else
        page_add(p, THEME_warning, 15,
                 "             the memory limit is reached first: the OOM killer ends a process "
                 "before %s is full", path);
    if (u->snap->model.nsegs && mt)
        page_add(p, THEME_normal, 15,
                 "  pending    = %s: sizes of live segments not written yet. Writing them needs "
                 "that much more; past \"shm free\" the write ends in SIGBUS.",
                 SZ(u->snap->model.mounts[mi].pending));
    page_blank(p);
    page_add(p, dash_verdict_role(b->verdict), 0,
             "Verdict: %s (warn at %d%% full, critical at %d%%)", verdict_name(b->verdict),
             u->set->cfg.warn_pct, u->set->cfg.crit_pct);
    for (size_t i = 0; i < b->nadvice; i++)
        page_add_name(p, i == 0 ? THEME_warning : THEME_normal, 4, "  - ", b->advice[i]);
    budget_loader(p, b);
    budget_errors(p, &u->snap->model, mi);
}

/* --- Details ------------------------------------------------------------------ */

static const char *state_story(enum seg_state s)
{
    switch (s) {
    case SEG_IN_USE:
        return "named in the mount and held by a live process";
    case SEG_HIDDEN:
        return "unlinked but still held: invisible to ls, it fills the mount until every "
               "holder closes and unmaps it";
    case SEG_ORPHAN:
        return "named, held by nobody, and its creator is dead: garbage, safe to remove";
    default:
        return "named and held by nobody, owner unknown: may be a segment kept on purpose";
    }
}

static const char *role_story(enum proc_role r)
{
    switch (r) {
    case ROLE_MAIN:
        return "the main process of a DataLoader group";
    case ROLE_WORKER:
        return "a DataLoader worker";
    case ROLE_SHM_MANAGER:
        return "a torch_shm_manager: unlinks its clients' named segments once they are gone";
    case ROLE_ORPHAN_WORKER:
        return "a worker whose main process is gone: stuck, it holds its memory until ended";
    case ROLE_ZOMBIE:
        return "a zombie: already dead, waiting for its parent to reap it";
    case ROLE_HOLDER:
        return "holds shared memory";
    default:
        return "";
    }
}

/* "  owner      uid 1000 " and "(alice)": the name from the watched root's
 * /etc/passwd (a container's own with --pid; not NSS, which a static binary
 * cannot use), escaped by page_add_name. name is empty when unknown. */
static void owner_line(struct ui *u, struct page *p, uid_t uid)
{
    char label[48], name[260] = "", n[256];
    if (u->sys.root >= 0 && passwd_name_at(u->sys.root, uid, n, sizeof(n)) == 0)
        snprintf(name, sizeof(name), "(%s)", n);
    snprintf(label, sizeof(label), "  owner      uid %u%s", (unsigned)uid, name[0] ? " " : "");
    page_add_name(p, THEME_normal, 15, label, name);
}

/* How a holder has a segment: "fd 5, mapped", "fd 5", "mapped only". */
static void holder_how(const struct seg_holder *h, char *dst, size_t n)
{
    if (h->fd >= 0)
        snprintf(dst, n, "fd %d%s", h->fd, h->mapped ? ", mapped" : "");
    else
        snprintf(dst, n, "mapped only");
}

static void holder_line(struct ui *u, struct page *p, const struct seg_holder *h)
{
    const struct proc *hp = model_holder_proc(&u->snap->model, h);
    char how[32], label[128];
    holder_how(h, how, sizeof(how));
    snprintf(label, sizeof(label), "  pid %-7d %-16s ", (int)h->pid, how);
    page_add_name(p, THEME_normal, 28, label, hp ? hp->comm : "(gone)");
}

static void segment_details(struct ui *u, struct page *p, const struct segment *sg)
{
    const struct model *m = &u->snap->model;
    char a[64];
    page_add_name(p, THEME_header, 2, "Segment ", sg->name);
    snprintf(p->title, sizeof(p->title), "Details of a segment");
    bool mounted = sg->mount < model_nmounts(m); /* its mount is in the model */
    if (model_node(m)->all && mounted) {
        /* The node view: which container's mount (segments of two
         * containers may bear one name). Escaped by ui_mount_label. */
        char where[320];
        ui_mount_label(u, sg->mount, where, sizeof(where));
        page_add(p, THEME_normal, 15, "  mount      %s", where);
    } else {
        page_add_name(p, THEME_normal, 15, "  mount      ",
                      mounted ? model_segment_mount(m, sg)->path : "?");
    }
    page_add(p, THEME_normal, 15, "  state      %s: %s", seg_state_name(sg->state),
             state_story(sg->state));
    page_add(p, THEME_normal, 15, "  kind       %s", seg_kind_name(sg->kind));
    page_add(p, THEME_normal, 15, "  size       %s apparent, %s%s allocated", SZ(sg->size),
             sg->alloc_known ? "" : "about ", SZ(sg->alloc));
    if (sg->size > sg->alloc && sg->alloc_known)
        page_add(p, THEME_normal, 15,
                 "             %s not written yet: writing it needs that much room in the mount",
                 SZ(sg->size - sg->alloc));
    page_add(p, THEME_normal, 15, "  inode      %llu (device %u:%u), %s",
             (unsigned long long)sg->ino, major(sg->dev), minor(sg->dev), file_type_name(sg->type));
    owner_line(u, p, sg->uid);
    if (sg->mtime > 0)
        page_add(p, THEME_normal, 15, "  age        %s since the last write",
                 fmt_duration(a, sizeof(a), (double)segment_age_s(m, sg)));
    if (sg->has_creator)
        page_add(p, THEME_normal, 15, "  creator    pid %d (from the name), %s",
                 (int)sg->creator_pid,
                 sg->creator_alive     ? "alive"
                 : sg->creator_unknown ? "not alive here, but that proves nothing"
                                       : "dead");
    if (sg->note != NOTE_NONE) {
        char note[256];
        page_add_name(p, THEME_warning, 15, "  no orphan  ", segment_note(m, sg, note, sizeof(note)));
    }
    const char *pids = mounted ? pid_evidence_note(m->mounts[sg->mount].pids.evidence) : NULL;
    if (pids)
        page_add(p, THEME_normal, 15, "  pids       %s", pids);
    if (sg->group)
        page_add(p, THEME_normal, 15, "  group      DataLoader of main pid %d", (int)sg->group);
    page_blank(p);
    page_add(p, THEME_header, 0, "Holders (%u)", (unsigned)sg->nholders);
    if (!sg->nholders)
        page_add(p, THEME_muted, 2, "  nobody has it open or mapped");
    for (size_t i = 0; i < sg->nholders; i++)
        holder_line(u, p, &sg->holders[i]);
}

static void process_details(struct ui *u, struct page *p, pid_t pid)
{
    const struct model *m = &u->snap->model;
    const struct proc *pr = model_scan_proc(m, pid);
    const struct mproc *mp = model_find_proc(m, pid);
    snprintf(p->title, sizeof(p->title), "Details of process %d", (int)pid);
    if (!pr) {
        page_add(p, THEME_warning, 0, "Process %d is gone.", (int)pid);
        return;
    }
    char a[64];
    page_add_name(p, THEME_header, 2, "Process ", pr->comm);
    page_add(p, THEME_normal, 15, "  pid        %d (parent %d, state %c)", (int)pr->pid,
             (int)pr->ppid, pr->state);
    page_add_name(p, THEME_normal, 15, "  command    ", pr->cmdline);
    if (pr->exe)
        page_add_name(p, THEME_normal, 15, "  exe        ", pr->exe);
    owner_line(u, p, pr->uid);
    if (mp) {
        page_add(p, THEME_normal, 15, "  role       %s: %s", proc_role_name(mp->role),
                 role_story(mp->role));
        if (mp->group)
            page_add(p, THEME_normal, 15, "  group      DataLoader of main pid %d", (int)mp->group);
    }
    uint64_t shmem;
    if (procs_read_shmem(u->sys.proc, pr->pid, pr->start_ticks, &shmem) == 0)
        page_add(p, THEME_normal, 15, "  memory     %s anonymous, %s shared memory resident",
                 SZ(pr->rss_anon), SZ(shmem));
    else
        page_add(p, THEME_normal, 15, "  memory     %s anonymous", SZ(pr->rss_anon));
    const struct group *g = model_find_group(m, pid);
    if (g) {
        page_blank(p);
        page_add(p, THEME_header, 0,
                 "DataLoader group: %zu workers, %zu shm managers, %zu "
                 "segments, %s",
                 g->nworkers, g->nmanagers, g->nsegments, SZ(g->shm_bytes));
        if (g->batch_shm_bytes)
            page_add(p, THEME_normal, 15,
                     "  batch      %s in /dev/shm (its largest tensor %s), %zu in flight; %s "
                     "per worker; peak %s since shmwatch started",
                     SZ(g->batch_shm_bytes), SZ(g->batch_segment_bytes), g->batches_in_flight,
                     SZ(g->shm_per_worker), SZ(g->peak_shm));
        for (size_t i = 0; i < g->nworkers; i++) {
            const struct proc *w = model_scan_proc(m, g->workers[i]);
            snprintf(a, sizeof(a), "  worker      %-7d ", (int)g->workers[i]);
            page_add_name(p, THEME_normal, 22, a, w ? w->comm : "(gone)");
        }
        for (size_t i = 0; i < g->nmanagers; i++)
            page_add(p, THEME_normal, 22, "  shm manager %d", (int)g->managers[i]);
    }
    page_blank(p);
    page_add(p, THEME_header, 0, "Segments it holds (%zu, %s)", mp ? mp->nsegments : 0,
             SZ(mp ? mp->shm_bytes : 0));
    size_t shown = 0;
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        for (size_t h = 0; h < sg->nholders; h++) {
            const struct seg_holder *x = &sg->holders[h];
            if (x->pid != pid)
                continue;
            char label[128], how[32];
            holder_how(x, how, sizeof(how));
            snprintf(label, sizeof(label), "  %-16s %-7s %9s  ", how, seg_state_name(sg->state),
                     SZ(sg->alloc));
            page_add_name(p, THEME_normal, 38, label, sg->name);
            shown++;
        }
    }
    if (!shown)
        page_add(p, THEME_muted, 2, "  none");
}

static const char *const section_help[SEC_COUNT] = {
    [SEC_HOLDERS] = "Processes outside any DataLoader group that hold shared memory, and "
                    "workers whose main process is gone.",
    [SEC_ORPHANS] = "Named segments that nobody holds and whose creator is dead: garbage "
                    "that still fills the mount. They are safe to remove.",
    [SEC_UNHELD] = "Named segments that nobody holds and whose owner is unknown. They may be "
                   "kept on purpose: look before removing them.",
    [SEC_OTHER] = "Segments held by processes that are not listed (e.g. gone mid-scan).",
};

/* The node view's container: who it is, its cgroup and budget, its mounts. */
static void container_details(struct ui *u, struct page *p, size_t ctr)
{
    const struct model *m = &u->snap->model;
    const struct node_ctr *c = model_ctr(m, ctr);
    char label[256];
    ui_ctr_label(&u->snap->model, ctr, label, sizeof(label));
    if (!c) {
        page_add(p, THEME_header, 0, "The host: the processes and mounts of shmwatch's own mount "
                 "namespace");
    } else {
        const struct container_info *ci = &c->info;
        page_add(p, THEME_header, 0, "Container %s", label);
        const char *runtime = container_runtime_name(ci->runtime); /* NULL: none */
        page_add(p, THEME_normal, 14, "  runtime    %s", runtime ? runtime : "-");
        page_add_name(p, THEME_normal, 14, "  id         ", ci->id ? ci->id : "-");
        page_add_name(p, THEME_normal, 14, "  name       ", ci->name ? ci->name : "-");
        page_add_name(p, THEME_normal, 14, "  pod        ", ci->pod ? ci->pod : "-");
        page_add_name(p, THEME_normal, 14, "  namespace  ", ci->namespace ? ci->namespace : "-");
        page_add_name(p, THEME_normal, 14, "  pod uid    ", ci->pod_uid ? ci->pod_uid : "-");
        page_add_name(p, THEME_normal, 14, "  hostname   ", ci->hostname ? ci->hostname : "-");
        if (ci->containerd_namespace)
            page_add_name(p, THEME_normal, 14, "  containerd namespace ", ci->containerd_namespace);
        page_add(p, THEME_normal, 14, "  pid        %d (a host pid inside it; actions on its "
                 "segments act in its mount namespace)", (int)c->pid);
        page_add(p, THEME_normal, 14, "  mntns      %lu", c->mntns);
        if (c->cgroup.present)
            page_add_name(p, THEME_normal, 14, "  cgroup     ", c->cgroup.path ? c->cgroup.path : "?");
        else
            page_add(p, THEME_muted, 14, "  cgroup     none found: its budget is the host's memory");
    }
    page_blank(p);
    page_add(p, THEME_header, 0, "Its shm mounts");
    size_t shown = 0;
    for (size_t i = 0; i < model_nmounts(m); i++) {
        if (node_owner_index(model_node(m), i) != ctr)
            continue;
        const struct shm_mount *mt = model_mount(m, i);
        const struct budget *b = ctr == NODE_HOST ? &m->budget : model_mount_budget(m, i);
        char ml[256], id[32];
        ui_mount_label(u, i, ml, sizeof(ml));
        page_add(p, dash_verdict_role(b->verdict), 4, "  %s  (device %s): %s of %s used, %.1f%%, "
                 "%zu segments, verdict %s", ml, report_mount_id(m, i, id, sizeof(id)),
                 SZ(mt->used), SZ(mt->size), mount_used_pct(mt), m->mounts[i].nsegments,
                 verdict_name(b->verdict));
        shown++;
    }
    /* None of its own (--ipc=host, --ipc=container:X): the mounts it sees,
     * each labelled with the container whose figures they are. */
    for (size_t i = 0; !shown && i < model_nmounts(m); i++) {
        if (!model_mount_seen_by(m, i, ctr))
            continue;
        char ml[256], id[32];
        ui_mount_label(u, i, ml, sizeof(ml));
        page_add(p, THEME_muted, 2, "  none of its own: it sees %s (device %s)", ml,
                 report_mount_id(m, i, id, sizeof(id)));
    }
    page_blank(p);
    page_add(p, THEME_muted, 0, "Press b for its budget page (limit, app, shm, headroom).");
}

void info_details(struct ui *u, struct page *p)
{
    snprintf(p->title, sizeof(p->title), "Details");
    if (!u->snap)
        return;
    const struct row_key *k = &u->details;
    switch (k->kind) {
    case ROW_SEG: {
        const struct segment *sg = row_key_seg(&u->snap->model, k);
        if (sg)
            segment_details(u, p, sg);
        else
            page_add(p, THEME_warning, 0, "The segment is gone: it was not in the last scan.");
        return;
    }
    case ROW_SECTION:
        page_add(p, THEME_normal, 0, "%s", section_help[k->section]);
        return;
    case ROW_CTR: {
        size_t c = ui_key_ctr(&u->snap->model, k);
        if (c == UI_CTR_ANY)
            page_add(p, THEME_warning, 0, "The container is gone: it was not in the last scan.");
        else
            container_details(u, p, c);
        return;
    }
    default:
        process_details(u, p, k->pid);
        return;
    }
}
