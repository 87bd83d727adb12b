/* The unlink keys: d / Del (the selected orphan, the marked ones, or the
 * orphans of the selected group), D (every orphan) and U (every unheld
 * segment past the minimum age). Each lists its targets and bytes in a
 * confirmation dialog with "No" selected, then removes them one by one
 * through act/unlink.c (which re-checks each right before its unlink),
 * showing progress and asking after each refusal whether to skip, skip all
 * or abort. Shared helpers for actions_proc.c live here too. */
#include "ui/actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/actlog.h"
#include "act/actviews.h"
#include "act/targets.h"
#include "act/unlink.h"
#include "config/theme.h"
#include "ui/actions_priv.h"
#include "ui/dialog.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/safefile.h"
#include "util/units.h"
#include "util/xalloc.h"

static struct actlog g_log = {.fd = -1};
static bool g_log_tried;
static char g_log_note[160];   /* why the log could not be opened, for good */
static char g_write_note[160]; /* why the last write failed */

struct actlog *actions_log(struct ui *u)
{
    if (!g_log_tried) {
        g_log_tried = true;
        if (actlog_open(&g_log, u->set->cfg.log_file) < 0)
            snprintf(g_log_note, sizeof(g_log_note), " (not logged: %s: %s)",
                     g_log.path ? actions_safe(g_log.path) : "no $XDG_STATE_HOME or $HOME",
                     safefile_strerror(g_log.err));
    }
    return &g_log;
}

int actions_outcome_role(size_t refused, size_t failed, const char *log_note)
{
    if (failed || log_note[0])
        return THEME_error;
    return refused ? THEME_warning : THEME_status;
}

const char *actions_log_note(struct ui *u)
{
    struct actlog *log = actions_log(u);
    if (log->fd >= 0 && log->err) {
        /* A write failed (the file system is full, the disk is gone): this
         * action was not logged. The next one is judged on its own. */
        snprintf(g_write_note, sizeof(g_write_note), " (not logged: %s: %s)",
                 actions_safe(log->path), safefile_strerror(log->err));
        log->err = 0;
        return g_write_note;
    }
    return g_log_note;
}

void actions_progress(struct ui *u, const char *fmt, ...)
{
    va_list ap;
    char text[256];
    va_start(ap, fmt);
    utf8_vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    ui_message(u, THEME_muted, "%s", text);
    ui_draw(u); /* refreshes the screen */
}

enum { ACTIONS_SKIP, ACTIONS_SKIP_ALL, ACTIONS_ABORT };
/* After a refused or failed item (what: safe text): skip it, skip every
 * later failure without asking, or abort. Esc aborts. */
static int actions_ask_failure(struct ui *u, const char *what, const char *reason)
{
    static const char *const items[] = {"Skip this one", "Skip all (do not ask again)",
                                        "Abort"};
    char title[400];
    snprintf(title, sizeof(title), "%s: %s", what, actions_safe(reason));
    int k = dialog_menu(u, title, items, NULL, 3);
    return k < 0 ? ACTIONS_ABORT : k;
}

void actions_line(struct actions_lines *l, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    utf8_vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    *(char **)VEC_PUSH(l->v, l->n, l->cap) = xstrdup(text);
}

void actions_lines_free(struct actions_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

void actions_show(struct ui *u, const char *title, const struct actions_lines *l)
{
    dialog_list(u, title, (const char *const *)l->v, l->n);
}

const char *actions_safe(const char *s)
{
    static char bufs[8][384];
    static int next;
    char *d = bufs[next++ % 8];
    term_escape(d, sizeof(bufs[0]), s ? s : "");
    return d;
}

/* A target's path, and in the node view the container it is in. */
static const char *target_name(const struct unlink_target *t)
{
    char path[512];
    if (t->ns && t->ns->label)
        snprintf(path, sizeof(path), "%s: %s/%s", t->ns->label, t->mount, t->name);
    else
        snprintf(path, sizeof(path), "%s/%s", t->mount, t->name);
    return actions_safe(path);
}

/* Lists p's targets in a confirmation (No selected), or as nothing to
 * unlink when none would be tried; whether the user said yes. */
static bool unlink_confirmed(struct ui *u, const struct unlink_plan *p, const char *what)
{
    char size[32], title[200];
    struct actions_lines l = {0};
    for (size_t i = 0; i < p->n; i++) {
        const struct unlink_target *t = &p->items[i];
        if (t->refuse)
            actions_line(&l, "%s  will be refused: %s", target_name(t), t->refuse);
        else
            actions_line(&l, "%s  %s  %s", target_name(t), fmt_size(size, sizeof(size), t->alloc),
                         actions_safe(t->why));
    }
    bool yes = false;
    if (p->ntry == 0) {
        snprintf(title, sizeof(title), "Nothing to unlink: %zu look-alike%s will not be touched",
                 p->n, p->n == 1 ? "" : "s");
        actions_show(u, title, &l);
    } else {
        snprintf(title, sizeof(title), "Unlink %zu %s segment%s, %s?", p->ntry, what,
                 p->ntry == 1 ? "" : "s", fmt_size(size, sizeof(size), p->bytes));
        yes = dialog_confirm(u, title, (const char *const *)l.v, l.n);
        if (!yes)
            ui_message(u, THEME_muted, "nothing unlinked");
    }
    actions_lines_free(&l);
    return yes;
}

/* Removes p's targets one by one, asking after each one refused or failed
 * whether to go on, and reports. */
static void unlink_targets(struct ui *u, struct unlink_plan *p)
{
    char size[32], title[200];
    struct actions_lines l = {0};
    struct unlink_opts o = {.sys = &u->sys, .uid = geteuid(), .log = actions_log(u)};
    struct unlink_run r;
    struct unlink_result res;
    size_t idx;
    bool skip_all = false, aborted = false;
    unlink_begin(&r, p, &o);
    while (!aborted && unlink_step(&r, &res, &idx)) {
        const char *name = target_name(&p->items[idx]);
        actions_progress(u, "unlinking %zu/%zu: %s", idx + 1, p->n, name);
        if (res.outcome == UNLINK_REMOVED || res.outcome == UNLINK_GONE) {
            actions_line(&l, "%-8s %s  %s freed", unlink_outcome_name(res.outcome), name,
                         fmt_size(size, sizeof(size), res.freed));
            continue;
        }
        actions_line(&l, "%-8s %s  %s", unlink_outcome_name(res.outcome), name,
                     actions_safe(res.reason));
        if (skip_all || idx + 1 == p->n)
            continue;
        int k = actions_ask_failure(u, name, res.reason);
        skip_all = k == ACTIONS_SKIP_ALL; /* false until now: it skips the question */
        aborted = k == ACTIONS_ABORT;
        unlink_invalidate(&r); /* time has passed while asking */
    }
    const char *note = actions_log_note(u);
    snprintf(title, sizeof(title), "%zu unlinked, %s freed; %zu refused, %zu failed%s%s",
             r.removed, fmt_size(size, sizeof(size), r.freed), r.refused, r.failed,
             aborted ? "; aborted" : "", note);
    if (r.refused || r.failed)
        actions_show(u, title, &l);
    ui_message(u, actions_outcome_role(r.refused, r.failed, note), "%s", title);
    unlink_end(&r);
    actions_lines_free(&l);
    poller_request_scan(u->poller);
}

/* Confirms, removes and reports; plan items already checked by planning.
 * The node view: each target acts through the view of its mount's
 * container (act/actviews.h), as clean --all does: the re-checks are made
 * through that root, and refused once the container is gone. */
static void run_unlink(struct ui *u, struct unlink_plan *p, const char *what)
{
    struct actviews views;
    actviews_own(&views);
    if (u->snap && model_node(&u->snap->model)->all) {
        actviews_open_all(&views, &u->snap->model, &u->sys);
        actviews_set_plan(&views, p);
    }
    if (unlink_confirmed(u, p, what))
        unlink_targets(u, p);
    actviews_close(&views); /* p's ns pointers dangle from here: the callers only free p */
}

void actions_unlink(struct ui *u, const struct ui_selection *sel)
{
    const struct model *m = sel->model;
    struct clean_policy pol;
    clean_policy_default(&pol);
    pol.own_mounts = ui_own_only(u);
    struct unlink_plan p = {0};
    char why[200], path[512], name[300];
    if (sel->nmarked_segs) {
        size_t refused = 0;
        for (size_t i = 0; i < sel->nmarked_segs; i++)
            if (!targets_add_segment(m, (size_t)(sel->marked_segs[i] - m->segs), &pol, &p, why,
                                     sizeof(why)))
                refused++;
        if (refused)
            ui_message(u, THEME_warning, "%zu marked segment%s left out: not orphans", refused,
                       refused == 1 ? "" : "s");
    } else if (sel->seg) {
        if (!targets_add_segment(m, (size_t)(sel->seg - m->segs), &pol, &p, why, sizeof(why))) {
            snprintf(path, sizeof(path), "%s/%s", model_segment_mount(m, sel->seg)->path,
                     sel->seg->name);
            term_escape(name, sizeof(name), path);
            ui_message(u, THEME_warning, "%s: %s", name, why);
        }
    } else if (sel->group) {
        for (size_t i = 0; i < m->nsegs; i++)
            if (m->segs[i].group == sel->group->main_pid && m->segs[i].state == SEG_ORPHAN)
                targets_add_segment(m, i, &pol, &p, why, sizeof(why));
        if (!p.n)
            ui_message(u, THEME_muted, "group %d has no orphan segments",
                       (int)sel->group->main_pid);
    } else {
        ui_message(u, THEME_muted, "select an orphan segment (or mark several with Space)");
    }
    if (p.n)
        run_unlink(u, &p, "orphan");
    unlink_plan_free(&p);
}

void actions_unlink_orphans(struct ui *u, const struct ui_selection *sel)
{
    struct clean_policy pol;
    clean_policy_default(&pol);
    pol.own_mounts = ui_own_only(u);
    struct unlink_plan p;
    targets_clean(sel->model, &pol, &p);
    targets_add_dirs(sel->model, &pol, &p);
    if (!p.n && p.doubtful)
        ui_message(u, THEME_warning,
                   "no orphan segments: %zu unheld ones carry a creator pid that proves nothing "
                   "here (%s); U removes old unheld ones",
                   p.doubtful, pid_evidence_name(p.doubtful_evidence));
    else if (!p.n && p.inflight)
        ui_message(u, THEME_muted,
                   "no orphan segments yet: %zu of a dead creator are younger than "
                   "orphan_min_age (in flight?)",
                   p.inflight);
    else if (!p.n)
        ui_message(u, THEME_muted, "no orphan segments");
    else
        run_unlink(u, &p, "orphan");
    unlink_plan_free(&p);
}

void actions_unlink_unheld(struct ui *u, const struct ui_selection *sel)
{
    struct clean_policy pol;
    clean_policy_default(&pol);
    pol.own_mounts = ui_own_only(u);
    pol.all_unheld = true;
    pol.min_age_s = u->set->cfg.min_age_s;
    struct unlink_plan p;
    targets_clean(sel->model, &pol, &p);
    targets_add_dirs(sel->model, &pol, &p);
    targets_keep_state(&p, SEG_UNHELD);
    char age[32];
    fmt_duration(age, sizeof(age), pol.min_age_s);
    if (!p.n)
        ui_message(u, THEME_muted, "no unheld segments older than %s%s%s", age,
                   p.young ? " (younger ones are kept)" : "",
                   p.live ? " (a live creator's are kept: batches in flight)" : "");
    else
        run_unlink(u, &p, "unheld");
    unlink_plan_free(&p);
}

/* A log line for the screen: tabs become two spaces; control bytes and
 * invalid UTF-8 (the file is written escaped, but it is only a file) '?'. */
static void log_display_line(struct actions_lines *l, const char *line)
{
    struct buf b;
    buf_init(&b);
    const unsigned char *s = (const unsigned char *)line;
    size_t n = strlen(line);
    for (size_t i = 0; i < n;) {
        size_t len = s[i] < 0x80 ? 1 : utf8_valid_len(s + i, n - i);
        if (s[i] == '\t')
            buf_adds(&b, "  ");
        else if (len == 0 || s[i] < 0x20 || s[i] == 0x7f)
            buf_addc(&b, '?');
        else
            buf_add(&b, s + i, len);
        i += len ? len : 1;
    }
    actions_line(l, "%s", b.data ? b.data : "");
    buf_free(&b);
}

#define LOG_SHOWN 200

void actions_show_log(struct ui *u)
{
    struct actlog *log = actions_log(u);
    struct actions_lines l = {0};
    struct buf text;
    buf_init(&text);
    if (log->path && read_file(log->path, &text, 4u << 20) == 0 && text.len) {
        char *lines[LOG_SHOWN]; /* line k at k % LOG_SHOWN: the newest ones kept */
        size_t n = 0;
        char *cur = text.data, *line;
        while ((line = next_line(&cur)))
            lines[n++ % LOG_SHOWN] = line;
        size_t oldest = n > LOG_SHOWN ? n - LOG_SHOWN : 0;
        for (size_t i = n; i-- > oldest;)
            log_display_line(&l, lines[i % LOG_SHOWN]);
    } else {
        for (size_t i = 0; actlog_recent(log, i); i++)
            log_display_line(&l, actlog_recent(log, i));
    }
    char title[300];
    snprintf(title, sizeof(title), "Action log %s%s, newest first",
             log->path ? actions_safe(log->path) : "", actions_log_note(u));
    if (!l.n)
        actions_line(&l, "no actions yet");
    actions_show(u, title, &l);
    actions_lines_free(&l);
    buf_free(&text);
}
