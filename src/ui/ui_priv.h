/* The dashboard's state and the interfaces between its modules: rows (what
 * the list shows), the screens that draw it (dash, list, pages), the key
 * table and the main loop. */
#ifndef SHMWATCH_UI_PRIV_H
#define SHMWATCH_UI_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "model/history.h"
#include "model/model.h"
#include "ui/poller.h"
#include "ui/ui_settings.h"

/* --- Rows ------------------------------------------------------------- */

enum row_kind { ROW_GROUP, ROW_PROC, ROW_SEG, ROW_SECTION, ROW_CTR };
enum section { SEC_HOLDERS, SEC_ORPHANS, SEC_UNHELD, SEC_OTHER, SEC_COUNT };

/* What a row stands for, stable across scans: the cursor, marks and
 * collapsed branches follow it. */
struct row_key {
    enum row_kind kind;
    pid_t pid;   /* GROUP: main pid; PROC: pid */
    dev_t dev;   /* SEG */
    ino_t ino;   /* SEG */
    int section; /* SECTION */
    uint64_t ctr; /* CTR, and SECTION in the node view: the container's identity
                   * (ui_ctr_identity), 0 for the host's (and outside the node
                   * view): the same from one scan to the next, where its index
                   * shifts as containers come and go */
};

struct row {
    struct row_key key;
    unsigned depth;
    unsigned lastmask; /* bit d: the row's ancestor at depth d (or itself) is a last child */
    bool expandable, expanded;
    const struct segment *seg; /* SEG */
    const struct mproc *proc;  /* PROC; GROUP: its main, when listed */
    const struct group *group; /* GROUP */
    size_t count;              /* segments below a GROUP or SECTION */
    uint64_t size, alloc;      /* their totals */
};

struct keyset {
    struct row_key *items;
    size_t n, cap;
};
bool keyset_has(const struct keyset *s, const struct row_key *k);
void keyset_toggle(struct keyset *s, const struct row_key *k);
void keyset_clear(struct keyset *s);
/* The segment a ROW_SEG key stands for in m, or NULL when it is gone. */
const struct segment *row_key_seg(const struct model *m, const struct row_key *k);

/* --- State ------------------------------------------------------------ */

enum ui_page { PAGE_NONE, PAGE_HELP, PAGE_BUDGET, PAGE_DETAILS, PAGE_EVENTS };

/* Events kept for the page, the oldest dropped. */
#define EVLOG_KEPT 500

struct ui {
    struct sysroot sys; /* the system watched: the scans read it, the actions act in it */
    const struct ui_settings *set;
    struct poller *poller; /* NULL in a replay */
    struct replay *replay; /* shmwatch replay: the recording shown (ui/replay.h), else NULL */
    struct snap *snap;    /* what is shown; NULL until the first scan */
    struct gauges gauges; /* newest statvfs readings */
    struct history hist;

    int view; /* enum config_view */
    bool node; /* with --all: the node view (every container), else the own view */
    int sort; /* enum config_sort */
    bool reverse;
    char filter[128];
    bool filtering; /* the filter prompt has the keyboard */

    struct row *rows;
    size_t nrows;
    size_t cursor, top;
    struct row_key cursor_key;
    bool have_cursor_key;
    struct keyset collapsed;
    struct keyset marked;

    enum ui_page page;
    int page_scroll;
    struct row_key details; /* the row the details page is about */

    /* --pid: the watched process has exited (SCAN_TARGET_EXITED) or its pid
     * is another's (_REPLACED), seen at target_gone_at (wall clock); the
     * last snapshot stays on screen. */
    int target_gone; /* enum scan_target */
    time_t target_gone_at;

    bool paused, step, quit, dirty;
    double spark_tick; /* sparkline cell of the last gauge redraw */
    char message[256];
    int message_role; /* enum theme_role */
    double message_until;
    /* The scan under way has run past the watchdog's limit: what is shown
     * is the last complete scan, stale. */
    bool stalled;
    long stalled_s;
    char stalled_where[200];

    int list_y, list_h; /* the list's place on screen, from the last draw */
    /* The events told so far (evlog.c), newest last; in a replay the
     * recording's up to the moment shown (ui/replay.c). */
    struct {
        struct poller_event *items;
        size_t n, cap;
    } evlog;
};

/* --- The node view (nodeview.c) -------------------------------------------- */

/* Any container, for the row builders' filters. */
#define UI_CTR_ANY ((size_t)-2)
/* The node view is shown: an --all scan, and the node view chosen (n). */
bool ui_node(const struct ui *u);
/* An --all scan shown as the own view: the host's mounts and processes. */
bool ui_own_only(const struct ui *u);
/* Whether the view shows the segment (the own view: the host's mounts). */
bool ui_seg_shown(const struct ui *u, const struct segment *sg);
bool ui_ctr_has(size_t want, size_t ctr);
/* Container ctr's identity in a row key: its id (with its containerd
 * namespace) where a runtime names it, else its mount namespace, else (a
 * recording keeps none) the member it was read through; never 0, the
 * host's. */
uint64_t ui_ctr_identity(const struct model *m, size_t ctr);
/* A row key's container in m: NODE_HOST, the index of the container of its
 * identity, or UI_CTR_ANY when m has no such container (gone). */
size_t ui_key_ctr(const struct model *m, const struct row_key *k);
/* A container's slot: 0 for the host's and for UI_CTR_ANY, k + 1 for
 * container k. */
size_t ui_ctr_slot(size_t ctr);
/* Container ctr of model m labelled for the screen (escaped): its name or
 * pod, else its runtime and short id, else its hostname, else its mount
 * namespace; a containerd namespace's container as NAMESPACE/NAME, else
 * NAMESPACE/ID (container_label); "host" for NODE_HOST. */
void ui_ctr_label(const struct model *m, size_t ctr, char *dst, size_t n);
/* Unix seconds t in local time, as fmt (strftime) says, into dst. */
void ui_local_time(double t, const char *fmt, char *dst, size_t n);
/* A mount's gauge label: its owner's label (+N other containers) and path. */
void ui_mount_label(const struct ui *u, size_t mount, char *dst, size_t n);
/* The mounts the view shows into order (room for every mount), in the node
 * view most critical first (its owner's verdict, then its fill); how many. */
size_t ui_mount_order(const struct ui *u, size_t *order);
/* The containers (and NODE_HOST) in the order of their most critical
 * mount; order has room for nctrs + 1. How many. */
size_t ui_ctr_order(const struct ui *u, size_t *order);
/* The container of the row under the cursor (NODE_HOST outside the node
 * view). */
size_t ui_selected_ctr(const struct ui *u);
/* The budget the header and the budget page show: the selected
 * container's in the node view (*mount: one of its mounts, SIZE_MAX none). */
const struct budget *ui_budget(const struct ui *u, size_t *mount);
/* Container ctr's budget (NODE_HOST: the host's), and one of its mounts. */
const struct budget *ui_ctr_budget(const struct ui *u, size_t ctr, size_t *mount);
const struct cgroup_info *ui_cgroup(const struct ui *u);

/* Shows a message in the status line for a few seconds. */
void ui_message(struct ui *u, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The row under the cursor, or NULL. */
const struct row *ui_current(const struct ui *u);
/* Adds g's readings of the mounts that could be read to the fill history. */
void ui_add_history(struct ui *u, const struct gauges *g);
/* Shows snapshot s from now on (u takes it, and frees the one it replaces):
 * drops the marks of what s no longer has and rebuilds the rows. */
void ui_show_snap(struct ui *u, struct snap *s);

/* rows.c: rebuilds u->rows from the snapshot, view, filter, sort and
 * collapsed set, keeping the cursor on the same item when it still exists. */
void rows_rebuild(struct ui *u);
/* Drops the marks of items the snapshot no longer has (a segment removed, a
 * process gone), so that the title counts only what an action would act on.
 * Marks of items hidden by the view, a filter or a collapsed branch stay. */
void rows_prune_marks(struct ui *u);

/* sort.c: orders of segments, processes and groups for the current sort. */
int sort_segments(const struct ui *u, const struct segment *a, const struct segment *b);
int sort_procs(const struct ui *u, const struct mproc *a, const struct mproc *b);
int sort_groups(const struct ui *u, const struct group *a, const struct group *b);
/* The arrow of the order shown: down where the larger, older or more
 * urgent come first (size, age and state as s first gives them), up where
 * the smaller do (pid and name, ascending); I turns it. */
const char *sort_arrow(const struct ui *u);

/* Seconds of history per sparkline cell; the gauges are redrawn at least
 * this often so that the sparkline moves on. */
#define SPARK_CELL_S 4.0

/* dash.c: the title, gauges and budget panel from the top line, in at
 * most max_lines lines (returns the lines used), and the status lines. */
int dash_draw_top(struct ui *u, int max_lines);
void dash_draw_status(struct ui *u, int y, int lines);
/* Whether a status message (ui_message) is still shown. */
bool dash_message_shown(const struct ui *u);
/* The colour (enum theme_role) of a budget verdict. */
int dash_verdict_role(enum verdict v);

/* list.c: the list with its column header in rows [y, y + h). */
void list_draw(struct ui *u, int y, int h);
/* Whether a column of the list, as laid out now, shows the sort key (its
 * header then carries the arrow): the processes view has no age column,
 * and narrow screens drop columns. */
bool list_sort_shown(const struct ui *u);
/* The row index at screen line y, or -1. */
long list_row_at(const struct ui *u, int y);

/* pages.c: the full-screen pages (help, budget arithmetic, details). */
void page_draw(struct ui *u);
/* Key codes: a character as itself, a curses function key as FKEY(KEY_x),
 * so that the two never collide. */
#define FKEY(k) (0x40000000 | (k))
#define CTL(c) ((c)&0x1f)
/* Dispatches a key in the current mode (page, filter prompt or list). */
void keys_handle(struct ui *u, int code);

/* evlog.c: the events from the poller (the critical ones said on the
 * status line at once), the lines of the newest under the budget (how
 * many of room, and drawn from y), and the events page. */
void evlog_take(struct ui *u);
/* Adds e as the newest event, the oldest dropped past EVLOG_KEPT. */
void evlog_add(struct ui *u, const struct poller_event *e);
int evlog_lines(const struct ui *u, int room);
void evlog_draw(struct ui *u, int y, int lines);

/* ui.c */
/* Whether the screen is below the least the dashboard draws (20x5): ui_draw
 * then shows only a notice, and no dialog is drawn over it. */
bool ui_too_small(void);
void ui_draw(struct ui *u);
/* Waits for one key (or a resize or quit signal, which redraw or set
 * u->quit): the modal loop of dialogs. Returns the key code, -1 on quit. */
int ui_wait_key(struct ui *u);
void ui_move_cursor(struct ui *u, long delta);
void ui_cursor_to(struct ui *u, size_t index);

#endif
