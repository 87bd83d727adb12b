/* shmwatch reap: ends orphaned DataLoader workers and stuck
 * torch_shm_managers (SIGTERM, then SIGKILL after --timeout), and nudges
 * the parents of zombies. Each process is re-identified (pid and start
 * time) right before each signal. */

#include "act/reap.h"
#include "cli/actcli.h"
#include "cli/subcommands.h"
#include "cli/options.h"
#include "util/buf.h"
#include "util/escape.h"

static void put_target(struct buf *out, const struct signal_target *t)
{
    buf_printf(out, "pid %d (", (int)t->pid);
    esc_term(out, t->comm, 0);
    buf_adds(out, ")");
    actcli_put_where(out, t->ns);
}

static void print_section(struct buf *out, const char *title, const struct signal_plan *p)
{
    if (!p->n)
        return;
    buf_printf(out, "%s:\n", title);
    for (size_t i = 0; i < p->n; i++) {
        buf_adds(out, "  ");
        put_target(out, &p->items[i]);
        buf_printf(out, " uid %lu  ", (unsigned long)p->items[i].uid);
        esc_term(out, p->items[i].why, 0); /* it may quote a process name */
        buf_adds(out, "\n    ");
        esc_term(out, p->items[i].cmdline, 0);
        buf_addc(out, '\n');
    }
}

static void print_plan(const struct reap_plan *p)
{
    struct buf out;
    buf_init(&out);
    if (reap_plan_count(p) == 0)
        buf_adds(&out, "Nothing to reap: no orphaned workers, stuck shm managers or zombies.\n");
    print_section(&out, "Orphaned workers to end (SIGTERM, then SIGKILL)", &p->workers);
    print_section(&out, "Stuck shm managers to end", &p->managers);
    print_section(&out, "Zombies (already dead; their parents get SIGCHLD)", &p->zombies);
    print_section(&out, "Left alone", &p->serving);
    output_write(&out);
    buf_free(&out);
}

struct tally {
    size_t done, refused, other;
};

static void on_step(void *ctx, const struct signal_target *t, const struct signal_result *r)
{
    struct tally *n = ctx;
    struct buf out;
    buf_init(&out);
    buf_printf(&out, "%-12s ", signal_outcome_name(r->outcome));
    put_target(&out, t);
    buf_adds(&out, "  ");
    esc_term(&out, r->reason, 0);
    buf_addc(&out, '\n');
    output_write(&out);
    buf_free(&out);
    switch (r->outcome) {
    case SIGNAL_REFUSED:
    case SIGNAL_FAILED:
    case SIGNAL_SURVIVED: n->refused++; break;
    case SIGNAL_ZOMBIE: n->other++; break;
    default: n->done++; break;
    }
}

int cmd_reap(int argc, char **argv)
{
    struct options o;
    int rc;
    if (!usage_parse(CLI_REAP, argc, argv, &o, &rc))
        return rc;
    struct signal_opts so;
    signal_opts_default(&so);
    so.dry_run = o.dry_run;
    if (o.timeout_set)
        so.timeout_s = o.timeout;
    struct actcli a = {.cmd = "reap"};
    rc = actcli_scan(&a, &o);
    options_free(&o);
    if (rc != 0)
        return rc;
    struct reap_plan plan;
    so.sys = &a.sys;
    reap_plan_build(&a.model, &a.sys, actviews_proc, &a.views, &plan);
    print_plan(&plan);
    bool acted = false, declined = false;
    struct tally n = {0};
    size_t count = reap_plan_count(&plan);
    if (count)
        acted = actcli_decide(&a, so.dry_run, o.yes, "Proceed?", &declined);
    /* The total is the last line, always: of nothing to reap, in the form
     * the run would have had; of a "no", of nothing done. */
    bool dry = count ? !acted && !declined : so.dry_run || !o.yes;
    if (count && !declined) {
        so.dry_run = dry;
        so.log = &a.log;
        reap_run(&so, &plan, on_step, &n);
        rc = n.refused ? 3 : 0;
    }
    if (dry)
        output_printf("Total: %zu would be signalled, %zu refused.\n", n.done, n.refused);
    else
        output_printf("Total: %zu done, %zu refused or not ended, %zu still zombies.\n", n.done,
                      n.refused, n.other);
    rc = actcli_status(&a, rc, acted);
    reap_plan_free(&plan);
    actcli_free(&a);
    return rc;
}
