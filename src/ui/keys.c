/* Every key of the dashboard, in one table: the dispatcher reads it, and
 * the help page is generated from it, so help always lists every key. Keys
 * follow htop where the two overlap. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "config/config.h"
#include "ui/actions.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/xalloc.h"

/* Where a key works: the list, a page (help, budget, details), the filter
 * prompt. */
enum { K_LIST = 1, K_PAGE = 2, K_FILTER = 4 };

struct key_entry {
    int modes;        /* 0: a heading for the help page */
    const char *keys; /* as the help page names them */
    int codes[6];     /* 0-terminated */
    const char *help;
    void (*run)(struct ui *u, int code);
};

/* --- Moving ------------------------------------------------------------------ */

static void k_line(struct ui *u, int code)
{
    if (u->page)
        u->page_scroll += code == FKEY(KEY_UP) ? -1 : 1;
    else
        ui_move_cursor(u, code == FKEY(KEY_UP) ? -1 : 1);
}

static void k_screen(struct ui *u, int code)
{
    int step = u->page ? LINES - 3 : u->list_h > 1 ? u->list_h - 1 : 1;
    if (u->page)
        u->page_scroll += code == FKEY(KEY_PPAGE) ? -step : step;
    else
        ui_move_cursor(u, code == FKEY(KEY_PPAGE) ? -step : step);
}

static void k_ends(struct ui *u, int code)
{
    bool home = code == FKEY(KEY_HOME);
    if (u->page)
        u->page_scroll = home ? 0 : 1 << 20; /* page_draw clamps */
    else
        ui_cursor_to(u, home ? 0 : (u->nrows ? u->nrows - 1 : 0));
}

static void k_mouse(struct ui *u, int code)
{
    (void)code;
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    int step = (ev.bstate & BUTTON4_PRESSED) ? -3 : (ev.bstate & BUTTON5_PRESSED) ? 3 : 0;
    if (u->page) {
        u->page_scroll += step;
    } else if (step) {
        ui_move_cursor(u, step);
    } else if (ev.bstate & BUTTON1_PRESSED) {
        long k = list_row_at(u, ev.y);
        if (k >= 0)
            ui_cursor_to(u, (size_t)k);
    }
}

static void k_collapse(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (!r || u->filter[0])
        return;
    if (r->expandable && r->expanded) {
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

static void k_expand(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (r && r->expandable && !r->expanded) {
        keyset_toggle(&u->collapsed, &r->key);
        rows_rebuild(u);
    }
}

static void k_expand_all(struct ui *u, int code)
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

static void k_tree(struct ui *u, int code)
{
    (void)code;
    ui_set_view(u, u->view == CONFIG_VIEW_TREE ? CONFIG_VIEW_FLAT : CONFIG_VIEW_TREE);
}

static void k_procs(struct ui *u, int code)
{
    (void)code;
    ui_set_view(u, u->view == CONFIG_VIEW_PROCESSES ? CONFIG_VIEW_TREE : CONFIG_VIEW_PROCESSES);
}

static void k_next_view(struct ui *u, int code)
{
    int step = code == FKEY(KEY_BTAB) ? CONFIG_NVIEWS - 1 : 1;
    ui_set_view(u, (u->view + step) % CONFIG_NVIEWS);
}

static void k_sort(struct ui *u, int code)
{
    int step = code == '<' ? CONFIG_NSORTS - 1 : 1;
    u->sort = (u->sort + step) % CONFIG_NSORTS;
    ui_message(u, THEME_muted, "sorted by %s", sort_name(u->sort));
    rows_rebuild(u);
}

static void k_invert(struct ui *u, int code)
{
    (void)code;
    u->reverse = !u->reverse;
    rows_rebuild(u);
}

static void k_filter(struct ui *u, int code)
{
    (void)code;
    u->filtering = true;
}

static void k_escape(struct ui *u, int code)
{
    (void)code;
    u->filter[0] = '\0';
    u->filtering = false;
    rows_rebuild(u);
}

static void k_details(struct ui *u, int code)
{
    (void)code;
    ui_open_details(u);
}

static void k_budget(struct ui *u, int code)
{
    (void)code;
    u->page = u->page == PAGE_BUDGET ? PAGE_NONE : PAGE_BUDGET;
    u->page_scroll = 0;
}

static void k_help(struct ui *u, int code)
{
    (void)code;
    u->page = u->page == PAGE_HELP ? PAGE_NONE : PAGE_HELP;
    u->page_scroll = 0;
}

static void k_close(struct ui *u, int code)
{
    (void)code;
    u->page = PAGE_NONE;
}

static void k_redraw(struct ui *u, int code)
{
    (void)code;
    (void)u;
    clearok(curscr, TRUE);
}

/* --- Data ------------------------------------------------------------------------- */

static void k_pause(struct ui *u, int code)
{
    (void)code;
    u->paused = !u->paused;
    ui_message(u, THEME_muted,
               u->paused ? "paused: the screen keeps this scan (r shows a new one)" : "resumed");
}

static void k_rescan(struct ui *u, int code)
{
    (void)code;
    poller_request_scan(u->poller);
    u->step = u->paused;
    ui_message(u, THEME_muted, "rescanning...");
}

/* --- Marks and actions ------------------------------------------------------------- */

static void k_mark(struct ui *u, int code)
{
    (void)code;
    const struct row *r = ui_current(u);
    if (!r)
        return;
    if (r->key.kind == ROW_SECTION) {
        ui_message(u, THEME_muted, "a section cannot be marked: mark its rows");
        return;
    }
    keyset_toggle(&u->marked, &r->key);
    ui_move_cursor(u, 1);
}

static void k_unmark(struct ui *u, int code)
{
    (void)code;
    keyset_clear(&u->marked);
}

static const struct segment *find_seg(const struct model *m, const struct row_key *k)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (m->segs[i].dev == k->dev && m->segs[i].ino == k->ino)
            return &m->segs[i];
    return NULL;
}

static void with_selection(struct ui *u, int code)
{
    if (u->set->cfg.read_only) {
        ui_message(u, THEME_warning, "read-only (--read-only or read_only: true): actions are off");
        return;
    }
    if (!u->snap) {
        ui_message(u, THEME_muted, "no scan yet");
        return;
    }
    const struct model *m = &u->snap->model;
    struct ui_selection sel = {.model = m, .current = ui_current(u)};
    if (sel.current) {
        sel.seg = sel.current->seg;
        sel.proc = sel.current->proc;
        sel.group = sel.current->group;
        if (!sel.group && sel.proc && sel.proc->group)
            sel.group = model_find_group(m, sel.proc->group);
        if (!sel.group && sel.seg && sel.seg->group)
            sel.group = model_find_group(m, sel.seg->group);
    }
    size_t segs_cap = 0, procs_cap = 0;
    for (size_t i = 0; i < u->marked.n; i++) {
        const struct row_key *k = &u->marked.items[i];
        if (k->kind == ROW_SEG) {
            const struct segment *s = find_seg(m, k);
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

static void k_quit(struct ui *u, int code)
{
    (void)code;
    u->quit = true;
}

/* --- The filter prompt --------------------------------------------------------------- */

static void k_filter_type(struct ui *u, int code)
{
    char mb[MB_LEN_MAX];
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t k = wcrtomb(mb, (wchar_t)code, &st);
    size_t len = strlen(u->filter);
    if (k == (size_t)-1 || len + k >= sizeof(u->filter))
        return;
    memcpy(u->filter + len, mb, k);
    u->filter[len + k] = '\0';
    rows_rebuild(u);
}

static void k_filter_erase(struct ui *u, int code)
{
    (void)code;
    size_t len = strlen(u->filter);
    while (len > 0 && ((unsigned char)u->filter[len - 1] & 0xC0) == 0x80)
        len--; /* continuation bytes of a UTF-8 character */
    if (len > 0)
        len--;
    u->filter[len] = '\0';
    rows_rebuild(u);
}

static void k_filter_done(struct ui *u, int code)
{
    (void)code;
    u->filtering = false;
}

/* --- The table ------------------------------------------------------------------------ */

#define F(k) FKEY(k)

static const struct key_entry keys[] = {
    {0, NULL, {0}, "Moving around", NULL},
    {K_LIST | K_PAGE | K_FILTER,
     "Up Down",
     {F(KEY_UP), F(KEY_DOWN)},
     "move one row (scroll a page)",
     k_line},
    {K_LIST | K_PAGE | K_FILTER,
     "PgUp PgDn",
     {F(KEY_PPAGE), F(KEY_NPAGE)},
     "move one screen",
     k_screen},
    {K_LIST | K_PAGE, "Home End", {F(KEY_HOME), F(KEY_END)}, "go to the first or last row", k_ends},
    {K_LIST | K_PAGE, "mouse", {F(KEY_MOUSE)}, "the wheel scrolls, a click selects a row", k_mouse},
    {K_LIST,
     "Left -",
     {F(KEY_LEFT), '-'},
     "collapse a branch of the tree, or go to its parent",
     k_collapse},
    {K_LIST, "Right +", {F(KEY_RIGHT), '+'}, "expand a branch of the tree", k_expand},
    {K_LIST, "*", {'*'}, "expand every branch, or collapse them all", k_expand_all},

    {0, NULL, {0}, "Views", NULL},
    {K_LIST,
     "t F5",
     {'t', F(KEY_F(5))},
     "switch between the tree (DataLoader groups) and the flat list of segments",
     k_tree},
    {K_LIST,
     "p",
     {'p'},
     "the processes view (roles, shm held, zombies and orphaned workers), and back",
     k_procs},
    {K_LIST,
     "Tab Shift-Tab",
     {'\t', F(KEY_BTAB)},
     "next or previous view: tree, flat, processes",
     k_next_view},
    {K_LIST,
     "s > F6",
     {'s', '>', F(KEY_F(6))},
     "sort by the next key: size, age, state, pid, name",
     k_sort},
    {K_LIST, "<", {'<'}, "sort by the previous key", k_sort},
    {K_LIST, "I", {'I'}, "invert the sort order", k_invert},
    {K_LIST,
     "/ F3 F4",
     {'/', F(KEY_F(3)), F(KEY_F(4))},
     "filter: show only rows whose name, pid or command contains the text typed",
     k_filter},
    {K_LIST, "Esc", {27}, "clear the filter", k_escape},
    {K_LIST,
     "Enter",
     {'\r', '\n', F(KEY_ENTER)},
     "details of the row: every holder with its fd and mapping; for a process its command, role, "
     "group and segments",
     k_details},
    {K_LIST | K_PAGE,
     "b",
     {'b'},
     "the budget page: limit, app, shm and headroom, with the arithmetic",
     k_budget},
    {K_LIST | K_PAGE, "Ctrl-L", {CTL('l')}, "redraw the screen", k_redraw},

    {0, NULL, {0}, "Data", NULL},
    {K_LIST | K_PAGE, "Z", {'Z'}, "pause or resume: the screen keeps the current scan", k_pause},
    {K_LIST | K_PAGE, "r", {'r'}, "rescan now (also while paused)", k_rescan},

    {0, NULL, {0}, "Marks and actions", NULL},
    {K_LIST,
     "Space",
     {' '},
     "mark or unmark the row (for an action on several), then move down",
     k_mark},
    {K_LIST, "u", {'u'}, "unmark every row", k_unmark},
    {K_LIST,
     "d Del",
     {'d', F(KEY_DC)},
     "unlink the selected orphan (or the marked ones, or the orphans of the group)",
     with_selection},
    {K_LIST, "D", {'D'}, "unlink every orphan, after a confirmation", with_selection},
    {K_LIST,
     "U",
     {'U'},
     "unlink every unheld segment older than min_age, after a confirmation",
     with_selection},
    {K_LIST,
     "k F9",
     {'k', F(KEY_F(9))},
     "send a signal to the selected (or marked) process",
     with_selection},
    {K_LIST,
     "K",
     {'K'},
     "end every orphaned worker and stuck shm manager, after a confirmation",
     with_selection},

    {0, NULL, {0}, "Help and quitting", NULL},
    {K_LIST | K_PAGE, "h ? F1", {'h', '?', F(KEY_F(1))}, "this help (again: close it)", k_help},
    {K_LIST | K_PAGE, "q F10", {'q', F(KEY_F(10))}, "quit (Ctrl-C too)", k_quit},

    {0, NULL, {0}, "In a page (help, budget, details)", NULL},
    {K_PAGE,
     "q Esc Left",
     {'q', 27, F(KEY_LEFT)},
     "close the page (the keys above scroll it)",
     k_close},

    {0, NULL, {0}, "In the filter prompt", NULL},
    {K_FILTER, "any text", {0}, "narrows the list as you type", k_filter_type},
    {K_FILTER, "Backspace", {F(KEY_BACKSPACE), 127, 8}, "erase the last character", k_filter_erase},
    {K_FILTER,
     "Enter",
     {'\r', '\n', F(KEY_ENTER)},
     "keep the filter and leave the prompt",
     k_filter_done},
    {K_FILTER, "Esc", {27}, "clear the filter and leave the prompt", k_escape},
};

#undef F

void keys_help_lines(void (*emit)(void *ctx, const char *keys, const char *help, bool heading),
                     void *ctx)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        emit(ctx, keys[i].keys, keys[i].help, keys[i].modes == 0);
}

static bool printable(int code)
{
    return code >= ' ' && code != 127 && !(code & FKEY(0)) && iswprint((wint_t)code);
}

void keys_handle(struct ui *u, int code)
{
    int mode = u->page ? K_PAGE : u->filtering ? K_FILTER : K_LIST;
    u->dirty = true;
    if (mode == K_FILTER && printable(code)) {
        k_filter_type(u, code);
        return;
    }
    /* A binding of this mode alone wins over one shared with other modes
     * (q closes a page; in the list it quits). */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            const struct key_entry *e = &keys[i];
            if (pass == 0 ? e->modes != mode : !(e->modes & mode))
                continue;
            for (size_t c = 0; c < sizeof(e->codes) / sizeof(e->codes[0]) && e->codes[c]; c++)
                if (e->codes[c] == code) {
                    e->run(u, code);
                    return;
                }
        }
}
