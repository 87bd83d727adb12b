/* The Prometheus text exposition format (version 0.0.4), for node_exporter's
 * textfile collector. Base units, HELP and TYPE for every family, labels of
 * low cardinality: mount, state, kind, and main_pid for at most
 * PROM_MAX_GROUPS groups. */
#include <string.h>

#include "report/report.h"
#include "util/clock.h"
#include "util/escape.h"

#define PROM_MAX_GROUPS 20

static void family(struct buf *o, const char *name, const char *type, const char *help)
{
    buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values: backslash, quote and newline escaped; bytes that are not
 * valid UTF-8 replaced by '?', as the format requires UTF-8, and so are
 * other control characters and the characters a terminal would not show
 * as they are (utf8_char_shown): a label ends up in alerts people read. */
static void label_value(struct buf *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (p[i] == '\\' || p[i] == '"') {
            buf_addc(o, '\\');
            buf_addc(o, (char)p[i++]);
        } else if (p[i] == '\n') {
            buf_adds(o, "\\n");
            i++;
        } else {
            size_t len = utf8_valid_len(p + i, n - i);
            if (len == 0 || p[i] < 0x20 || p[i] == 0x7f) {
                buf_addc(o, '?');
                i++;
            } else if (len > 1 && !utf8_char_shown(p + i, len)) {
                buf_addc(o, '?'); /* one for the character */
                i += len;
            } else {
                buf_add(o, p + i, len);
                i += len;
            }
        }
    }
}

static void label(struct buf *o, const char *key, const char *value)
{
    buf_printf(o, ",%s=\"", key);
    label_value(o, value ? value : "");
    buf_addc(o, '"');
}

/* The labels of mount i, without the braces: mount="PATH"; in the node view
 * (--all) also mount_id and its owner's container (its name, else its
 * hostname), container_id, pod, namespace and containerd_namespace (which
 * tells apart containerd's containers of one id), empty when unknown or the
 * host's, so that one alert rule covers every container of a fleet. */
static void mount_labels(struct buf *o, const struct model *m, size_t i)
{
    const struct scan_node *n = model_node(m);
    buf_adds(o, "mount=\"");
    label_value(o, model_mount(m, i)->path);
    buf_addc(o, '"');
    if (!n->all)
        return;
    char id[32];
    label(o, "mount_id", report_mount_id(m, i, id, sizeof(id)));
    const struct node_ctr *c = node_owner(n, i);
    const struct container_info *ci = c ? &c->info : NULL;
    label(o, "container", ci ? (ci->name ? ci->name : ci->hostname) : NULL);
    label(o, "container_id", ci ? ci->id : NULL);
    label(o, "pod", ci ? ci->pod : NULL);
    label(o, "namespace", ci ? ci->namespace : NULL);
    label(o, "containerd_namespace", ci ? ci->containerd_namespace : NULL);
}

static void sample_mount(struct buf *o, const char *name, const struct model *m, size_t i,
                         uint64_t v)
{
    buf_printf(o, "%s{", name);
    mount_labels(o, m, i);
    buf_printf(o, "} %llu\n", (unsigned long long)v);
}

enum mount_figure { MF_SIZE, MF_USED, MF_AVAIL, MF_NAMED, MF_HIDDEN, MF_ORPHAN, MF_UNATTRIBUTED,
                    MF_PENDING, MF_INODES, MF_INODES_FREE, MF_PIDNS, MF_PIDS_TRUSTED };

/* One family, a sample per mount. A mount whose statfs failed has no
 * sample of the figures that come from statfs (size, used, avail, the
 * inodes, and unattributed, which is used minus what the scan saw), and one
 * that could not be listed none of those that come from its listing (named,
 * orphan, unattributed): no figure rather than a false 0. */
static void mount_family(struct buf *o, const struct model *m, const char *name, const char *help,
                         enum mount_figure which)
{
    bool from_statfs = which == MF_SIZE || which == MF_USED || which == MF_AVAIL ||
                       which == MF_UNATTRIBUTED || which == MF_INODES || which == MF_INODES_FREE;
    bool from_listing = which == MF_NAMED || which == MF_ORPHAN || which == MF_UNATTRIBUTED;
    family(o, name, "gauge", help);
    for (size_t i = 0; i < model_nmounts(m); i++) {
        const struct shm_mount *mt = model_mount(m, i);
        const struct mount_figures *f = &m->mounts[i];
        if ((from_statfs && !mt->stat_ok) || (from_listing && !mt->listed))
            continue;
        enum pid_evidence e = f->pids.evidence;
        const uint64_t v[] = {
            mt->size,   mt->used,        mt->avail,       f->named,
            f->hidden,  f->orphan,       f->unattributed, f->pending,
            mt->inodes, mt->inodes_free, f->pids.npidns,  e != PIDS_SHARED && e != PIDS_UNPROVEN};
        sample_mount(o, name, m, i, v[which]);
    }
}

static void segments(struct buf *o, const struct model *m)
{
    family(o, "shmwatch_segments", "gauge", "Segments by mount, state and kind.");
    for (size_t i = 0; i < model_nmounts(m); i++) {
        if (!model_mount(m, i)->listed)
            continue; /* its named segments unknown: no false 0s (mount_family) */
        size_t count[SEG_UNHELD + 1][KIND_COUNT] = {{0}}; /* one pass over the segments */
        for (size_t j = 0; j < m->nsegs; j++)
            if (m->segs[j].mount == i)
                count[m->segs[j].state][m->segs[j].kind]++;
        for (size_t s = SEG_IN_USE; s <= SEG_UNHELD; s++) {
            for (size_t k = 0; k < KIND_COUNT; k++) {
                buf_adds(o, "shmwatch_segments{");
                mount_labels(o, m, i);
                buf_printf(o, ",state=\"%s\",kind=\"%s\"} %zu\n", seg_state_name((enum seg_state)s),
                           seg_kind_name((enum seg_kind)k), count[s][k]);
            }
        }
    }
}

static void groups(struct buf *o, const struct model *m)
{
    size_t shown = m->ngroups < PROM_MAX_GROUPS ? m->ngroups : PROM_MAX_GROUPS;
    family(o, "shmwatch_groups", "gauge", "DataLoader groups (main process with workers).");
    buf_printf(o, "shmwatch_groups %zu\n", m->ngroups);
    family(o, "shmwatch_group_shm_bytes", "gauge",
           "Shared memory allocated by the segments of a DataLoader group.");
    for (size_t i = 0; i < shown; i++)
        buf_printf(o, "shmwatch_group_shm_bytes{main_pid=\"%d\"} %llu\n",
                   (int)m->groups[i].main_pid, (unsigned long long)m->groups[i].shm_bytes);
    family(o, "shmwatch_group_workers", "gauge", "Live workers of a DataLoader group.");
    for (size_t i = 0; i < shown; i++)
        buf_printf(o, "shmwatch_group_workers{main_pid=\"%d\"} %zu\n",
                   (int)m->groups[i].main_pid, m->groups[i].nworkers);
}

static void gauge(struct buf *o, const char *name, const char *help, double v)
{
    family(o, name, "gauge", help);
    buf_printf(o, "%s %.17g\n", name, v);
}

/* When the data of the last complete scan was collected: an alert on
 * time() minus this fires when the figures stop being renewed, whatever
 * keeps rewriting the file. */
static void last_scan(struct buf *o, double t)
{
    family(o, "shmwatch_last_scan_timestamp_seconds", "gauge",
           "When the last complete scan started (its figures were collected), Unix time.");
    buf_printf(o, "shmwatch_last_scan_timestamp_seconds %.3f\n", t);
}

static void stalled(struct buf *o, double s)
{
    gauge(o, "shmwatch_scan_stalled_seconds",
          "How long the scan under way has been running when it is stalled; 0 when not.", s);
}

void report_prometheus_stalled(struct buf *o, const struct model *m, double last_scan_time)
{
    /* A comment line: the text is for people, its bytes made printable. */
    const struct warnings *w = model_warnings(m);
    buf_adds(o, "# shmwatch: ");
    for (size_t i = 0; i < w->n; i++)
        label_value(o, w->msg[i]);
    buf_addc(o, '\n');
    if (last_scan_time > 0)
        last_scan(o, last_scan_time);
    pid_t pid;
    int fd;
    stalled(o, model_stalled(m, &pid, &fd));
}

enum node_figure { NF_LIMIT, NF_HEADROOM, NF_EFFECTIVE, NF_VERDICT, NF_CG_LIMIT, NF_CG_USAGE,
                   NF_CG_SHMEM, NF_CG_ANON, NF_CG_OOM };

/* The budget and cgroup families of the node view; the budget's four are
 * also the watched world's own, without labels, outside it. */
static const struct {
    const char *name, *type, *help;
} fam[] = {
    [NF_LIMIT] = {"shmwatch_budget_limit_bytes", "gauge",
                  "Memory limit the budget uses (cgroup or MemTotal)."},
    [NF_HEADROOM] = {"shmwatch_budget_headroom_bytes", "gauge",
                     "Limit minus app memory minus shm used."},
    [NF_EFFECTIVE] = {"shmwatch_budget_shm_effective_bytes", "gauge",
                      "Shm that can still be written before ENOSPC or the memory limit."},
    [NF_VERDICT] = {"shmwatch_budget_verdict", "gauge",
                    "Budget verdict: 0 ok, 1 warn, 2 critical."},
    [NF_CG_LIMIT] = {"shmwatch_cgroup_limit_bytes", "gauge",
                     "Memory limit of the cgroup that owns the mount."},
    [NF_CG_USAGE] = {"shmwatch_cgroup_usage_bytes", "gauge",
                     "Memory charged to the cgroup that owns the mount."},
    [NF_CG_SHMEM] = {"shmwatch_cgroup_shmem_bytes", "gauge",
                     "Shared memory charged to the cgroup that owns the mount."},
    [NF_CG_ANON] = {"shmwatch_cgroup_anon_bytes", "gauge",
                    "Anonymous memory of the cgroup that owns the mount."},
    [NF_CG_OOM] = {"shmwatch_cgroup_oom_kills_total", "counter",
                   "Processes the OOM killer ended in the cgroup that owns the mount."},
};

/* The node view's budget and cgroup families: a sample per mount, with the
 * mount's labels, from the cgroup that owns it (a container's own). */
static void node_budgets(struct buf *o, const struct model *m)
{
    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        family(o, fam[f].name, fam[f].type, fam[f].help);
        for (size_t i = 0; i < model_nmounts(m); i++) {
            const struct budget *b = model_mount_budget(m, i);
            const struct cgroup_info *cg = model_mount_cgroup(m, i);
            if (f >= NF_CG_LIMIT && !cg->present)
                continue;
            uint64_t v;
            switch ((enum node_figure)f) {
            case NF_LIMIT: v = b->limit; break;
            case NF_HEADROOM: v = b->headroom; break;
            case NF_EFFECTIVE: v = b->shm_effective; break;
            case NF_VERDICT: v = (uint64_t)b->verdict; break;
            case NF_CG_LIMIT:
                if (!cg->has_limit)
                    continue;
                v = cg->limit;
                break;
            case NF_CG_USAGE: v = cg->usage; break;
            case NF_CG_SHMEM: v = cg->shmem; break;
            case NF_CG_ANON: v = cg->anon; break;
            default:
                if (!cg->has_oom_kills)
                    continue;
                v = cg->oom_kills;
            }
            sample_mount(o, fam[f].name, m, i, v);
        }
    }
}

/* Outside the node view: the watched world's cgroup and budget families,
 * without labels. */
static void watched_budget(struct buf *o, const struct model *m)
{
    const struct cgroup_info *cg = model_cgroup(m);
    if (cg->present) {
        if (cg->has_limit)
            gauge(o, "shmwatch_cgroup_limit_bytes", "Memory limit of the watched cgroup.",
                  (double)cg->limit);
        gauge(o, "shmwatch_cgroup_usage_bytes", "Memory charged to the watched cgroup.",
              (double)cg->usage);
        gauge(o, "shmwatch_cgroup_shmem_bytes", "Shared memory charged to the watched cgroup.",
              (double)cg->shmem);
        gauge(o, "shmwatch_cgroup_anon_bytes", "Anonymous memory of the watched cgroup.",
              (double)cg->anon);
        if (cg->has_oom_kills) {
            family(o, "shmwatch_cgroup_oom_kills_total", "counter",
                   "Processes the OOM killer ended in the watched cgroup since it was made.");
            buf_printf(o, "shmwatch_cgroup_oom_kills_total %llu\n",
                       (unsigned long long)cg->oom_kills);
        }
    }
    const struct budget *b = &m->budget;
    const double v[] = {[NF_LIMIT] = (double)b->limit, [NF_HEADROOM] = (double)b->headroom,
                        [NF_EFFECTIVE] = (double)b->shm_effective,
                        [NF_VERDICT] = (double)b->verdict};
    for (size_t f = NF_LIMIT; f <= NF_VERDICT; f++)
        gauge(o, fam[f].name, fam[f].help, v[f]);
}

void report_prometheus(struct buf *o, const struct model *m)
{
    mount_family(o, m, "shmwatch_mount_size_bytes", "Size of the shm mount.", MF_SIZE);
    mount_family(o, m, "shmwatch_mount_used_bytes", "Bytes used on the shm mount (statfs).",
                 MF_USED);
    mount_family(o, m, "shmwatch_mount_avail_bytes", "Bytes still free on the shm mount.",
                 MF_AVAIL);
    mount_family(o, m, "shmwatch_mount_inodes", "Inodes of the shm mount (statfs).", MF_INODES);
    mount_family(o, m, "shmwatch_mount_inodes_free",
                 "Inodes still free on the shm mount: at 0 every new segment fails with "
                 "ENOSPC, whatever the free bytes.",
                 MF_INODES_FREE);
    mount_family(o, m, "shmwatch_mount_named_bytes",
                 "Bytes allocated by files with a name in the mount.", MF_NAMED);
    mount_family(o, m, "shmwatch_mount_hidden_bytes",
                 "Bytes allocated by unlinked segments still held by a process.", MF_HIDDEN);
    mount_family(o, m, "shmwatch_mount_orphan_bytes",
                 "Bytes allocated by orphaned segments (held by nobody, creator dead).",
                 MF_ORPHAN);
    mount_family(o, m, "shmwatch_mount_unattributed_bytes",
                 "Bytes used that the scan could not attribute to a segment.", MF_UNATTRIBUTED);
    mount_family(o, m, "shmwatch_mount_pending_bytes",
                 "Apparent minus allocated bytes of live segments: writes still to come.",
                 MF_PENDING);
    mount_family(o, m, "shmwatch_mount_pid_namespaces",
                 "Pid namespaces whose processes can reach the mount; above 1 a pid in a segment "
                 "name proves no orphan.",
                 MF_PIDNS);
    mount_family(o, m, "shmwatch_mount_pids_trusted",
                 "1 when a dead creator pid can prove an orphan on the mount, else 0.",
                 MF_PIDS_TRUSTED);
    segments(o, m);
    groups(o, m);

    if (model_node(m)->all)
        node_budgets(o, m);
    else
        watched_budget(o, m);
    gauge(o, "shmwatch_zombies", "Zombie processes.", (double)m->totals.zombies);
    gauge(o, "shmwatch_orphan_workers", "DataLoader workers whose main process is gone.",
          (double)m->totals.orphan_workers);
    gauge(o, "shmwatch_scan_duration_seconds", "How long the last scan took.",
          model_scan_duration(m));
    last_scan(o, clock_seconds(model_scan_time(m)));
    stalled(o, 0);
    gauge(o, "shmwatch_scan_warnings", "Things the last scan could not read.",
          (double)model_warnings(m)->n);
    gauge(o, "shmwatch_scan_denied_processes",
          "Processes whose fds or maps could not be read (permission).",
          (double)model_warnings(m)->denied);
}

void report_prometheus_deaths(struct buf *out, const struct death_counts *c)
{
    family(out, "shmwatch_process_deaths_total", "counter",
           "Processes of the model seen ending since this exporter started, by signal (none: "
           "exited on its own; unknown: gone between two scans without the kernel's process "
           "events), role and container (and containerd_namespace, for a container "
           "containerd runs).");
    for (size_t i = 0; i < c->n; i++) {
        const struct death_count *d = &c->items[i];
        buf_adds(out, "shmwatch_process_deaths_total{signal=\"");
        label_value(out, d->signal);
        buf_addc(out, '"');
        label(out, "role", proc_role_name(d->role));
        label(out, "container", d->container);
        /* Prometheus takes a label that is not there as empty: only a
         * containerd namespace's container has it. */
        if (d->containerd_ns[0])
            label(out, "containerd_namespace", d->containerd_ns);
        buf_printf(out, "} %llu\n", (unsigned long long)d->n);
    }
}
