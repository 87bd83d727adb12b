/* Events in one line of plain words (evline.h). */
#include "model/evline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ctrref.h"
#include "util/units.h"

const struct ev_mount *evline_mount(const struct ev_state *st, const struct event *e)
{
    const struct ev_mount *best = NULL;
    struct container_ref ref = {e->container, e->container_ns, e->container_ns_known};
    for (size_t i = 0; i < st->nmounts; i++) {
        const struct ev_mount *mt = &st->mounts[i];
        struct container_ref owner = {mt->ctr_id, mt->ctr_ns, true};
        bool same = (!mt->ctr_id && !e->container) || container_ref_same(&owner, &ref);
        if (!same)
            continue;
        if (!best || (mt->size_known && (!best->size_known || mt->used_pct > best->used_pct)))
            best = mt;
    }
    return best;
}

/* "worker 1234 of main 1200", "main 1200 (python3)", "process 77 (sleep)". */
static void who(const struct event *e, char *dst, size_t n)
{
    /* The roles in words (the JSON's names are tokens: orphan_worker). */
    const char *role = e->role == ROLE_SHM_MANAGER     ? "shm manager"
                       : e->role == ROLE_ORPHAN_WORKER ? "orphaned worker"
                       : e->role == ROLE_NONE          ? "process"
                                                       : proc_role_name(e->role);
    bool of_main =
        e->role == ROLE_WORKER || e->role == ROLE_SHM_MANAGER || e->role == ROLE_ORPHAN_WORKER;
    if (of_main && e->group)
        snprintf(dst, n, "%s %d of main %d", role, (int)e->pid, (int)e->group);
    else if (of_main)
        snprintf(dst, n, "%s %d", role, (int)e->pid);
    else
        snprintf(dst, n, "%s %d (%s)", role, (int)e->pid, e->comm);
}

char *evline_where(const struct event *e)
{
    return container_label(e->container_ns, e->container_name, e->container);
}

const char *evline_text(const struct event *e, const struct ev_mount *mt, char *dst, size_t n)
{
    char w[96], sz[96];
    char *where = evline_where(e);
    const char *mount = e->mount ? e->mount : "?"; /* a recorded line may lack it */
    switch (e->kind) {
    case EV_EXIT: {
        who(e, w, sizeof(w));
        const char *sig = exit_signal_name(e->signal);
        switch (e->cause) {
        case CAUSE_SIGBUS:
            if (mt && mt->size_known) {
                /* Full: a page the tmpfs could not give, which is the Bus error. */
                bool full = mt->level == FILL_CRITICAL;
                snprintf(dst, n, "%s died of SIGBUS: %s %s %s", w, mt->path,
                         fmt_size_of(sz, sizeof(sz), mt->used, mt->size), full ? "full" : "used");
            } else {
                snprintf(dst, n, "%s died of SIGBUS (a page the tmpfs could not give: the Bus "
                         "error)", w);
            }
            break;
        case CAUSE_OOM_KILL:
            snprintf(dst, n, "%s was killed by the OOM killer: the memory limit (-m) was hit", w);
            break;
        case CAUSE_SIGNAL:
            snprintf(dst, n, "%s was killed by %s", w, sig ? sig : "a signal");
            break;
        case CAUSE_EXIT:
            snprintf(dst, n, "%s exited with status %d", w, e->exit_code);
            break;
        case CAUSE_UNKNOWN:
            snprintf(dst, n, "%s exited, cause unknown", w);
            break;
        }
        break;
    }
    case EV_OOM_KILL:
        if (e->victim)
            snprintf(dst, n, "OOM kill in cgroup %s: %d (%s) killed, the memory limit was hit",
                     e->cgroup ? e->cgroup : "?", (int)e->victim, e->victim_comm);
        else
            snprintf(dst, n, "OOM kill in cgroup %s: %llu process%s killed, the memory limit "
                     "was hit", e->cgroup ? e->cgroup : "?", (unsigned long long)e->kills,
                     e->kills == 1 ? "" : "es");
        break;
    case EV_SEGMENTS:
        /* Whole seconds, but an interval below one (0.5 s) as it is. */
        snprintf(dst, n,
                 e->interval_s < 1 ? "%s: %llu segment%s created, %llu removed in %.2g s"
                                   : "%s: %llu segment%s created, %llu removed in %.0f s",
                 mount, (unsigned long long)e->created, e->created == 1 ? "" : "s",
                 (unsigned long long)e->removed, e->interval_s);
        break;
    case EV_MOUNT:
        snprintf(dst, n, "mount %s %s%s%s", mount, e->appeared ? "appeared" : "went away",
                 where ? " in " : "", where ? where : "");
        break;
    case EV_FILL:
        snprintf(dst, n, "%s is %s: %s (%.1f%%)", mount,
                 e->level == FILL_CRITICAL ? "critically full"
                 : e->level == FILL_WARN   ? "filling up"
                                           : "back below the warning level",
                 fmt_size_of(sz, sizeof(sz), e->used, e->size), e->used_pct);
        break;
    case EV_RECORDER:
        /* A recorded line may carry neither (evload.h). */
        snprintf(dst, n, "%s", e->detail ? e->detail : e->what ? e->what : "the recorder's news");
        break;
    }
    /* In the node view the line names the container it happened in; a
     * mount's own line says it in words. */
    if ((e->kind == EV_EXIT || e->kind == EV_SEGMENTS || e->kind == EV_FILL) && where) {
        size_t len = strlen(dst);
        if (len < n)
            snprintf(dst + len, n - len, " [%s]", where);
    }
    free(where);
    return dst;
}

bool evline_critical(const struct event *e)
{
    return (e->kind == EV_EXIT && (e->cause == CAUSE_SIGBUS || e->cause == CAUSE_OOM_KILL)) ||
           e->kind == EV_OOM_KILL || (e->kind == EV_FILL && e->level == FILL_CRITICAL);
}
