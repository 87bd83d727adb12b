/* The process keys: k / F9 opens a signal menu for the selected (or marked)
 * processes, like htop's; on a zombie it explains that it is already dead,
 * offers SIGCHLD to its parent and, only when that parent is itself an
 * orphaned worker or a stuck shm manager, to end the parent. K ends every
 * orphaned worker and stuck shm manager after a confirmation (act/reap.c).
 * Every signal goes through act/signal.c, which re-checks the process
 * (pid and start time, owner) right before it. */
#include "ui/actions.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act/actviews.h"
#include "act/reap.h"
#include "act/signal.h"
#include "act/targets.h"
#include "config/theme.h"
#include "ui/actions_priv.h"
#include "ui/dialog.h"
#include "ui/ui_priv.h"
#include "util/xalloc.h"

/* Each line starts with its signal's number, printed from the signal itself
 * so that the digits typed in the menu (dialog_menu) are the ones
 * read on every architecture. */
static const struct {
    int sig;
    const char *name, *what;
} menu[] = {
    {SIGTERM, "TERM", "ask it to exit"},
    {SIGKILL, "KILL", "end it at once"},
    {SIGINT, "INT", "interrupt (as Ctrl-C)"},
    {SIGHUP, "HUP", "hang up"},
    {SIGCHLD, "CHLD", "ask it to reap its exited children"},
};
#define NMENU (sizeof(menu) / sizeof(menu[0]))

static void opts(struct ui *u, struct signal_opts *o)
{
    signal_opts_default(o);
    o->sys = &u->sys;
    o->log = actions_log(u);
}

/* Escaped whole: the pid and the parentheses escape to themselves. */
static const char *who(const struct signal_target *t)
{
    char raw[48]; /* a comm is at most 15 bytes */
    snprintf(raw, sizeof(raw), "pid %d (%s)", (int)t->pid, t->comm);
    return actions_safe(raw);
}

struct tally {
    size_t sent, gone, refused, failed;
};

/* A failure was tried and went wrong; a refusal is not one: nothing was
 * tried. A process that had exited is neither: nothing was left to signal. */
static void count(struct tally *t, enum signal_outcome o)
{
    t->sent += o == SIGNAL_SENT;
    t->gone += o == SIGNAL_GONE;
    t->refused += o == SIGNAL_REFUSED;
    t->failed += o == SIGNAL_FAILED || o == SIGNAL_SURVIVED;
}

/* Reports results: a status message, and the list when something went wrong. */
static void report(struct ui *u, const char *done, const struct tally *t,
                   const struct actions_lines *l)
{
    char title[256];
    const char *note = actions_log_note(u);
    size_t nbad = t->refused + t->failed;
    snprintf(title, sizeof(title), "%s; %zu refused or failed%s", done, nbad, note);
    if (nbad)
        actions_show(u, title, l);
    ui_message(u, actions_outcome_role(t->refused, t->failed, note), "%s", title);
    poller_request_scan(u->poller);
}

/* A zombie: explain, nudge its parent, and offer to end the parent only
 * when it is an orphaned worker or a stuck shm manager. */
static void zombie(struct ui *u, const struct model *m, struct signal_target *z)
{
    struct signal_target parent;
    bool known = targets_proc(m, z->ppid, &parent);
    const char *reason = "";
    if (known && parent.role == ROLE_ORPHAN_WORKER)
        reason = "it is an orphaned worker";
    else if (known && parent.role == ROLE_SHM_MANAGER && reap_manager_stuck(&u->sys, &parent))
        reason = "it is a stuck shm manager";
    bool may_end = reason[0] != '\0';
    char title[300], nudge[200], end[200];
    snprintf(title, sizeof(title),
             "%s is a zombie: already dead, it holds no memory and cannot be killed; only its "
             "parent pid %d (%s) can reap it",
             who(z), (int)z->ppid, known ? actions_safe(parent.comm) : "?");
    snprintf(nudge, sizeof(nudge), "Send SIGCHLD to its parent pid %d so that it reaps it",
             (int)z->ppid);
    snprintf(end, sizeof(end), "End its parent pid %d (%s): TERM, then KILL", (int)z->ppid,
             reason);
    const char *items[3] = {nudge, may_end ? end : "Cancel", "Cancel"};
    int k = dialog_menu(u, title, items, NULL, may_end ? 3 : 2);
    struct signal_opts o;
    opts(u, &o);
    struct signal_result r;
    struct actions_lines l = {0};
    struct tally t = {0};
    if (k == 0) {
        signal_zombie(&o, z, &r);
        actions_line(&l, "%s  %s", who(z), actions_safe(r.reason));
        count(&t, r.outcome);
        report(u, r.parent_nudged ? "parent sent SIGCHLD" : "SIGCHLD not sent", &t, &l);
    } else if (k == 1 && may_end) {
        actions_progress(u, "ending pid %d: SIGTERM, SIGKILL after %.0f s", (int)parent.pid,
                         o.timeout_s);
        if (parent.role == ROLE_SHM_MANAGER)
            reap_manager_end(&o, &parent, &r); /* a client may have come meanwhile */
        else
            signal_end(&o, &parent, 1, &r);
        actions_line(&l, "%s  %s", who(&parent), actions_safe(r.reason));
        count(&t, r.outcome);
        report(u, signal_outcome_name(r.outcome), &t, &l);
    }
    actions_lines_free(&l);
    if (known) {
        free(parent.cmdline);
        free(parent.why);
    }
}

void actions_signal(struct ui *u, const struct ui_selection *sel)
{
    const struct model *m = sel->model;
    struct signal_plan p = {0};
    size_t nzombies = 0;
    const struct mproc *const *marked = sel->marked_procs;
    size_t n = sel->nmarked_procs;
    if (!n && sel->proc) {
        marked = &sel->proc;
        n = 1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct proc *pr = model_proc(m, marked[i]);
        struct signal_target *t = VEC_PUSH(p.items, p.n, p.cap);
        signal_target_from_proc(t, pr, marked[i]->role);
        nzombies += pr->state == 'Z';
    }
    if (!p.n) {
        ui_message(u, THEME_muted, "select a process (or mark several with Space)");
    } else if (p.n == 1 && nzombies) {
        zombie(u, m, &p.items[0]);
    } else if (nzombies) {
        ui_message(u, THEME_warning, "%zu of the marked processes are zombies: already dead; "
                                     "press k on one alone to help its parent reap it",
                   nzombies);
    } else {
        char lines[NMENU][64];
        const char *items[NMENU];
        int numbers[NMENU];
        for (size_t i = 0; i < NMENU; i++) {
            snprintf(lines[i], sizeof(lines[i]), "%2d %-4s  %s", menu[i].sig, menu[i].name,
                     menu[i].what);
            items[i] = lines[i];
            numbers[i] = menu[i].sig;
        }
        char title[160];
        snprintf(title, sizeof(title), "Send a signal to %s%s", p.n == 1 ? who(&p.items[0]) : "",
                 p.n == 1 ? "" : "the marked processes");
        int k = dialog_menu(u, title, items, numbers, NMENU);
        if (k >= 0) {
            struct signal_opts o;
            opts(u, &o);
            struct actions_lines l = {0};
            struct tally t = {0};
            for (size_t i = 0; i < p.n; i++) {
                struct signal_result r;
                signal_send(&o, &p.items[i], menu[k].sig, &r);
                count(&t, r.outcome);
                actions_line(&l, "%s  %s", who(&p.items[i]), actions_safe(r.reason));
            }
            char done[96], other[SIGNAL_NAME_MAX];
            int len = snprintf(done, sizeof(done), "SIG%s sent to %zu",
                               signal_name(menu[k].sig, other, sizeof(other)), t.sent);
            if (t.gone)
                snprintf(done + len, sizeof(done) - (size_t)len, ", %zu already gone", t.gone);
            report(u, done, &t, &l);
            actions_lines_free(&l);
        }
    }
    signal_plan_free(&p);
}

static void section(struct actions_lines *l, const char *what, const struct signal_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        actions_line(l, "%s %s  %s", what, who(&p->items[i]),
                 actions_safe(p->items[i].why));
}

struct progress {
    struct ui *u;
    struct actions_lines *l;
    size_t done, total;
    struct tally t;
};

static void on_step(void *ctx, const struct signal_target *t, const struct signal_result *r)
{
    struct progress *pg = ctx;
    pg->done++;
    count(&pg->t, r->outcome);
    actions_line(pg->l, "%-8s %s  %s", signal_outcome_name(r->outcome), who(t),
                 actions_safe(r->reason));
    actions_progress(pg->u, "reaping %zu/%zu: %s %s", pg->done, pg->total, who(t),
                     signal_outcome_name(r->outcome));
}

/* Which processes K acts on, and through which view. */
struct reap_scope {
    const struct actviews *views;
    bool own_only; /* the own view of a node view scan: the host's processes only */
};

/* A reap_where_fn: in the node view each process through its container's
 * view, as reap --all does; in its own view only what that view shows. */
static bool reap_where(void *ctx, const struct model *m, const struct proc *p,
                       const struct actns **ns)
{
    const struct reap_scope *sc = ctx;
    if (sc->own_only && model_proc_ctr(m, p) != NODE_HOST)
        return false;
    return actviews_proc((void *)sc->views, m, p, ns);
}

/* K's plan p confirmed, run and reported. */
static void reap_confirmed(struct ui *u, struct reap_plan *p)
{
    size_t nend = p->workers.n + p->managers.n;
    struct signal_opts o;
    opts(u, &o);
    struct actions_lines l = {0};
    section(&l, "end   ", &p->workers);
    section(&l, "end   ", &p->managers);
    section(&l, "zombie", &p->zombies);
    char title[200];
    snprintf(title, sizeof(title), "End %zu process%s (SIGTERM, SIGKILL after %.0f s) and help "
                                   "%zu zombie%s be reaped?",
             nend, nend == 1 ? "" : "es", o.timeout_s, p->zombies.n,
             p->zombies.n == 1 ? "" : "s");
    bool yes = dialog_confirm(u, title, (const char *const *)l.v, l.n);
    actions_lines_free(&l);
    if (yes) {
        struct progress pg = {.u = u, .l = &l, .total = reap_plan_count(p)};
        actions_progress(u, "ending %zu process%s: SIGTERM, then SIGKILL after %.0f s...", nend,
                         nend == 1 ? "" : "es", o.timeout_s);
        reap_run(&o, p, on_step, &pg);
        char done[64];
        snprintf(done, sizeof(done), "reaped %zu of %zu", pg.done - pg.t.refused - pg.t.failed,
                 pg.total);
        report(u, done, &pg.t, &l);
        actions_lines_free(&l);
    } else {
        ui_message(u, THEME_muted, "nothing signalled");
    }
}

void actions_reap(struct ui *u, const struct ui_selection *sel)
{
    struct actviews views;
    actviews_own(&views);
    if (ui_node(u))
        actviews_open_all(&views, &u->snap->model, &u->sys);
    struct reap_scope scope = {.views = &views, .own_only = ui_own_only(u)};
    struct reap_plan p;
    actions_progress(u, "looking for orphaned workers and stuck shm managers...");
    reap_plan_build(sel->model, &u->sys, reap_where, &scope, &p);
    if (reap_plan_count(&p))
        reap_confirmed(u, &p);
    else
        ui_message(u, THEME_muted, "nothing to reap: no orphaned workers, stuck shm managers "
                                   "or zombies%s",
                   p.serving.n ? " (shm managers still serving clients are left alone)" : "");
    reap_plan_free(&p);
    actviews_close(&views);
}
