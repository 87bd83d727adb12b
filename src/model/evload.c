/* Event lines read back into events (evload.h). */
#include "model/evload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/ctrref.h"
#include "util/xalloc.h"

JD_NAME_READER(role_of, enum proc_role, proc_role_name, ROLE_NONE, ROLE_HOLDER, ROLE_NONE)
JD_NAME_READER(signal_of, int, exit_signal_name, 1, 63, 0)
JD_NAME_READER(cause_of, enum exit_cause, exit_cause_name, CAUSE_SIGBUS, CAUSE_UNKNOWN,
               CAUSE_UNKNOWN)
JD_NAME_READER(level_of, enum fill_level, fill_level_name, FILL_OK, FILL_CRITICAL, FILL_OK)
JD_NAME_READER(kind_of, int, event_kind_name, EV_EXIT, EV_RECORDER, -1)

/* The recorder's what, as the literal the writer holds; NULL for a word
 * this version does not write. */
static const char *what_of(const char *s)
{
    static const char *const whats[] = {"start", "stop", "disk_full", "events_off", "stalled"};
    for (size_t k = 0; s && k < sizeof(whats) / sizeof(whats[0]); k++)
        if (strcmp(s, whats[k]) == 0)
            return whats[k];
    return NULL;
}

int evload_build(const struct jd *doc, double t, struct event *e, char *err, size_t n)
{
    memset(e, 0, sizeof(*e));
    bool obj = jd_is(doc, JD_OBJ);
    const char *kind = jd_getstr(doc, "event", NULL);
    int k = kind_of(kind);
    if (k < 0) {
        snprintf(err, n, "%s",
                 !obj    ? "not a JSON object"
                 : !kind ? "no \"event\" member: not an event"
                         : "an event of a kind not known here");
        return -EINVAL;
    }
    e->kind = (enum event_kind)k;
    e->t = t;
    struct container_ref ctr = container_ref_read(doc, "container");
    e->container = ctr.id ? xstrdup(ctr.id) : NULL;
    e->container_name = jd_strdup(jd_get(doc, "container_name"));
    e->container_ns = ctr.ns ? xstrdup(ctr.ns) : NULL;
    e->container_ns_known = ctr.ns_known;
    switch (e->kind) {
    case EV_EXIT:
        e->pid = jd_getpid(doc, "pid");
        snprintf(e->comm, sizeof(e->comm), "%s", jd_getstr(doc, "comm", ""));
        e->role = role_of(jd_getstr(doc, "role", NULL));
        e->group = jd_getpid(doc, "group");
        e->has_exit_code = jd_has(doc, "exit_code", JD_NUM);
        e->exit_code = (int)jd_getint(doc, "exit_code", 0);
        e->signal = signal_of(jd_getstr(doc, "signal", NULL));
        e->core = jd_getbool(doc, "core", false);
        e->cause = cause_of(jd_getstr(doc, "cause", NULL));
        break;
    case EV_OOM_KILL:
        e->cgroup = jd_strdup(jd_get(doc, "cgroup"));
        e->kills = jd_getu64(doc, "kills");
        e->victim = jd_getpid(doc, "victim");
        snprintf(e->victim_comm, sizeof(e->victim_comm), "%s", jd_getstr(doc, "victim_comm", ""));
        break;
    case EV_SEGMENTS:
    case EV_MOUNT:
    case EV_FILL:
        snprintf(e->mount_id, sizeof(e->mount_id), "%s", jd_getstr(doc, "mount_id", ""));
        e->mount = jd_strdup(jd_get(doc, "mount"));
        e->created = jd_getu64(doc, "created");
        e->removed = jd_getu64(doc, "removed");
        e->interval_s = jd_getnum(doc, "interval_s", 0);
        e->appeared = !strcmp(jd_getstr(doc, "change", ""), "appeared");
        e->used = jd_getu64(doc, "used_bytes");
        e->size = jd_getu64(doc, "size_bytes");
        e->used_pct = jd_getnum(doc, "used_pct", 0);
        e->level = level_of(jd_getstr(doc, "level", NULL));
        break;
    case EV_RECORDER:
        e->what = what_of(jd_getstr(doc, "what", NULL));
        e->detail = jd_strdup(jd_get(doc, "detail"));
        e->stalled_s = jd_getnum(doc, "stalled_s", 0);
        e->stalled_pid = jd_getpid(doc, "stalled_pid");
        e->stalled_fd = (int)jd_getint(doc, "stalled_fd", -1);
        break;
    }
    return 0;
}
