/* Event lines read back into events (evload.h). */
#include "model/evload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/xalloc.h"

static const char *str_of(const struct jd *doc, const char *key)
{
    return jd_getstr(doc, key, NULL);
}

static char *dup_of(const struct jd *doc, const char *key)
{
    const char *s = str_of(doc, key);
    return s ? xstrdup(s) : NULL;
}

static void copy_into(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

static bool is_num(const struct jd *doc, const char *key)
{
    const struct jd *v = jd_get(doc, key);
    return v && v->type == JD_NUM;
}

/* A count or a pid: whole, not negative; 0 when not known. */
static uint64_t count_of(const struct jd *doc, const char *key)
{
    int64_t v = jd_getint(doc, key, 0);
    return v > 0 ? (uint64_t)v : 0;
}

static pid_t pid_of(const struct jd *doc, const char *key)
{
    int64_t v = jd_getint(doc, key, 0);
    return v > 0 && v <= 0x7fffffff ? (pid_t)v : 0;
}

static enum proc_role role_of(const char *s)
{
    for (int k = ROLE_NONE; k <= ROLE_HOLDER; k++)
        if (s && strcmp(s, proc_role_name((enum proc_role)k)) == 0)
            return (enum proc_role)k;
    return ROLE_NONE;
}

static int signal_of(const char *s)
{
    for (int k = 1; s && k < 64; k++) {
        const char *name = exit_signal_name(k);
        if (name && strcmp(s, name) == 0)
            return k;
    }
    return 0;
}

static enum exit_cause cause_of(const char *s)
{
    for (int k = CAUSE_SIGBUS; k <= CAUSE_UNKNOWN; k++)
        if (s && strcmp(s, exit_cause_name((enum exit_cause)k)) == 0)
            return (enum exit_cause)k;
    return CAUSE_UNKNOWN;
}

static enum fill_level level_of(const char *s)
{
    for (int k = FILL_OK; k <= FILL_CRITICAL; k++)
        if (s && strcmp(s, fill_level_name((enum fill_level)k)) == 0)
            return (enum fill_level)k;
    return FILL_OK;
}

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

static const struct {
    const char *name;
    enum event_kind kind;
} kinds[] = {
    {"exit", EV_EXIT},   {"oom_kill", EV_OOM_KILL}, {"segments", EV_SEGMENTS},
    {"mount", EV_MOUNT}, {"fill", EV_FILL},         {"recorder", EV_RECORDER},
};

int evload_build(const struct jd *doc, double t, struct event *e, char *err, size_t n)
{
    memset(e, 0, sizeof(*e));
    const char *kind = doc && doc->type == JD_OBJ ? str_of(doc, "event") : NULL;
    size_t k = 0;
    while (kind && k < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kind, kinds[k].name) != 0)
        k++;
    if (!kind || k == sizeof(kinds) / sizeof(kinds[0])) {
        snprintf(err, n, "%s", !doc || doc->type != JD_OBJ ? "not a JSON object"
                               : !kind                   ? "no \"event\" member: not an event"
                                                         : "an event of a kind not known here");
        return -EINVAL;
    }
    e->kind = kinds[k].kind;
    e->t = t;
    e->container = dup_of(doc, "container");
    e->container_name = dup_of(doc, "container_name");
    switch (e->kind) {
    case EV_EXIT:
        e->pid = pid_of(doc, "pid");
        copy_into(e->comm, sizeof(e->comm), str_of(doc, "comm"));
        e->role = role_of(str_of(doc, "role"));
        e->group = pid_of(doc, "group");
        e->has_exit_code = is_num(doc, "exit_code");
        e->exit_code = (int)jd_getint(doc, "exit_code", 0);
        e->signal = signal_of(str_of(doc, "signal"));
        e->core = jd_bool(jd_get(doc, "core"), false);
        e->cause = cause_of(str_of(doc, "cause"));
        break;
    case EV_OOM_KILL:
        e->cgroup = dup_of(doc, "cgroup");
        e->kills = count_of(doc, "kills");
        e->victim = pid_of(doc, "victim");
        copy_into(e->victim_comm, sizeof(e->victim_comm), str_of(doc, "victim_comm"));
        break;
    case EV_SEGMENTS:
    case EV_MOUNT:
    case EV_FILL:
        copy_into(e->mount_id, sizeof(e->mount_id), str_of(doc, "mount_id"));
        e->mount = dup_of(doc, "mount");
        e->created = count_of(doc, "created");
        e->removed = count_of(doc, "removed");
        e->interval_s = jd_getnum(doc, "interval_s", 0);
        e->appeared = !strcmp(jd_getstr(doc, "change", ""), "appeared");
        e->used = count_of(doc, "used_bytes");
        e->size = count_of(doc, "size_bytes");
        e->used_pct = jd_getnum(doc, "used_pct", 0);
        e->level = level_of(str_of(doc, "level"));
        break;
    case EV_RECORDER:
        e->what = what_of(str_of(doc, "what"));
        e->detail = dup_of(doc, "detail");
        e->stalled_s = jd_getnum(doc, "stalled_s", 0);
        e->stalled_pid = pid_of(doc, "stalled_pid");
        e->stalled_fd = is_num(doc, "stalled_fd") ? (int)jd_getint(doc, "stalled_fd", -1) : -1;
        break;
    }
    return 0;
}
