/* The list: a column header and the rows, scrolled to keep the cursor in
 * view. Segment views take their columns from the configuration; the
 * process view has its own. Columns that do not fit are dropped (the last
 * configured first) so that the name keeps a useful width. */
#include <stdio.h>

#include "config/config.h"
#include "ui/cells.h"
#include "ui/term.h"
#include "ui/ui_priv.h"

#define MIN_FLEX 12

struct layout {
    enum col_id id[NCOLS];
    int x[NCOLS], w[NCOLS];
    size_t n;
};

/* The kind column gives up its long names ("deepspeed") before the name
 * column falls below this: kinds are then cut to 5 columns. */
#define KIND_ROOMY_FLEX 32
#define KIND_NARROW 5

/* Columns taken by the fixed-width columns of ids still shown, separators included. */
static int fixed_width(const enum col_id *ids, size_t n, const bool *gone, bool narrow_kind)
{
    int fixed = 0;
    for (size_t i = 0; i < n; i++)
        if (!gone[ids[i]] && cols[ids[i]].width)
            fixed += (ids[i] == C_KIND && narrow_kind ? KIND_NARROW : cols[ids[i]].width) + 1;
    return fixed;
}

/* Fits ids (in display order) into COLS, dropping the ids listed in drop
 * order until the flexible column has MIN_FLEX columns. */
static void fit(struct layout *l, const enum col_id *ids, size_t n, const enum col_id *drop,
                size_t ndrop)
{
    bool gone[NCOLS] = {false};
    bool narrow = COLS - fixed_width(ids, n, gone, false) < KIND_ROOMY_FLEX;
    int fixed = fixed_width(ids, n, gone, narrow);
    for (size_t d = 0; COLS - fixed < MIN_FLEX && d < ndrop; d++) {
        gone[drop[d]] = true;
        fixed = fixed_width(ids, n, gone, narrow);
    }
    l->n = 0;
    int x = 0;
    for (size_t i = 0; i < n; i++) {
        if (gone[ids[i]])
            continue;
        int w = cols[ids[i]].width ? cols[ids[i]].width : COLS - fixed - 1;
        if (ids[i] == C_KIND && narrow)
            w = KIND_NARROW;
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

bool list_sort_shown(const struct ui *u)
{
    struct layout l;
    layout(u, &l);
    for (size_t i = 0; i < l.n; i++)
        if (cols[l.id[i]].sort == (int)u->sort)
            return true;
    return false;
}

/* --- Cells ------------------------------------------------------------------ */

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
    enum theme_role base = selected ? THEME_selected : marked ? THEME_marked : cell_row_colour(r);
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
            cell_name(u, r, text, sizeof(text));
            term_put(y, x + used, w - used, text, a, true);
            continue;
        }
        enum theme_role role = base;
        cell_text(u, r, c, text, sizeof(text), &role);
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
        snprintf(t, sizeof(t), "%s%s", c->title, c->sort == u->sort ? sort_arrow(u) : "");
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
    size_t most = u->nrows > (size_t)rows ? u->nrows - (size_t)rows : 0; /* no blank tail */
    if (u->top > most)
        u->top = most;
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
