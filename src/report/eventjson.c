/* The event lines of doc/recording.md ("Events"): one JSON object each,
 * written by the snapshot's writer (the same escaping), its kind and time
 * first. */
#include <string.h>

#include "report/jsonw.h"
#include "report/report.h"
#include "util/rfc3339.h"

void report_event_json(struct buf *out, const struct event *e)
{
    struct jsonw w;
    jw_init(&w, out);
    char when[RFC3339_LEN];
    jw_obj(&w, NULL);
    jw_str(&w, "event", event_kind_name(e->kind));
    jw_str(&w, "time", rfc3339_format(when, sizeof(when), e->t));
    switch (e->kind) {
    case EV_EXIT:
        jw_i64(&w, "pid", e->pid);
        jw_str(&w, "comm", e->comm);
        jw_str(&w, "role", proc_role_name(e->role));
        jw_i64_or_null(&w, "group", e->group != 0, e->group);
        jw_str(&w, "container", e->container);
        jw_str(&w, "container_name", e->container_name);
        jw_i64_or_null(&w, "exit_code", e->has_exit_code, e->exit_code);
        jw_str(&w, "signal", exit_signal_name(e->signal));
        jw_bool(&w, "core", e->core);
        jw_str(&w, "cause", exit_cause_name(e->cause));
        break;
    case EV_OOM_KILL:
        jw_str(&w, "cgroup", e->cgroup);
        jw_str(&w, "container", e->container);
        jw_str(&w, "container_name", e->container_name);
        jw_u64(&w, "kills", e->kills);
        jw_i64_or_null(&w, "victim", e->victim != 0, e->victim);
        jw_str(&w, "victim_comm", e->victim && e->victim_comm[0] ? e->victim_comm : NULL);
        break;
    case EV_SEGMENTS:
    case EV_MOUNT:
    case EV_FILL:
        jw_str(&w, "mount_id", e->mount_id);
        jw_str(&w, "mount", e->mount);
        jw_str(&w, "container", e->container);
        jw_str(&w, "container_name", e->container_name);
        if (e->kind == EV_SEGMENTS) {
            jw_u64(&w, "created", e->created);
            jw_u64(&w, "removed", e->removed);
            jw_dbl(&w, "interval_s", e->interval_s);
        } else if (e->kind == EV_MOUNT) {
            jw_str(&w, "change", e->appeared ? "appeared" : "gone");
        } else {
            jw_u64(&w, "used_bytes", e->used);
            jw_u64(&w, "size_bytes", e->size);
            jw_dbl(&w, "used_pct", e->used_pct);
            jw_str(&w, "level", fill_level_name(e->level));
        }
        break;
    case EV_RECORDER:
        jw_str(&w, "what", e->what);
        jw_str(&w, "detail", e->detail);
        if (e->what && strcmp(e->what, "stalled") == 0) {
            jw_dbl(&w, "stalled_s", e->stalled_s);
            jw_i64_or_null(&w, "stalled_pid", e->stalled_pid > 0, e->stalled_pid);
            jw_i64_or_null(&w, "stalled_fd", e->stalled_fd >= 0, e->stalled_fd);
        }
        break;
    }
    /* Last, so that the kind's members keep their places: the container's
     * containerd namespace, which tells apart containerd's containers of
     * one id (null unless containerd's). */
    if (e->kind != EV_RECORDER)
        jw_str(&w, "containerd_namespace", e->container_ns);
    jw_obj_end(&w);
}
