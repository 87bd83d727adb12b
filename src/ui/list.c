/* The list: a column header and the rows, scrolled to keep the cursor in
 * view. Segment views take their columns from the configuration; the
 * process view has its own. Columns that do not fit are dropped (the last
 * configured first) so that the name keeps a useful width. */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/units.h"

enum col_id {
    /* Segment columns, in enum config_column order (layout() relies on it). */
    C_NAME,
    C_STATE,
    C_KIND,
    C_SIZE,
    C_ALLOC,
    C_HOLDERS,
    C_AGE,
    C_PID,
    C_GROUP,
    /* Process view. */
    P_PID,
    P_PPID,
    P_STATE,
    P_ROLE,
    P_GROUP,
    P_SHM,
    P_SEGS,
    P_RSS,
    P_CMD,
    NCOLS
};

static const struct coldef {
    const char *title;
    int width; /* 0: takes the rest */
    bool right;
    int sort; /* the sort key it shows, or -1 */
} cols[NCOLS] = {
    [C_NAME] = {"NAME", 0, false, CONFIG_SORT_NAME},
    [C_STATE] = {"STATE", 6, false, CONFIG_SORT_STATE},
    [C_KIND] = {"KIND", 5, false, -1},
    [C_SIZE] = {"SIZE", 8, true, CONFIG_SORT_SIZE},
    [C_ALLOC] = {"ALLOC", 8, true, -1},
    [C_HOLDERS] = {"HOLDERS", 10, false, -1},
    [C_AGE] = {"AGE", 6, true, CONFIG_SORT_AGE},
    [C_PID] = {"PID", 7, true, CONFIG_SORT_PID},
    [C_GROUP] = {"GROUP", 7, true, -1},
    [P_PID] = {"PID", 7, true, CONFIG_SORT_PID},
    [P_PPID] = {"PPID", 7, true, -1},
    [P_STATE] = {"S", 1, false, -1},
    [P_ROLE] = {"ROLE", 13, false, CONFIG_SORT_STATE},
    [P_GROUP] = {"GROUP", 7, true, -1},
    [P_SHM] = {"SHM", 8, true, CONFIG_SORT_SIZE},
    [P_SEGS] = {"SEGS", 4, true, -1},
    [P_RSS] = {"RSS-ANON", 8, true, -1},
    [P_CMD] = {"COMMAND", 0, false, CONFIG_SORT_NAME},
};

#define MIN_FLEX 12

struct layout {
    enum col_id id[NCOLS];
    int x[NCOLS], w[NCOLS];
    size_t n;
};

/* Fits ids (in display order) into COLS, dropping the ids listed in drop
 * order until the flexible column has MIN_FLEX columns. */
static void fit(struct layout *l, const enum col_id *ids, size_t n, const enum col_id *drop,
                size_t ndrop)
{
    bool gone[NCOLS] = {false};
    for (size_t d = 0;; d++) {
        int fixed = 0;
        for (size_t i = 0; i < n; i++)
            if (!gone[ids[i]] && cols[ids[i]].width)
                fixed += cols[ids[i]].width + 1;
        if (COLS - fixed >= MIN_FLEX || d >= ndrop)
            break;
        gone[drop[d]] = true;
    }
    int fixed = 0;
    for (size_t i = 0; i < n; i++)
        if (!gone[ids[i]] && cols[ids[i]].width)
            fixed += cols[ids[i]].width + 1;
    l->n = 0;
    int x = 0;
    for (size_t i = 0; i < n; i++) {
        if (gone[ids[i]])
            continue;
        int w = cols[ids[i]].width ? cols[ids[i]].width : COLS - fixed - 1;
        if (w < 1)
            w = 1;
        l->id[l->n] = ids[i];
        l->x[l->n] = x;
        l->w[l->n++] = w;
        x += w + 1;
    }
}

static void layout(const struct ui *u, struct layout *l)
{
    if (u->view == CONFIG_VIEW_PROCESSES) {
        static const enum col_id ids[] = {P_PID, P_PPID, P_STATE, P_ROLE, P_GROUP,
                                          P_SHM, P_SEGS, P_RSS,   P_CMD};
        static const enum col_id drop[] = {P_PPID, P_GROUP, P_SEGS, P_RSS, P_STATE, P_SHM};
        fit(l, ids, sizeof(ids) / sizeof(ids[0]), drop, sizeof(drop) / sizeof(drop[0]));
        return;
    }
    const struct config_columns *cc = &u->set->cfg.columns;
    enum col_id ids[CONFIG_NCOLUMNS + 1], drop[CONFIG_NCOLUMNS];
    size_t n = 0, nd = 0;
    bool named = false;
    for (size_t i = 0; i < cc->n; i++)
        named = named || cc->col[i] == CONFIG_COL_NAME;
    if (!named)
        ids[n++] = C_NAME;
    for (size_t i = 0; i < cc->n; i++)
        ids[n++] = (enum col_id)cc->col[i];
    for (size_t i = n; i-- > 0;)
        if (ids[i] != C_NAME)
            drop[nd++] = ids[i];
    fit(l, ids, n, drop, nd);
}

/* --- Cells ------------------------------------------------------------------ */

static const struct proc *proc_of(const struct ui *u, const struct mproc *mp)
{
    return &u->snap->scan.procs.items[mp->proc];
}

static enum theme_role proc_role_colour(enum proc_role r)
{
    switch (r) {
    case ROLE_MAIN:
        return THEME_group;
    case ROLE_WORKER:
        return THEME_worker;
    case ROLE_SHM_MANAGER:
        return THEME_shm_manager;
    case ROLE_ZOMBIE:
        return THEME_zombie;
    case ROLE_ORPHAN_WORKER:
        return THEME_orphan_worker;
    default:
        return THEME_normal;
    }
}

static enum theme_role state_colour(enum seg_state s)
{
    switch (s) {
    case SEG_IN_USE:
        return THEME_state_in_use;
    case SEG_HIDDEN:
        return THEME_state_hidden;
    case SEG_ORPHAN:
        return THEME_state_orphan;
    default:
        return THEME_state_unheld;
    }
}

static const char *const section_titles[SEC_COUNT] = {
    [SEC_HOLDERS] = "Other holders",
    [SEC_ORPHANS] = "Orphans: held by nobody, creator dead (safe to remove)",
    [SEC_UNHELD] = "Unheld: held by nobody, owner unknown",
    [SEC_OTHER] = "Other segments",
};

static void name_text(const struct ui *u, const struct row *r, char *dst, size_t n)
{
    char esc[512];
    const struct proc *p;
    switch (r->key.kind) {
    case ROW_GROUP:
        p = r->proc ? proc_of(u, r->proc) : NULL;
        term_escape(esc, sizeof(esc), p ? (p->cmdline ? p->cmdline : p->comm) : "?");
        snprintf(dst, n, "main %d %s", (int)r->group->main_pid, esc);
        break;
    case ROW_PROC:
        p = proc_of(u, r->proc);
        term_escape(esc, sizeof(esc),
                    u->view == CONFIG_VIEW_PROCESSES && p->cmdline ? p->cmdline : p->comm);
        if (u->view == CONFIG_VIEW_PROCESSES)
            snprintf(dst, n, "%s", esc);
        else
            snprintf(dst, n, "%s %d %s", proc_role_name(r->proc->role), (int)p->pid, esc);
        break;
    case ROW_SECTION:
        snprintf(dst, n, "%s", section_titles[r->key.section]);
        break;
    case ROW_SEG:
        term_escape(dst, n, r->seg->name);
        break;
    }
}

static void holders_text(const struct segment *sg, char *dst, size_t n)
{
    if (!sg->nholders)
        snprintf(dst, n, "-");
    else if (sg->nholders > 1)
        snprintf(dst, n, "%d +%zu", (int)sg->holders[0].pid, sg->nholders - 1);
    else if (sg->holders[0].fd >= 0)
        snprintf(dst, n, "%d fd%d", (int)sg->holders[0].pid, sg->holders[0].fd);
    else
        snprintf(dst, n, "%d map", (int)sg->holders[0].pid);
}

/* The text of a cell other than the name, and its colour. */
static void cell(const struct ui *u, const struct row *r, enum col_id c, char *dst, size_t n,
                 enum theme_role *role)
{
    const struct segment *sg = r->seg;
    const struct proc *p = r->proc ? proc_of(u, r->proc) : NULL;
    char a[32];
    dst[0] = '\0';
    bool seg = r->key.kind == ROW_SEG;
    switch (c) {
    case C_STATE:
        if (seg) {
            snprintf(dst, n, "%s", seg_state_name(sg->state));
            *role = state_colour(sg->state);
        } else if (r->key.kind == ROW_GROUP) {
            snprintf(dst, n, "group");
        } else if (p) {
            snprintf(dst, n, "%c", p->state);
        }
        break;
    case C_KIND:
        if (seg)
            snprintf(dst, n, "%s", seg_kind_name(sg->kind));
        break;
    case C_SIZE:
        snprintf(dst, n, "%s", fmt_size(a, sizeof(a), r->size));
        break;
    case C_ALLOC:
        snprintf(dst, n, "%s%s", seg && !sg->alloc_known ? "~" : "",
                 fmt_size(a, sizeof(a), r->alloc));
        break;
    case C_HOLDERS:
        if (seg)
            holders_text(sg, dst, n);
        else if (r->key.kind == ROW_GROUP)
            snprintf(dst, n, "%zuw %zum", r->group->nworkers, r->group->nmanagers);
        else
            snprintf(dst, n, "%zu segs", r->count);
        break;
    case C_AGE:
        if (seg && sg->mtime > 0)
            snprintf(dst, n, "%s",
                     fmt_duration(a, sizeof(a), (double)(u->snap->model.now - sg->mtime)));
        break;
    case C_PID:
        if (seg && sg->has_creator)
            snprintf(dst, n, sg->creator_alive ? "%d" : "(%d)", (int)sg->creator_pid);
        else if (p)
            snprintf(dst, n, "%d", (int)p->pid);
        break;
    case C_GROUP:
        if (seg && sg->group)
            snprintf(dst, n, "%d", (int)sg->group);
        else if (r->group)
            snprintf(dst, n, "%d", (int)r->group->main_pid);
        break;
    case P_PID:
        snprintf(dst, n, "%d", (int)p->pid);
        break;
    case P_PPID:
        snprintf(dst, n, "%d", (int)p->ppid);
        break;
    case P_STATE:
        snprintf(dst, n, "%c", p->state);
        break;
    case P_ROLE:
        snprintf(dst, n, "%s", proc_role_name(r->proc->role));
        break;
    case P_GROUP:
        snprintf(dst, n, r->proc->group ? "%d" : "-", (int)r->proc->group);
        break;
    case P_SHM:
        snprintf(dst, n, "%s", fmt_size(a, sizeof(a), r->proc->shm_bytes));
        break;
    case P_SEGS:
        snprintf(dst, n, "%zu", r->proc->nsegments);
        break;
    case P_RSS:
        snprintf(dst, n, "%s", fmt_size(a, sizeof(a), p->rss_anon));
        break;
    default:
        break;
    }
}

/* --- Drawing ------------------------------------------------------------------ */

static enum theme_role row_colour(const struct row *r)
{
    switch (r->key.kind) {
    case ROW_GROUP:
        return THEME_group;
    case ROW_SECTION:
        return r->key.section == SEC_ORPHANS ? THEME_state_orphan : THEME_group;
    case ROW_PROC:
        return proc_role_colour(r->proc->role);
    default:
        return THEME_normal;
    }
}

/* Tree lines and the expand marker before a name. */
static int draw_prefix(const struct row *r, int y, int x, int w, attr_t a)
{
    const struct glyphs *g = term_glyphs();
    int used = 0;
    for (unsigned d = 1; d <= r->depth && used < w; d++) {
        const char *s = d < r->depth ? ((r->lastmask >> d) & 1 ? g->blank : g->pipe)
                                     : ((r->lastmask >> d) & 1 ? g->last : g->branch);
        used += term_put(y, x + used, w - used, s, a, false);
    }
    if (r->expandable && used + 2 <= w) {
        used += term_put(y, x + used, 1, r->expanded ? g->open : g->closed, a, false);
        used += term_put(y, x + used, 1, " ", a, false);
    }
    return used;
}

static void draw_row(const struct ui *u, const struct layout *l, const struct row *r, int y,
                     bool selected)
{
    bool marked = keyset_has(&u->marked, &r->key);
    enum theme_role base = selected ? THEME_selected : marked ? THEME_marked : row_colour(r);
    attr_t a = term_attr(base);
    term_fill(y, 0, COLS, a);
    char text[1024];
    for (size_t i = 0; i < l->n; i++) {
        enum col_id c = l->id[i];
        int x = l->x[i], w = l->w[i];
        if (c == C_NAME || c == P_CMD) {
            int used = 0;
            if (u->view == CONFIG_VIEW_TREE)
                used = draw_prefix(r, y, x, w, selected || marked ? a : term_attr(THEME_muted));
            if (marked && used < w)
                used += term_put(y, x + used, 1, term_glyphs()->mark, a, false);
            name_text(u, r, text, sizeof(text));
            term_put(y, x + used, w - used, text, a, true);
            continue;
        }
        enum theme_role role = base;
        cell(u, r, c, text, sizeof(text), &role);
        if (selected || marked)
            role = base;
        int tw = term_width(text);
        int pad = cols[c].right && tw < w ? w - tw : 0;
        term_put(y, x + pad, w - pad, text, term_attr(role), true);
    }
}

static void draw_header(const struct ui *u, const struct layout *l, int y)
{
    attr_t a = term_attr(THEME_header);
    term_fill(y, 0, COLS, a);
    for (size_t i = 0; i < l->n; i++) {
        const struct coldef *c = &cols[l->id[i]];
        char t[32];
        bool sorted = c->sort == u->sort;
        snprintf(t, sizeof(t), "%s%s", c->title,
                 sorted ? (u->reverse ? term_glyphs()->up : term_glyphs()->down) : "");
        int tw = term_width(t);
        int pad = c->right && tw < l->w[i] ? l->w[i] - tw : 0;
        term_put(y, l->x[i] + pad, l->w[i] - pad, t, a, false);
    }
}

void list_draw(struct ui *u, int y, int h)
{
    u->list_y = y + 1;
    u->list_h = h - 1;
    if (h < 1)
        return;
    struct layout l;
    layout(u, &l);
    draw_header(u, &l, y);
    int rows = h - 1;
    if (rows < 1)
        return;
    if (!u->nrows) {
        const char *why = !u->snap       ? "waiting for the first scan..."
                          : u->filter[0] ? "nothing matches the filter (Esc clears it)"
                          : u->view == CONFIG_VIEW_PROCESSES ? "no process holds shared memory"
                                                             : "no segments";
        term_put(y + 1, 1, COLS - 1, why, term_attr(THEME_muted), true);
        return;
    }
    if (u->cursor < u->top)
        u->top = u->cursor;
    if (u->cursor >= u->top + (size_t)rows)
        u->top = u->cursor - (size_t)rows + 1;
    if (u->nrows > (size_t)rows && u->top > u->nrows - (size_t)rows)
        u->top = u->nrows - (size_t)rows;
    if (u->nrows <= (size_t)rows)
        u->top = 0;
    for (int i = 0; i < rows && u->top + (size_t)i < u->nrows; i++) {
        size_t k = u->top + (size_t)i;
        draw_row(u, &l, &u->rows[k], y + 1 + i, k == u->cursor);
    }
}

long list_row_at(const struct ui *u, int y)
{
    if (y < u->list_y || y >= u->list_y + u->list_h)
        return -1;
    size_t k = u->top + (size_t)(y - u->list_y);
    return k < u->nrows ? (long)k : -1;
}
