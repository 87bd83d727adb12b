/* The commands the keys run (see commands.h and the key table in keys.c). */
#include "ui/commands.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "config/config.h"
#include "ui/actions.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/escape.h"
#include "util/xalloc.h"

/* --- Moving ------------------------------------------------------------------ */

/* delta rows on: a page scrolls, the list moves its cursor. */
static void move_by(struct ui *u, int delta)
{
    if (u->page)
        u->page_scroll += delta;
    else
        ui_move_cursor(u, delta);
}

void cmd_line(struct ui *u, int code)
{
    move_by(u, code == FKEY(KEY_UP) ? -1 : 1);
}

void cmd_screen(struct ui *u, int code)
{
    int step = u->page ? LINES - 3 : u->list_h > 1 ? u->list_h - 1 : 1;
    move_by(u, code == FKEY(KEY_PPAGE) ? -step : step);
}

void cmd_ends(struct ui *u, int code)
{
    bool home = code == FKEY(KEY_HOME);
    if (u->page)
        u->page_scroll = home ? 0 : 1 << 20; /* page_draw clamps */
    else
        ui_cursor_to(u, home ? 0 : SIZE_MAX); /* ui_cursor_to clamps */
}

void cmd_mouse(struct ui *u, int code)
{
    (void)code;
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    int step = (ev.bstate & BUTTON4_PRESSED) ? -3 : (ev.bstate & BUTTON5_PRESSED) ? 3 : 0;
    if (step) {
        move_by(u, step);
    } else if (!u->page && (ev.bstate & BUTTON1_PRESSED)) {
        long k = list_row_at(u, ev.y);
        if (k >= 0)
            ui_cursor_to(u, (size_t)k);
    }
}

void cmd_collapse(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (!r)
        return;
    /* A filter shows every branch open (rows.c), so that no match hides
     * under a collapsed row: there Left goes to the parent alone. */
    if (r->expandable && r->expanded && !u->filter[0]) {
        keyset_toggle(&u->collapsed, &r->key);
        rows_rebuild(u);
        return;
    }
    for (size_t i = u->cursor; i-- > 0;) /* to the parent */
        if (u->rows[i].depth < r->depth) {
            ui_cursor_to(u, i);
            return;
        }
}

void cmd_expand(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (r && r->expandable && !r->expanded) {
        keyset_toggle(&u->collapsed, &r->key);
        rows_rebuild(u);
    }
}

void cmd_expand_all(struct ui *u, int code)
{
    (void)code;
    if (u->collapsed.n) {
        keyset_clear(&u->collapsed);
    } else {
        for (size_t i = 0; i < u->nrows; i++)
            if (u->rows[i].depth == 0 && u->rows[i].expandable)
                keyset_toggle(&u->collapsed, &u->rows[i].key);
    }
    rows_rebuild(u);
}

/* --- Views --------------------------------------------------------------------- */

static void set_view(struct ui *u, int view)
{
    u->view = view;
    rows_rebuild(u);
    ui_message(u, THEME_muted, "%s view", config_view_names[view]);
}

void cmd_tree(struct ui *u, int code)
{
    (void)code;
    set_view(u, u->view == CONFIG_VIEW_TREE ? CONFIG_VIEW_FLAT : CONFIG_VIEW_TREE);
}

void cmd_procs(struct ui *u, int code)
{
    (void)code;
    set_view(u, u->view == CONFIG_VIEW_PROCESSES ? CONFIG_VIEW_TREE : CONFIG_VIEW_PROCESSES);
}

void cmd_next_view(struct ui *u, int code)
{
    int step = code == FKEY(KEY_BTAB) ? CONFIG_NVIEWS - 1 : 1;
    set_view(u, (u->view + step) % CONFIG_NVIEWS);
}

/* Says the order, with the title's arrow, and where no column shows the
 * key (no header to carry the arrow) says so. */
static void say_sort(struct ui *u)
{
    ui_message(u, THEME_muted, "sorted by %s%s%s", config_sort_names[u->sort], sort_arrow(u),
               list_sort_shown(u) ? "" : " (no column shows it here)");
}

void cmd_sort(struct ui *u, int code)
{
    int step = code == '<' ? CONFIG_NSORTS - 1 : 1;
    u->sort = (u->sort + step) % CONFIG_NSORTS;
    say_sort(u);
    rows_rebuild(u);
}

void cmd_invert(struct ui *u, int code)
{
    (void)code;
    u->reverse = !u->reverse;
    say_sort(u);
    rows_rebuild(u);
}

void cmd_filter(struct ui *u, int code)
{
    (void)code;
    u->filtering = true;
}

void cmd_escape(struct ui *u, int code)
{
    (void)code;
    u->filter[0] = '\0';
    u->filtering = false;
    rows_rebuild(u);
}

void cmd_details(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (!r)
        return;
    u->details = r->key;
    u->page = PAGE_DETAILS;
    u->page_scroll = 0;
}

/* A full page's key: opens it from its top, or closes it when shown. */
static void toggle_page(struct ui *u, enum ui_page page)
{
    u->page = u->page == page ? PAGE_NONE : page;
    u->page_scroll = 0;
}

void cmd_budget(struct ui *u, int code)
{
    (void)code;
    toggle_page(u, PAGE_BUDGET);
}

void cmd_events(struct ui *u, int code)
{
    (void)code;
    toggle_page(u, PAGE_EVENTS);
}

void cmd_node(struct ui *u, int code)
{
    (void)code;
    if (!u->set->flags.all) {
        ui_message(u, THEME_muted, "the node view needs shmwatch --all (every container's /dev/shm)");
        return;
    }
    u->node = !u->node;
    rows_rebuild(u);
    ui_message(u, THEME_muted, "%s", u->node ? "node view: every container's shm mounts"
                                             : "own view: the host's shm mounts");
}

void cmd_help(struct ui *u, int code)
{
    (void)code;
    toggle_page(u, PAGE_HELP);
}

void cmd_close(struct ui *u, int code)
{
    (void)code;
    u->page = PAGE_NONE;
}

void cmd_redraw(struct ui *u, int code)
{
    (void)code;
    (void)u;
    clearok(curscr, TRUE);
}

/* --- Data ------------------------------------------------------------------------- */

/* What a replay refuses, in one line. */
static bool refused_in_replay(struct ui *u, const char *what)
{
    if (!u->replay)
        return false;
    ui_message(u, THEME_warning, "replay: %s (this is a recording; [ ] { } g move through it)",
               what);
    return true;
}

void cmd_pause(struct ui *u, int code)
{
    (void)code;
    if (refused_in_replay(u, "nothing to pause"))
        return;
    u->paused = !u->paused;
    ui_message(u, THEME_muted,
               u->paused ? "paused: the screen keeps this scan (r shows a new one)" : "resumed");
}

void cmd_rescan(struct ui *u, int code)
{
    (void)code;
    if (refused_in_replay(u, "no rescan"))
        return;
    if (u->target_gone) { /* the poller scans no more: its last scan stays */
        ui_message(u, THEME_muted, "no rescan: process %d exited, and its last scan stays shown",
                   (int)u->set->flags.pid);
        return;
    }
    poller_request_scan(u->poller);
    u->step = u->paused;
    ui_message(u, THEME_muted, "rescanning...");
}

/* --- Marks and actions ------------------------------------------------------------- */

void cmd_mark(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (!r)
        return;
    /* Only segments and processes are acted on: a mark of a section or of
     * a container (the node view's host row among them) would be counted
     * in the title and then do nothing. */
    if (r->key.kind == ROW_SECTION || r->key.kind == ROW_CTR) {
        ui_message(u, THEME_muted, "%s cannot be marked: mark its rows",
                   r->key.kind == ROW_CTR ? "a container" : "a section");
        return;
    }
    keyset_toggle(&u->marked, &r->key);
    ui_move_cursor(u, 1);
}

void cmd_unmark(struct ui *u, int code)
{
    (void)code;
    keyset_clear(&u->marked);
}

void cmd_log(struct ui *u, int code)
{
    (void)code;
    if (refused_in_replay(u, "the action log is this machine's, not the recording's"))
        return;
    actions_show_log(u);
}

void cmd_action(struct ui *u, int code)
{
    if (refused_in_replay(u, "actions are off"))
        return;
    if (u->set->cfg.read_only) {
        ui_message(u, THEME_warning, "read-only (--read-only or read_only: true): actions are off");
        return;
    }
    if (!u->snap) {
        ui_message(u, THEME_muted, "no scan yet");
        return;
    }
    const struct model *m = &u->snap->model;
    struct ui_selection sel = {.model = m};
    const struct row *cur = ui_current(u);
    if (cur) {
        sel.seg = cur->seg;
        sel.proc = cur->proc;
        sel.group = cur->group;
        /* No group for a segment row: d acts on its segment alone. */
        if (!sel.group && sel.proc && sel.proc->group)
            sel.group = model_find_group(m, sel.proc->group);
    }
    size_t segs_cap = 0, procs_cap = 0;
    for (size_t i = 0; i < u->marked.n; i++) {
        const struct row_key *k = &u->marked.items[i];
        if (k->kind == ROW_SEG) {
            const struct segment *s = row_key_seg(m, k);
            if (s)
                *VEC_PUSH(sel.marked_segs, sel.nmarked_segs, segs_cap) = s;
        } else {
            const struct mproc *p = model_find_proc(m, k->pid);
            if (p)
                *VEC_PUSH(sel.marked_procs, sel.nmarked_procs, procs_cap) = p;
        }
    }
    switch (code) {
    case 'd':
    case FKEY(KEY_DC):
        actions_unlink(u, &sel);
        break;
    case 'D':
        actions_unlink_orphans(u, &sel);
        break;
    case 'U':
        actions_unlink_unheld(u, &sel);
        break;
    case 'K':
        actions_reap(u, &sel);
        break;
    default:
        actions_signal(u, &sel);
        break;
    }
    free(sel.marked_segs);
    free(sel.marked_procs);
}

void cmd_quit(struct ui *u, int code)
{
    (void)code;
    u->quit = true;
}

/* --- The filter prompt --------------------------------------------------------------- */

void cmd_filter_type(struct ui *u, int code)
{
    char mb[MB_LEN_MAX];
    mbstate_t st = {0};
    size_t k = wcrtomb(mb, (wchar_t)code, &st);
    size_t len = strlen(u->filter);
    if (k == (size_t)-1 || len + k >= sizeof(u->filter))
        return;
    memcpy(u->filter + len, mb, k);
    u->filter[len + k] = '\0';
    rows_rebuild(u);
}

void cmd_filter_erase(struct ui *u, int code)
{
    (void)code;
    size_t len = strlen(u->filter);
    if (len > 0)
        len = utf8_cut(u->filter, len - 1); /* where its last character starts */
    u->filter[len] = '\0';
    rows_rebuild(u);
}

void cmd_filter_done(struct ui *u, int code)
{
    (void)code;
    u->filtering = false;
}
