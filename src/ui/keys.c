/* Every key of the dashboard, in one table: the dispatcher reads it, and
 * the help page is generated from it, so help always lists every key. Keys
 * follow htop where the two overlap. */
#include <wctype.h>

#include "ui/commands.h"
#include "ui/page.h"
#include "ui/term.h"
#include "ui/ui_priv.h"

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

/* --- The table ------------------------------------------------------------------------ */

#define F(k) FKEY(k)

static const struct key_entry keys[] = {
    {0, NULL, {0}, "Moving around", NULL},
    {K_LIST | K_PAGE | K_FILTER,
     "Up Down",
     {F(KEY_UP), F(KEY_DOWN)},
     "move one row (scroll a page)",
     cmd_line},
    {K_LIST | K_PAGE | K_FILTER,
     "PgUp PgDn",
     {F(KEY_PPAGE), F(KEY_NPAGE)},
     "move one screen",
     cmd_screen},
    {K_LIST | K_PAGE,
     "Home End",
     {F(KEY_HOME), F(KEY_END)},
     "go to the first or last row",
     cmd_ends},
    {K_LIST | K_PAGE,
     "mouse",
     {F(KEY_MOUSE)},
     "the wheel scrolls, a click selects a row",
     cmd_mouse},
    {K_LIST,
     "Left -",
     {F(KEY_LEFT), '-'},
     "collapse a branch of the tree, or go to its parent (with a filter, where every branch "
     "is open: to its parent)",
     cmd_collapse},
    {K_LIST, "Right +", {F(KEY_RIGHT), '+'}, "expand a branch of the tree", cmd_expand},
    {K_LIST, "*", {'*'}, "expand every branch, or collapse them all", cmd_expand_all},

    {0, NULL, {0}, "Views", NULL},
    {K_LIST,
     "t F5",
     {'t', F(KEY_F(5))},
     "switch between the tree (DataLoader groups) and the flat list of segments",
     cmd_tree},
    {K_LIST,
     "p",
     {'p'},
     "the processes view (roles, shm held, zombies and orphaned workers); again, the tree",
     cmd_procs},
    {K_LIST,
     "Tab Shift-Tab",
     {'\t', F(KEY_BTAB)},
     "next or previous view: tree, flat, processes",
     cmd_next_view},
    {K_LIST,
     "s > F6",
     {'s', '>', F(KEY_F(6))},
     "sort by the next key: size, age, state, pid, name",
     cmd_sort},
    {K_LIST, "<", {'<'}, "sort by the previous key", cmd_sort},
    {K_LIST,
     "I",
     {'I'},
     "invert the sort order (the status line says it; the column sorted on carries the arrow)",
     cmd_invert},
    {K_LIST,
     "/ F3 F4",
     {'/', F(KEY_F(3)), F(KEY_F(4))},
     "filter: show only rows whose name, pid or command contains the text typed "
     "(kind:NAME: the segments of one kind, e.g. kind:nccl)",
     cmd_filter},
    {K_LIST, "Esc", {27}, "clear the filter", cmd_escape},
    {K_LIST,
     "Enter",
     {'\r', '\n', F(KEY_ENTER)},
     "details of the row: every holder with its fd and mapping; for a process its command, role, "
     "group and segments",
     cmd_details},
    {K_LIST,
     "n",
     {'n'},
     "with --all: switch between the node view (every container's /dev/shm, most critical "
     "first, the tree under each container) and the own view (the host's)",
     cmd_node},
    {K_LIST | K_PAGE,
     "b",
     {'b'},
     "the budget page: limit, app, shm and headroom, with the arithmetic",
     cmd_budget},
    {K_LIST | K_PAGE, "Ctrl-L", {CTL('l')}, "redraw the screen", cmd_redraw},

    {0, NULL, {0}, "Data", NULL},
    {K_LIST | K_PAGE, "Z", {'Z'}, "pause or resume: the screen keeps the current scan", cmd_pause},
    {K_LIST | K_PAGE, "r", {'r'}, "rescan now (also while paused)", cmd_rescan},

    {0, NULL, {0}, "Replay (shmwatch replay)", NULL},
    {K_LIST | K_PAGE,
     "[ ]",
     {'[', ']'},
     "the previous or next snapshot of the recording (one interval)",
     cmd_replay_step},
    {K_LIST | K_PAGE,
     "{ }",
     {'{', '}'},
     "the previous or next event (an exit, an OOM kill, a mount, a fill level...): the "
     "snapshot right after it, the event on the status line",
     cmd_replay_event},
    {K_LIST,
     "g",
     {'g'},
     "go to a time: 2026-12-05T03:12:07Z, 03:12[:07] today, or -10m (ago)",
     cmd_replay_goto},

    {0, NULL, {0}, "Marks and actions", NULL},
    {K_LIST,
     "Space",
     {' '},
     "mark or unmark the row (for an action on several), then move down",
     cmd_mark},
    {K_LIST, "u", {'u'}, "unmark every row", cmd_unmark},
    {K_LIST,
     "d Del",
     {'d', F(KEY_DC)},
     "unlink the selected orphan (or the marked ones, or the orphans of the group)",
     cmd_action},
    {K_LIST, "D", {'D'}, "unlink every orphan, after a confirmation", cmd_action},
    {K_LIST,
     "U",
     {'U'},
     "unlink every unheld segment older than min_age, after a confirmation",
     cmd_action},
    {K_LIST,
     "k F9",
     {'k', F(KEY_F(9))},
     "send a signal to the selected (or marked) process: in the menu Enter sends the one "
     "selected, digits type a signal's number (2 INT, 9 KILL, 15 TERM), never a line's position",
     cmd_action},
    {K_LIST,
     "K",
     {'K'},
     "end every orphaned worker and stuck shm manager, after a confirmation",
     cmd_action},
    {K_LIST, "L", {'L'}, "the action log: every unlink and signal, newest first", cmd_log},
    {K_LIST | K_PAGE,
     "e",
     {'e'},
     "the events page: exits, OOM kills, churn, mounts, fill levels, newest first",
     cmd_events},

    {0, NULL, {0}, "Help and quitting", NULL},
    {K_LIST | K_PAGE, "h ? F1", {'h', '?', F(KEY_F(1))}, "this help (again: close it)", cmd_help},
    {K_LIST | K_PAGE, "q F10", {'q', F(KEY_F(10))}, "quit (Ctrl-C too)", cmd_quit},

    {0, NULL, {0}, "In a page (help, budget, details)", NULL},
    {K_PAGE,
     "q Esc Left",
     {'q', 27, F(KEY_LEFT)},
     "close the page (the keys above scroll it)",
     cmd_close},

    {0, NULL, {0}, "In the filter prompt", NULL},
    {K_FILTER, "any text", {0}, "narrows the list as you type", cmd_filter_type},
    {K_FILTER,
     "Backspace",
     {F(KEY_BACKSPACE), 127, 8},
     "erase the last character",
     cmd_filter_erase},
    {K_FILTER,
     "Enter",
     {'\r', '\n', F(KEY_ENTER)},
     "keep the filter and leave the prompt",
     cmd_filter_done},
    {K_FILTER, "Esc", {27}, "clear the filter and leave the prompt", cmd_escape},
};

#undef F

void keys_help_lines(struct page *p)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (keys[i].modes) {
            page_add(p, THEME_normal, 18, "  %-15s %s", keys[i].keys, keys[i].help);
            continue;
        }
        if (p->n) /* a heading, after a blank line */
            page_blank(p);
        page_add(p, THEME_header, 0, "%s", keys[i].help);
    }
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
        cmd_filter_type(u, code);
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
