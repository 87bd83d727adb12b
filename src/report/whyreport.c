/* `shmwatch why` in words and in JSON (report/whyreport.h). */
#include "report/whyreport.h"

#include <stdlib.h>
#include <string.h>

#include "model/budget.h"
#include "report/jsonw.h"
#include "util/ctrref.h"
#include "util/escape.h"
#include "util/rfc3339.h"
#include "util/units.h"

static const char *role_word(const char *role)
{
    if (!role)
        return "process";
    if (!strcmp(role, "shm_manager"))
        return "shm manager";
    if (!strcmp(role, "orphan_worker"))
        return "orphaned worker";
    return role;
}

static void how(struct buf *b, const struct why_death *d)
{
    if (!strcmp(d->cause, "sigbus"))
        buf_adds(b, "killed by SIGBUS (Bus error)");
    else if (!strcmp(d->cause, "oom_kill"))
        buf_adds(b, "killed by the OOM killer (SIGKILL)");
    else if (!strcmp(d->cause, "signal"))
        buf_printf(b, "killed by %s", d->signal ? d->signal : "a signal");
    else if (!strcmp(d->cause, "exit"))
        buf_printf(b, "exited with status %lld", (long long)d->exit_code);
    else
        buf_adds(b, "gone, cause unknown");
}

/* pre, s escaped for a terminal as every name from the recording, post. */
static void esc_in(struct buf *b, const char *pre, const char *s, const char *post)
{
    buf_adds(b, pre);
    esc_term(b, s, false);
    buf_adds(b, post);
}

/* Who, how, when. */
static void who_text(struct buf *b, const struct why_death *d)
{
    char t[48];
    buf_adds(b, role_word(d->role));
    if (d->has_pid)
        buf_printf(b, " %lld", (long long)d->pid);
    if (d->comm)
        esc_in(b, " (", d->comm, ")");
    if (d->has_group && d->group != d->pid)
        buf_printf(b, " of DataLoader main %lld", (long long)d->group);
    char *ctr = container_label(d->container_ns, d->container_name, d->container);
    if (ctr)
        esc_in(b, ", container ", ctr, "");
    free(ctr);
    if (d->pod)
        esc_in(b, ", pod ", d->pod, "");
    buf_adds(b, ": ");
    how(b, d);
    buf_printf(b, " at %s\n", why_fmt_time(t, sizeof(t), d->t));
}

/* The mount before and at, the budget, the biggest groups. */
static void then_text(struct buf *b, const struct why_death *d)
{
    char t[48], s1[32], s2[32], s3[32];
    if (d->has_mount) {
        esc_in(b, "  ", d->mount_path ? d->mount_path : "?", "");
        if (d->mount_id)
            esc_in(b, " (", d->mount_id, ")");
        buf_adds(b, ":");
        if (d->has_before)
            buf_printf(b, " %s just before (%s)",
                       fmt_size_of(s1, sizeof(s1), d->used_before, d->size),
                       why_fmt_clock(t, sizeof(t), d->t_before));
        if (d->has_before && d->has_at)
            buf_adds(b, ",");
        if (d->has_at)
            buf_printf(b, " %s at the end (%s)", fmt_size_of(s1, sizeof(s1), d->used_at, d->size),
                       why_fmt_clock(t, sizeof(t), d->t_at));
        buf_printf(b, "; most seen %s (%.0f %%)\n",
                   fmt_size_of(s1, sizeof(s1), d->used_peak, d->size),
                   d->size ? 100.0 * (double)d->used_peak / (double)d->size : 0.0);
    } else if (d->mount_unknown) {
        buf_adds(b, "  its /dev/shm is not known: the snapshots around it show several mounts, "
                    "and nothing ties it to one\n");
    } else {
        buf_adds(b, "  no snapshot around it shows its /dev/shm\n");
    }
    if (d->has_budget) {
        buf_printf(b, "  budget then: app %s + shm %s", fmt_size(s1, sizeof(s1), d->app),
                   fmt_size(s2, sizeof(s2), d->shm_used));
        if (d->shm_other) /* the other shm mounts of the cgroup, in the headroom too */
            buf_printf(b, " + other shm %s", fmt_size(s1, sizeof(s1), d->shm_other));
        buf_printf(b, " of %s (%s", fmt_size(s3, sizeof(s3), d->limit),
                   d->limit_cgroup ? "cgroup" : "MemTotal");
        if (d->cgroup)
            esc_in(b, " ", d->cgroup, "");
        buf_printf(b, "), headroom %s\n", fmt_size(s1, sizeof(s1), d->headroom));
    }
    if (d->ntop) {
        buf_adds(b, "  biggest:");
        for (size_t i = 0; i < d->ntop; i++)
            buf_printf(b, "%s DataLoader main %lld %s (%zu worker%s)", i ? "," : "",
                       (long long)d->top[i].main_pid, fmt_size(s1, sizeof(s1), d->top[i].shm_bytes),
                       d->top[i].workers, d->top[i].workers == 1 ? "" : "s");
        buf_adds(b, "\n");
    }
}

/* The diagnosis, what was left behind, the advice. */
static void after_text(struct buf *b, const struct why_death *d)
{
    char t[48], s1[32], s2[32];
    esc_in(b, "  why: ", d->diagnosis, "\n");
    if (d->has_left && d->left_segments)
        buf_printf(b,
                   "  left behind: %llu segment%s, %s, nobody holding them, since %s "
                   "(shmwatch clean removes them)\n",
                   (unsigned long long)d->left_segments, d->left_segments == 1 ? "" : "s",
                   fmt_size(s1, sizeof(s1), d->left_bytes), why_fmt_clock(t, sizeof(t), d->t));
    else if (d->has_left)
        buf_adds(b, "  left behind: nothing on /dev/shm in the last snapshot\n");
    if (!d->has_advice || !d->rec_shm)
        return;
    buf_printf(b, "  advice: --shm-size at least %s and -m at least %s",
               budget_flag_size(s1, sizeof(s1), d->rec_shm),
               budget_flag_size(s2, sizeof(s2), d->rec_memory));
    if (d->from_loader)
        buf_printf(b,
                   " (its loader: one batch %s x (%llu workers x prefetch %llu + 2) = %s "
                   "at its busiest, more than the mount held; as shmwatch plan "
                   "--observe computes it)\n",
                   budget_fmt_step(s1, sizeof(s1), d->loader_batch),
                   (unsigned long long)d->loader_workers, (unsigned long long)d->loader_prefetch,
                   budget_fmt_step(s2, sizeof(s2), d->need_shm));
    else if (d->from_size)
        buf_printf(b,
                   " (the mount's %s as its peak, which the Bus error shows it reached; as "
                   "shmwatch plan and the budget compute them)\n",
                   budget_fmt_step(s1, sizeof(s1), d->need_shm));
    else
        buf_adds(b, " (from the recorded peaks, as shmwatch plan and the budget compute them)\n");
}

void whyreport_text(struct buf *out, const struct whyreport_in *in)
{
    char from[48], to[48];
    const struct why_result *r = in->r;
    why_fmt_time(from, sizeof(from), in->from);
    why_fmt_time(to, sizeof(to), in->to);
    if (r->n == 0) {
        buf_printf(out, "Nothing ended abnormally between %s and %s.\n", from, to);
        return;
    }
    buf_printf(out, "%zu abnormal end%s between %s and %s:\n", r->n, r->n == 1 ? "" : "s", from,
               to);
    for (size_t i = 0; i < r->n; i++) {
        buf_adds(out, "\n");
        who_text(out, &r->d[i]);
        then_text(out, &r->d[i]);
        after_text(out, &r->d[i]);
    }
}

static void death_json(struct jsonw *w, const struct why_death *d)
{
    char t[RFC3339_LEN];
    jw_obj(w, NULL);
    jw_i64_or_null(w, "pid", d->has_pid, d->pid);
    jw_str(w, "comm", d->comm);
    jw_str(w, "role", d->role);
    jw_i64_or_null(w, "group", d->has_group, d->group);
    jw_str(w, "container", d->container);
    jw_str(w, "container_name", d->container_name);
    jw_str(w, "pod", d->pod);
    jw_str(w, "time", rfc3339_format(t, sizeof(t), d->t));
    jw_str(w, "cause", d->cause);
    jw_str(w, "signal", d->signal);
    jw_i64_or_null(w, "exit_code", d->has_exit_code, d->exit_code);
    if (d->has_mount) {
        jw_obj(w, "mount");
        jw_str(w, "id", d->mount_id);
        jw_str(w, "path", d->mount_path);
        jw_u64(w, "size_bytes", d->size);
        jw_u64_or_null(w, "used_bytes_before", d->has_before, d->used_before);
        jw_u64_or_null(w, "used_bytes_at", d->has_at, d->used_at);
        jw_u64(w, "used_bytes_peak", d->used_peak);
        jw_bool(w, "full", d->full);
        jw_obj_end(w);
    } else {
        jw_null(w, "mount");
    }
    if (d->has_budget) {
        jw_obj(w, "budget_at");
        jw_u64(w, "limit_bytes", d->limit);
        jw_str(w, "limit_source", d->limit_cgroup ? "cgroup" : "memtotal");
        jw_u64(w, "app_bytes", d->app);
        jw_u64(w, "shm_used_bytes", d->shm_used);
        jw_u64(w, "headroom_bytes", d->headroom);
        jw_str(w, "cgroup", d->cgroup);
        jw_obj_end(w);
    } else {
        jw_null(w, "budget_at");
    }
    jw_arr(w, "groups");
    for (size_t i = 0; i < d->ntop; i++) {
        jw_obj(w, NULL);
        jw_i64(w, "main_pid", d->top[i].main_pid);
        jw_u64(w, "shm_bytes", d->top[i].shm_bytes);
        jw_u64(w, "workers", d->top[i].workers);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_str(w, "diagnosis", d->diagnosis);
    if (d->has_left) {
        jw_obj(w, "left_behind");
        jw_u64(w, "segments", d->left_segments);
        jw_u64(w, "bytes", d->left_bytes);
        jw_str(w, "since", d->left_segments ? rfc3339_format(t, sizeof(t), d->t) : NULL);
        jw_obj_end(w);
    } else {
        jw_null(w, "left_behind");
    }
    jw_obj(w, "advice");
    jw_u64_or_null(w, "recommended_shm_size_bytes", d->has_advice && d->rec_shm, d->rec_shm);
    jw_u64_or_null(w, "recommended_memory_bytes", d->has_advice && d->rec_memory, d->rec_memory);
    jw_u64_or_null(w, "shm_need_bytes", d->has_advice && d->need_shm, d->need_shm);
    jw_str(w, "from", !d->has_advice ? NULL : d->from_loader ? "loader" : "peaks");
    jw_obj_end(w);
    /* Last, so that the others keep their places: the containerd namespace
     * of the container, which tells apart containerd's containers of one
     * id. */
    jw_str(w, "containerd_namespace", d->container_ns);
    jw_obj_end(w);
}

void whyreport_json(struct buf *out, const struct whyreport_in *in)
{
    struct jsonw w;
    char t[RFC3339_LEN];
    jw_init(&w, out);
    jw_obj(&w, NULL);
    jw_arr(&w, "deaths");
    for (size_t i = 0; i < in->r->n; i++)
        death_json(&w, &in->r->d[i]);
    jw_arr_end(&w);
    jw_obj(&w, "window");
    jw_str(&w, "from", rfc3339_format(t, sizeof(t), in->from));
    jw_str(&w, "to", rfc3339_format(t, sizeof(t), in->to));
    jw_obj_end(&w);
    jw_strs(&w, "warnings", in->warnings, in->nwarnings);
    jw_obj_end(&w);
    buf_addc(out, '\n');
}
