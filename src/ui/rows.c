/* The rows of the list, rebuilt from the model whenever the scan, view,
 * sort, filter or a collapsed branch changes.
 *
 * Tree: each DataLoader group (its main) -> the main's own segments, then
 * its workers and shm managers -> their segments; then other holders ->
 * their segments; then orphans, unheld segments and anything left. A
 * segment sits under its creator when the creator is in the group, else
 * under its first holder there, else under the group's main. A filter
 * keeps the rows that match, their ancestors and their descendants.
 *
 * The node view (--all) puts one more level on top: each container (the
 * host first when its mount is the most critical), most critical first,
 * and below it the same tree made of its own groups, processes and the
 * segments of its mounts. The own view of an --all scan shows the host's
 * part alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "ui/ui_priv.h"
#include "util/xalloc.h"

static bool row_key_eq(const struct row_key *a, const struct row_key *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case ROW_SEG:
        return a->dev == b->dev && a->ino == b->ino;
    case ROW_SECTION:
        return a->section == b->section && a->ctr == b->ctr;
    case ROW_CTR:
        return a->ctr == b->ctr;
    default:
        return a->pid == b->pid;
    }
}

const struct segment *row_key_seg(const struct model *m, const struct row_key *k)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (m->segs[i].dev == k->dev && m->segs[i].ino == k->ino)
            return &m->segs[i];
    return NULL;
}

bool keyset_has(const struct keyset *s, const struct row_key *k)
{
    for (size_t i = 0; i < s->n; i++)
        if (row_key_eq(&s->items[i], k))
            return true;
    return false;
}

void keyset_toggle(struct keyset *s, const struct row_key *k)
{
    for (size_t i = 0; i < s->n; i++)
        if (row_key_eq(&s->items[i], k)) {
            s->items[i] = s->items[--s->n];
            return;
        }
    *VEC_PUSH(s->items, s->n, s->cap) = *k;
}

void keyset_clear(struct keyset *s)
{
    free(s->items);
    memset(s, 0, sizeof(*s));
}

/* Whether the item a row key names is in the snapshot. */
static bool key_exists(const struct snap *sn, const struct row_key *k)
{
    const struct model *m = &sn->model;
    switch (k->kind) {
    case ROW_SEG:
        return row_key_seg(m, k) != NULL;
    case ROW_PROC:
        return model_find_proc(m, k->pid) != NULL;
    case ROW_GROUP:
        return model_find_group(m, k->pid) != NULL;
    default: /* a section or a container: never marked (cmd_mark) */
        return false;
    }
}

void rows_prune_marks(struct ui *u)
{
    struct keyset *s = &u->marked;
    size_t kept = 0;
    for (size_t i = 0; i < s->n; i++)
        if (key_exists(u->snap, &s->items[i]))
            s->items[kept++] = s->items[i];
    s->n = kept;
}

/* --- Matching ---------------------------------------------------------- */

static bool has(const char *hay, const char *needle)
{
    return hay && strcasestr(hay, needle) != NULL;
}

static bool has_pid(pid_t pid, const char *needle)
{
    char b[16];
    snprintf(b, sizeof(b), "%d", (int)pid);
    return strstr(b, needle) != NULL;
}

static bool proc_matches(const struct proc *p, const char *needle)
{
    return has_pid(p->pid, needle) || has(p->comm, needle) || has(p->cmdline, needle);
}

/* Whether row r matches the filter text needle. */
static bool rows_match(const struct ui *u, const struct row *r, const char *needle)
{
    /* "kind:NAME" keeps the segments of one kind (and their branches). */
    if (strncmp(needle, "kind:", 5) == 0)
        return r->key.kind == ROW_SEG && strcmp(seg_kind_name(r->seg->kind), needle + 5) == 0;
    switch (r->key.kind) {
    case ROW_SEG:
        return has(r->seg->name, needle) || has(seg_state_name(r->seg->state), needle) ||
               (r->seg->has_creator && has_pid(r->seg->creator_pid, needle));
    case ROW_PROC:
        return proc_matches(model_proc(&u->snap->model, r->proc), needle) ||
               has(proc_role_name(r->proc->role), needle);
    case ROW_GROUP:
        return proc_matches(model_group_main(&u->snap->model, r->group), needle);
    case ROW_CTR: {
        char label[256];
        size_t ctr = ui_key_ctr(&u->snap->model, &r->key);
        ui_ctr_label(&u->snap->model, ctr, label, sizeof(label));
        if (has(label, needle))
            return true;
        const struct node_ctr *c = model_ctr(&u->snap->model, ctr);
        if (!c)
            return false;
        const struct container_info *ci = &c->info;
        return has(ci->id, needle) || has(ci->name, needle) || has(ci->pod, needle) ||
               has(ci->namespace, needle) || has(ci->hostname, needle);
    }
    default:
        return false;
    }
}

/* --- Building ------------------------------------------------------------ */

struct build {
    struct ui *u;
    const struct model *m;
    struct row *rows;
    size_t n, cap;
    struct owner {
        size_t *segs;
        size_t n, cap;
    } * owners; /* one per m->procs item, then one per section (per container
                 * slot in the node view: host, then each container) */
    unsigned base; /* the depth of the tree's top (1 under a container row) */
    size_t ctr;    /* the container being built, or UI_CTR_ANY */
};

/* The owner slot of the first section of container ctr's tree. */
static size_t section_slot(const struct model *m, size_t ctr)
{
    return m->nprocs + ui_ctr_slot(ctr) * SEC_COUNT;
}

static struct ui *sort_ctx;

static int cmp_seg_idx(const void *a, const void *b)
{
    const struct model *m = &sort_ctx->snap->model;
    return sort_segments(sort_ctx, &m->segs[*(const size_t *)a], &m->segs[*(const size_t *)b]);
}

static int cmp_proc_idx(const void *a, const void *b)
{
    const struct model *m = &sort_ctx->snap->model;
    return sort_procs(sort_ctx, &m->procs[*(const size_t *)a], &m->procs[*(const size_t *)b]);
}

static int cmp_group_idx(const void *a, const void *b)
{
    const struct model *m = &sort_ctx->snap->model;
    return sort_groups(sort_ctx, &m->groups[*(const size_t *)a], &m->groups[*(const size_t *)b]);
}

static size_t *sorted_indices(struct ui *u, size_t n, int (*cmp)(const void *, const void *))
{
    size_t *idx = xmalloc(sizeof(*idx) * n);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    sort_ctx = u;
    qsort(idx, n, sizeof(*idx), cmp);
    return idx;
}

static size_t proc_slot(const struct model *m, const struct mproc *mp)
{
    return (size_t)(mp - m->procs);
}

/* Which owner list a segment goes to (see the top of this file); node:
 * sections per container. */
static size_t place(const struct model *m, const struct segment *sg, bool node)
{
    size_t sec = section_slot(m, node ? node_owner_index(model_node(m), sg->mount) : UI_CTR_ANY);
    if (sg->group) {
        const struct mproc *c =
            sg->has_creator && sg->creator_alive ? model_find_proc(m, sg->creator_pid) : NULL;
        if (c && c->group == sg->group)
            return proc_slot(m, c);
        for (size_t h = 0; h < sg->nholders; h++) {
            const struct mproc *hp = model_find_proc(m, sg->holders[h].pid);
            if (hp && hp->group == sg->group && hp->role != ROLE_MAIN)
                return proc_slot(m, hp);
        }
        const struct mproc *main = model_find_proc(m, sg->group);
        if (main)
            return proc_slot(m, main);
    }
    if (sg->state == SEG_ORPHAN)
        return sec + SEC_ORPHANS;
    if (sg->state == SEG_UNHELD)
        return sec + SEC_UNHELD;
    for (size_t h = 0; h < sg->nholders; h++) {
        const struct mproc *hp = model_find_proc(m, sg->holders[h].pid);
        if (hp)
            return proc_slot(m, hp);
    }
    return sec + SEC_OTHER;
}

static struct row *emit(struct build *b, enum row_kind kind, unsigned depth)
{
    struct row *r = VEC_PUSH(b->rows, b->n, b->cap);
    r->key.kind = kind;
    r->key.ctr = ui_ctr_identity(b->m, b->ctr);
    r->depth = depth + b->base;
    return r;
}

static void emit_seg(struct build *b, size_t seg, unsigned depth)
{
    const struct segment *sg = &b->m->segs[seg];
    struct row *r = emit(b, ROW_SEG, depth);
    r->seg = sg;
    r->key.dev = sg->dev;
    r->key.ino = sg->ino;
    r->size = sg->size;
    r->alloc = sg->alloc;
}

/* The segments of an owner list as rows at depth below row r, their totals
 * added to r's first: adding rows may move r. */
static void emit_segs(struct build *b, struct row *r, size_t owner, unsigned depth)
{
    const struct owner *o = &b->owners[owner];
    for (size_t i = 0; i < o->n; i++) {
        r->count++;
        r->size += b->m->segs[o->segs[i]].size;
        r->alloc += b->m->segs[o->segs[i]].alloc;
    }
    for (size_t i = 0; i < o->n; i++)
        emit_seg(b, o->segs[i], depth);
}

/* A parent row's totals take in a child row's. */
static void add_row_totals(struct row *to, const struct row *from)
{
    to->count += from->count;
    to->size += from->size;
    to->alloc += from->alloc;
}

/* A process row and its segments under the row at index parent, its totals
 * added to the parent's. */
static void emit_child_proc(struct build *b, size_t parent, size_t slot)
{
    size_t child = b->n;
    struct row *r = emit(b, ROW_PROC, 1);
    r->proc = &b->m->procs[slot];
    r->key.pid = model_proc(b->m, r->proc)->pid;
    r->expandable = b->owners[slot].n > 0;
    emit_segs(b, r, slot, 2);
    add_row_totals(&b->rows[parent], &b->rows[child]);
}

static void build_tree(struct build *b, const size_t *procs_sorted)
{
    const struct model *m = b->m;
    size_t *groups = sorted_indices(b->u, m->ngroups, cmp_group_idx);
    for (size_t gi = 0; gi < m->ngroups; gi++) {
        const struct group *g = &m->groups[groups[gi]];
        if (!ui_ctr_has(b->ctr, g->ctr))
            continue;
        const struct mproc *main = model_find_proc(m, g->main_pid);
        struct row *r = emit(b, ROW_GROUP, 0);
        size_t at = b->n - 1;
        r->group = g;
        r->proc = main;
        r->key.pid = g->main_pid;
        r->expandable = true;
        if (main)
            emit_segs(b, r, proc_slot(m, main), 1);
        for (size_t i = 0; i < m->nprocs; i++) {
            const struct mproc *mp = &m->procs[procs_sorted[i]];
            if (mp->group != g->main_pid || mp == main)
                continue;
            emit_child_proc(b, at, procs_sorted[i]);
        }
    }
    free(groups);

    size_t sec = section_slot(m, b->ctr), head = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct mproc *mp = &m->procs[procs_sorted[i]];
        if (mp->group || (!b->owners[procs_sorted[i]].n && mp->role != ROLE_ORPHAN_WORKER) ||
            !ui_ctr_has(b->ctr, mp->ctr))
            continue;
        if (!head) {
            struct row *r = emit(b, ROW_SECTION, 0);
            r->key.section = SEC_HOLDERS;
            r->expandable = true;
            head = b->n;
        }
        emit_child_proc(b, head - 1, procs_sorted[i]);
    }
    for (int s = SEC_ORPHANS; s < SEC_COUNT; s++) {
        if (!b->owners[sec + (size_t)s].n)
            continue;
        struct row *r = emit(b, ROW_SECTION, 0);
        r->key.section = s;
        r->expandable = true;
        emit_segs(b, r, sec + (size_t)s, 1);
    }
}

/* The node view's tree: each container's row, its own tree below it. */
static void build_node(struct build *b, const size_t *procs_sorted)
{
    const struct scan_node *nd = model_node(b->m);
    size_t *order = xmalloc(sizeof(*order) * (nd->nctrs + 1));
    size_t n = ui_ctr_order(b->u, order);
    for (size_t k = 0; k < n; k++) {
        b->ctr = order[k];
        b->base = 0;
        struct row *r = emit(b, ROW_CTR, 0);
        size_t at = b->n - 1;
        r->expandable = true;
        b->base = 1;
        build_tree(b, procs_sorted);
        for (size_t i = at + 1; i < b->n; i++) /* the totals of its top rows */
            if (b->rows[i].depth == 1)
                add_row_totals(&b->rows[at], &b->rows[i]);
    }
    free(order);
}

static void build_flat(struct build *b, const size_t *segs_sorted)
{
    for (size_t i = 0; i < b->m->nsegs; i++)
        if (ui_seg_shown(b->u, &b->m->segs[segs_sorted[i]]))
            emit_seg(b, segs_sorted[i], 0);
}

static void build_procs(struct build *b, const size_t *procs_sorted)
{
    for (size_t i = 0; i < b->m->nprocs; i++) {
        if (!ui_ctr_has(b->ctr, b->m->procs[procs_sorted[i]].ctr))
            continue;
        struct row *r = emit(b, ROW_PROC, 0);
        r->proc = &b->m->procs[procs_sorted[i]];
        r->key.pid = model_proc(b->m, r->proc)->pid;
        r->count = r->proc->nsegments;
        r->alloc = r->proc->shm_bytes;
    }
}

/* --- Filter, collapse and tree lines -------------------------------------- */

#define MAXDEPTH 8

/* Keeps the built rows that are shown, in place (a row only moves to an
 * earlier place, over one already read), and makes them the list's rows:
 * the list is not a second copy of a tree of up to 100,000 rows. */
static void select_visible(struct ui *u, struct build *b)
{
    size_t n = b->n;
    bool filtering = u->filter[0] != '\0';
    bool *keep = xcalloc(n, sizeof(*keep)), *match = xcalloc(n, sizeof(*match));
    for (size_t i = 0; i < n; i++) /* without a filter every row matches */
        match[i] = !filtering || rows_match(u, &b->rows[i], u->filter);
    bool acc[MAXDEPTH + 2] = {false}, anc[MAXDEPTH + 1] = {false};
    for (size_t i = n; i-- > 0;) { /* a matching descendant keeps the row */
        unsigned d = b->rows[i].depth;
        keep[i] = match[i] || acc[d + 1];
        acc[d + 1] = false;
        acc[d] = acc[d] || keep[i];
    }
    unsigned hide_below = MAXDEPTH + 1;
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        struct row *r = &b->rows[i];
        bool from_above = r->depth > 0 && anc[r->depth - 1]; /* so does a matching ancestor */
        anc[r->depth] = match[i] || from_above;
        if (r->depth >= hide_below)
            continue;
        hide_below = MAXDEPTH + 1;
        if (!keep[i] && !from_above)
            continue;
        r->expanded = r->expandable && (filtering || !keyset_has(&u->collapsed, &r->key));
        if (r->expandable && !r->expanded)
            hide_below = r->depth + 1;
        b->rows[shown++] = *r;
    }
    free(match);
    free(keep);
    u->rows = b->rows;
    u->nrows = shown;
    b->rows = NULL;
    /* Which of a row and its ancestors are the last of their siblings, for
     * the tree lines: later[k], whether a row at depth k follows before any
     * shallower one. */
    bool later[MAXDEPTH + 1] = {false};
    for (size_t i = u->nrows; i-- > 0;) {
        unsigned d = u->rows[i].depth;
        for (unsigned k = 0; k <= d; k++)
            if (!later[k])
                u->rows[i].lastmask |= 1u << k;
        later[d] = true;
        for (unsigned k = d + 1; k <= MAXDEPTH; k++)
            later[k] = false;
    }
}

void rows_rebuild(struct ui *u)
{
    if (u->nrows && u->cursor < u->nrows) {
        u->cursor_key = u->rows[u->cursor].key;
        u->have_cursor_key = true;
    }
    /* The old rows point into the snapshot being replaced: they go before
     * the new ones are built. */
    free(u->rows);
    u->rows = NULL;
    u->nrows = 0;
    if (!u->snap)
        return;
    const struct model *m = &u->snap->model;
    struct build b = {.u = u, .m = m, .ctr = ui_own_only(u) ? NODE_HOST : UI_CTR_ANY};
    bool node = ui_node(u);
    size_t slots = node ? model_node(m)->nctrs + 1 : 1; /* the host's, then each container's */
    size_t nowners = m->nprocs + SEC_COUNT * slots;
    /* The rows at most, allocated once rather than grown by doubling (a
     * copy at each step): a row per segment, process and group, and per
     * slot its container's row and section heads. */
    b.cap = m->nsegs + m->nprocs + m->ngroups + (SEC_COUNT + 1) * slots;
    b.rows = xmalloc(b.cap * sizeof(*b.rows));
    /* Each view sorts only what it shows; only the tree places segments
     * under their owners. */
    bool tree = u->view == CONFIG_VIEW_TREE, flat = u->view == CONFIG_VIEW_FLAT;
    size_t *segs = tree || flat ? sorted_indices(u, m->nsegs, cmp_seg_idx) : NULL;
    size_t *procs = flat ? NULL : sorted_indices(u, m->nprocs, cmp_proc_idx);
    if (tree) {
        b.owners = xcalloc(nowners, sizeof(*b.owners));
        for (size_t i = 0; i < m->nsegs; i++) {
            if (!ui_seg_shown(u, &m->segs[segs[i]]))
                continue;
            struct owner *o = &b.owners[place(m, &m->segs[segs[i]], node)];
            *VEC_PUSH(o->segs, o->n, o->cap) = segs[i];
        }
        if (node)
            build_node(&b, procs);
        else
            build_tree(&b, procs);
    } else if (flat) {
        build_flat(&b, segs);
    } else {
        build_procs(&b, procs);
    }
    select_visible(u, &b);
    for (size_t i = 0; b.owners && i < nowners; i++)
        free(b.owners[i].segs);
    free(b.owners);
    free(segs);
    free(procs);

    size_t cur = u->cursor; /* ui_cursor_to brings it within the rows */
    if (u->have_cursor_key)
        for (size_t i = 0; i < u->nrows; i++)
            if (row_key_eq(&u->rows[i].key, &u->cursor_key)) {
                cur = i;
                break;
            }
    u->cursor = 0; /* where it stays when there is no row */
    ui_cursor_to(u, cur);
}
