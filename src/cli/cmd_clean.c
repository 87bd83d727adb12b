/* shmwatch clean: removes orphan segments (and, when asked, old unheld ones),
 * each proven unused right before its unlink. Prints the plan, every action
 * and a total. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "act/targets.h"
#include "act/unlink.h"
#include "cli/actcli.h"
#include "cli/subcommands.h"
#include "cli/options.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

static const char *H(char *b, uint64_t v)
{
    return fmt_size(b, 32, v);
}

static void put_path(struct buf *out, const struct unlink_target *t)
{
    esc_term(out, t->mount, 0);
    buf_addc(out, '/');
    esc_term(out, t->name, 0);
    actcli_put_where(out, t->ns);
}

static void print_plan(const struct unlink_plan *p, const struct clean_policy *pol,
                       const struct model *m)
{
    char b1[32];
    struct buf out;
    buf_init(&out);
    if (p->n == 0) {
        buf_printf(&out, "Nothing to clean: no orphan%s segments.\n",
                   pol->all_unheld ? " or old unheld" : "");
    } else if (p->ntry == 0) {
        buf_printf(&out, "Nothing to remove; %zu entr%s named like segments will be refused:\n",
                   p->n, p->n == 1 ? "y" : "ies");
    } else {
        buf_printf(&out, "%zu segment%s to remove, %s allocated:\n", p->ntry,
                   p->ntry == 1 ? "" : "s", H(b1, p->bytes));
        for (size_t i = 0; i < p->n; i++) {
            const struct unlink_target *t = &p->items[i];
            buf_adds(&out, "  ");
            put_path(&out, t);
            /* The sentences may quote a mount path or a process name. */
            if (t->refuse) {
                buf_adds(&out, "  (will be refused: ");
                esc_term(&out, t->refuse, 0);
                buf_adds(&out, ")\n");
            } else {
                buf_printf(&out, "  %s  ", H(b1, t->alloc));
                esc_term(&out, t->why, 0);
                buf_addc(&out, '\n');
            }
        }
    }
    if (p->held)
        buf_printf(&out, "Kept: %zu segment%s of a dead creator that a live process still "
                         "holds.\n",
                   p->held, p->held == 1 ? "" : "s");
    if (p->inflight)
        buf_printf(&out, "Kept: %zu segment%s of a dead creator younger than orphan_min_age "
                         "%s: %s be in flight.\n",
                   p->inflight, p->inflight == 1 ? "" : "s",
                   fmt_duration(b1, sizeof(b1), m->orphan_min_age_s),
                   p->inflight == 1 ? "it may" : "they may");
    if (p->doubtful)
        buf_printf(&out, "Kept: %zu unheld segment%s whose creator pid proves nothing; the "
                         "mount is %s.\n",
                   p->doubtful, p->doubtful == 1 ? "" : "s",
                   p->doubt ? p->doubt : "at /dev/shm in several pid namespaces");
    if (p->live)
        buf_printf(&out, "Kept: %zu unheld segment%s of a live creator: a live job's, %s.\n",
                   p->live, p->live == 1 ? "" : "s",
                   p->live == 1 ? "a batch in flight" : "batches in flight");
    if (p->young)
        buf_printf(&out, "Kept: %zu unheld segment%s younger than %s.\n", p->young,
                   p->young == 1 ? "" : "s", fmt_duration(b1, sizeof(b1), pol->min_age_s));
    output_write(&out);
    buf_free(&out);
}

static void print_result(const struct unlink_target *t, const struct unlink_result *r)
{
    char b1[32];
    struct buf out;
    buf_init(&out);
    buf_printf(&out, "%-12s ", unlink_outcome_name(r->outcome));
    put_path(&out, t);
    if (r->outcome == UNLINK_REMOVED)
        buf_printf(&out, "  %s freed", H(b1, r->freed));
    if (r->outcome != UNLINK_REMOVED || r->caveat) {
        buf_adds(&out, "  ");
        esc_term(&out, r->reason, 0); /* it may quote a mount path or a process name */
    }
    buf_addc(&out, '\n');
    output_write(&out);
    buf_free(&out);
}

/* A mount's use for "used: before -> after", both from statvfs
 * (mounts_refresh) right before and after the unlinks: the user may have
 * answered the question long after the scan. */
struct mount_use {
    size_t mount; /* index in the scan's mount list */
    bool known;   /* statvfs succeeded before the unlinks */
    uint64_t before;
};

/* A mount's use measured through its container's root (--pid, --all): the
 * path through /proc/PID/root would be a newcomer's once the container has
 * exited and its pid is reused. False when it cannot be measured there. */
static bool used_in(const struct actns *ns, const struct shm_mount *mt, uint64_t *used)
{
    int fd = actns_opendir(ns, mt->path); /* refused once the container has exited */
    if (fd < 0)
        return false;
    struct stat st;
    struct statvfs sv;
    bool ok = fstat(fd, &st) == 0 && st.st_dev == mt->dev && fstatvfs(fd, &sv) == 0 &&
              actns_alive(ns);
    close(fd);
    if (ok) {
        uint64_t frsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
        *used = ((uint64_t)sv.f_blocks - (uint64_t)sv.f_bfree) * frsize;
    }
    return ok;
}

/* Mount m's use now: through its container when it is in one. */
static bool used_now(const struct actcli *a, size_t m, uint64_t *used)
{
    const struct shm_mount *mt = model_mount(&a->model, m);
    const struct actns *ns = actviews_mount(&a->views, m);
    if (ns)
        return used_in(ns, mt, used);
    *used = mt->used;
    return mt->stat_ok;
}

/* Each mount of the scan that an item of the plan is on, with its use as
 * last refreshed. */
static size_t mounts_of(const struct actcli *a, const struct unlink_plan *p,
                        struct mount_use **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (size_t m = 0; m < model_nmounts(&a->model); m++) {
        bool in_plan = false;
        for (size_t i = 0; i < p->n && !in_plan; i++)
            in_plan = p->items[i].mount_index == m;
        if (!in_plan)
            continue;
        struct mount_use *u = VEC_PUSH(*out, n, cap);
        u->mount = m;
        u->known = used_now(a, m, &u->before);
    }
    return n;
}

/* The last line of every clean: what was removed, or would be (dry). */
static void print_total(const struct unlink_run *r, bool dry)
{
    char b1[32];
    if (dry)
        output_printf("Total: would remove %zu (%s); %zu refused, %zu already gone.\n", r->would,
                      H(b1, r->removed_alloc), r->refused, r->gone);
    else
        output_printf("Total: %zu removed, %s freed; %zu refused, %zu failed, %zu already gone.\n",
                      r->removed, H(b1, r->freed), r->refused, r->failed, r->gone);
}

static int run(struct actcli *a, struct unlink_plan *plan, bool dry)
{
    struct unlink_opts uo = {.sys = &a->sys, .uid = geteuid(), .dry_run = dry,
                             .log = &a->log};
    struct unlink_run r;
    struct unlink_result res;
    size_t idx;
    struct mount_use *mounts = NULL;
    size_t nmounts = 0;
    if (!dry) {
        if (a->views.mode == ACTVIEWS_OWN) /* else measured through each container (used_now) */
            actcli_refresh_mounts(a);
        nmounts = mounts_of(a, plan, &mounts);
    }
    unlink_begin(&r, plan, &uo);
    while (unlink_step(&r, &res, &idx))
        print_result(&plan->items[idx], &res);
    char b2[32], b3[32];
    if (!dry) { /* each mount's use before and after, then the total, last */
        if (a->views.mode == ACTVIEWS_OWN)
            actcli_refresh_mounts(a);
        for (size_t i = 0; i < nmounts; i++) {
            const struct shm_mount *mt = model_mount(&a->model, mounts[i].mount);
            struct buf out;
            buf_init(&out);
            esc_term(&out, mt->path, 0);
            actcli_put_where(&out, actviews_mount(&a->views, mounts[i].mount));
            uint64_t after = 0;
            bool after_known = used_now(a, mounts[i].mount, &after);
            output_printf("%s used: %s -> %s\n", out.data,
                          mounts[i].known ? H(b2, mounts[i].before) : "unknown",
                          after_known ? H(b3, after) : "unknown");
            buf_free(&out);
        }
    }
    print_total(&r, dry);
    free(mounts);
    int rc = r.refused || r.failed ? 3 : 0;
    unlink_end(&r);
    return rc;
}

int cmd_clean(int argc, char **argv)
{
    struct options o;
    int rc;
    if (!usage_parse(CLI_CLEAN, argc, argv, &o, &rc))
        return rc;
    struct clean_policy pol;
    clean_policy_default(&pol);
    pol.all_unheld = o.all_unheld;
    struct actcli a = {.cmd = "clean"};
    rc = actcli_scan(&a, &o);
    options_free(&o);
    if (rc != 0)
        return rc;
    pol.min_age_s = o.min_age_set ? o.min_age : a.cfg.min_age_s;
    struct unlink_plan plan;
    targets_clean(&a.model, &pol, &plan);
    targets_add_dirs(&a.model, &pol, &plan);
    actviews_set_plan(&a.views, &plan);
    print_plan(&plan, &pol, &a.model);
    bool acted = false, declined = false;
    if (plan.n)
        acted = actcli_decide(&a, o.dry_run, o.yes,
                              plan.ntry > 1 ? "Remove them?"
                              : plan.ntry   ? "Remove it?"
                              : plan.n > 1  ? "Report them?"
                                            : "Report it?",
                              &declined);
    if (plan.n && !declined) {
        rc = run(&a, &plan, !acted);
    } else { /* nothing to remove (said as the run would be), or the answer was no */
        struct unlink_run none = {0};
        print_total(&none, plan.n == 0 && (o.dry_run || !o.yes));
    }
    rc = actcli_status(&a, rc, acted);
    unlink_plan_free(&plan);
    actcli_free(&a);
    return rc;
}
