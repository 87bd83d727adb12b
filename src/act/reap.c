#include "act/reap.h"

#include <stdlib.h>
#include <string.h>

#include "act/targets.h"
#include "act/shmmgr.h"
#include "util/buf.h"
#include "util/xalloc.h"

static bool in_plan(const struct signal_plan *p, pid_t pid)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->items[i].pid == pid)
            return true;
    return false;
}

static void pid_list(struct buf *b, const pid_t *pids, size_t n, bool more)
{
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%s%d", i ? ", " : "", (int)pids[i]);
    if (more)
        buf_adds(b, ", ...");
}

/* Decides whether manager t is stuck; *waits: it has clients among workers,
 * which this reap ends first. Sets t->why either way. */
static bool manager_stuck(const struct sysroot *sys, const struct signal_plan *workers,
                          struct signal_target *t, bool *waits)
{
    struct shmmgr_clients c;
    struct buf b;
    buf_init(&b);
    bool stuck = false;
    *waits = false;
    int rc = shmmgr_clients(sys, t->pid, &c);
    if (rc < 0) {
        buf_printf(&b, "torch_shm_manager whose clients cannot be examined (%s): left alone",
                   strerror(-rc));
    } else if (!c.complete) {
        buf_printf(&b, "torch_shm_manager whose clients cannot all be seen (%s): left alone",
                   c.why);
    } else {
        size_t outside = 0;
        for (size_t i = 0; i < c.n; i++)
            if (!in_plan(workers, c.pids[i]))
                outside++;
        if (outside || c.more) {
            buf_adds(&b, "torch_shm_manager serving live clients (pids ");
            pid_list(&b, c.pids, c.n, c.more);
            buf_adds(&b, ")");
        } else if (c.n) {
            stuck = *waits = true;
            buf_adds(&b, "stuck torch_shm_manager: its only clients are orphaned workers (");
            pid_list(&b, c.pids, c.n, false);
            buf_adds(&b, "), ended first; it is given a moment to exit by itself and unlink "
                         "its segments");
        } else {
            stuck = true;
            buf_adds(&b, "stuck torch_shm_manager: no client left, yet it has not exited");
        }
    }
    free(t->why);
    t->why = buf_steal(&b);
    return stuck;
}

/* Keeps the targets of sp that where() keeps, each with its container. */
static void keep_where(const struct model *m, reap_where_fn where, void *ctx,
                       struct signal_plan *sp)
{
    if (!where)
        return;
    size_t n = 0;
    for (size_t i = 0; i < sp->n; i++) {
        struct signal_target *t = &sp->items[i];
        const struct proc *p = model_scan_proc(m, t->pid);
        const struct actns *ns = NULL;
        if (p && where(ctx, m, p, &ns)) {
            t->ns = ns;
            sp->items[n++] = *t;
        } else {
            free(t->cmdline);
            free(t->why);
        }
    }
    sp->n = n;
}

void reap_plan_build(const struct model *m, const struct sysroot *sys, reap_where_fn where,
                     void *ctx, struct reap_plan *p)
{
    memset(p, 0, sizeof(*p));
    targets_role(m, ROLE_ORPHAN_WORKER, &p->workers);
    keep_where(m, where, ctx, &p->workers);
    struct signal_plan managers = {0};
    targets_role(m, ROLE_SHM_MANAGER, &managers);
    keep_where(m, where, ctx, &managers);
    for (size_t i = 0; i < managers.n; i++) {
        bool waits;
        struct signal_target *t = &managers.items[i];
        struct signal_plan *dst = manager_stuck(sys, &p->workers, t, &waits) ? &p->managers
                                                                             : &p->serving;
        if (dst == &p->managers) {
            p->manager_waits = xrealloc(p->manager_waits, (p->managers.n + 1) * sizeof(bool));
            p->manager_waits[p->managers.n] = waits;
        }
        *VEC_PUSH(dst->items, dst->n, dst->cap) = *t;
    }
    free(managers.items); /* the strings moved into p */
    targets_role(m, ROLE_ZOMBIE, &p->zombies);
    keep_where(m, where, ctx, &p->zombies);
    for (size_t i = 0; i < p->zombies.n; i++) {
        struct signal_target *z = &p->zombies.items[i];
        if (in_plan(&p->workers, z->ppid) || in_plan(&p->managers, z->ppid)) {
            char *why = str_printf("%s; its parent is ended by this reap, then init reaps it",
                                   z->why);
            free(z->why);
            z->why = why;
        }
    }
}

bool reap_manager_stuck(const struct sysroot *sys, struct signal_target *t)
{
    struct signal_plan none = {0};
    bool waits;
    return manager_stuck(sys, &none, t, &waits);
}

size_t reap_plan_count(const struct reap_plan *p)
{
    return p->workers.n + p->managers.n + p->zombies.n;
}

/* Ends manager t once a fresh look at its clients (a client may have
 * connected since the plan) still finds it stuck, workers being ended by
 * this reap; else refuses it. t->why is kept. */
static void end_manager(const struct signal_opts *o, const struct signal_plan *workers,
                        struct signal_target *t, struct signal_result *res)
{
    char *why = t->why;
    bool waits;
    t->why = NULL;
    if (!manager_stuck(o->sys, workers, t, &waits))
        t->refuse = "no longer stuck: it serves a live client again";
    free(t->why);
    t->why = why;
    signal_end(o, t, 1, res);
}

void reap_manager_end(const struct signal_opts *o, struct signal_target *t,
                      struct signal_result *res)
{
    struct signal_plan none = {0};
    end_manager(o, &none, t, res);
}

void reap_run(const struct signal_opts *o, struct reap_plan *p, reap_step_fn step, void *ctx)
{
    struct signal_result *ended = xcalloc(p->workers.n + 1, sizeof(*ended));
    signal_end(o, p->workers.items, p->workers.n, ended);
    for (size_t i = 0; i < p->workers.n; i++)
        step(ctx, &p->workers.items[i], &ended[i]);
    free(ended);
    for (size_t i = 0; i < p->managers.n; i++) {
        struct signal_target *t = &p->managers.items[i];
        struct signal_result res;
        double grace = p->manager_waits[i] && !o->dry_run ? SHMMGR_GRACE_S : 0;
        if (!signal_wait_exit(o, t, grace, &res))
            end_manager(o, &p->workers, t, &res); /* still there */
        step(ctx, t, &res);
    }
    for (size_t i = 0; i < p->zombies.n; i++) {
        struct signal_result res;
        signal_zombie(o, &p->zombies.items[i], &res);
        step(ctx, &p->zombies.items[i], &res);
    }
}

void reap_plan_free(struct reap_plan *p)
{
    signal_plan_free(&p->workers);
    signal_plan_free(&p->managers);
    signal_plan_free(&p->zombies);
    signal_plan_free(&p->serving);
    free(p->manager_waits);
    memset(p, 0, sizeof(*p));
}
