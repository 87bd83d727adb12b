/* The node view (--all, doc/shmwatch.1 "THE NODE VIEW"): which container a
 * mount, a segment, a process or a row belongs to, how a container is
 * labelled, the order of the mounts (most critical first) and which budget
 * the header and the budget page show. The own view of an --all scan is the
 * host's part alone: what shmwatch without --all shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/buf.h"
#include "util/container_id.h"
#include "util/ctrref.h"
#include "util/xalloc.h"

bool ui_node(const struct ui *u)
{
    return u->node && u->snap && model_node(&u->snap->model)->all;
}

bool ui_own_only(const struct ui *u)
{
    return !u->node && u->snap && model_node(&u->snap->model)->all;
}

bool ui_seg_shown(const struct ui *u, const struct segment *sg)
{
    return !ui_own_only(u) || model_mount_seen_by(&u->snap->model, sg->mount, NODE_HOST);
}

bool ui_ctr_has(size_t want, size_t ctr)
{
    return want == UI_CTR_ANY || want == ctr;
}

uint64_t ui_ctr_identity(const struct model *m, size_t ctr)
{
    const struct node_ctr *c = model_ctr(m, ctr);
    if (!c)
        return 0;
    uint64_t h;
    if (c->info.id) {
        const char *ns = c->info.containerd_namespace ? c->info.containerd_namespace : "";
        h = str_hash(STR_HASH_START, c->info.id, strlen(c->info.id));
        h = str_hash(str_hash(h, "/", 1), ns, strlen(ns));
    } else {
        h = c->mntns ? (uint64_t)c->mntns : (uint64_t)c->pid << 32;
    }
    return h ? h : 1;
}

size_t ui_key_ctr(const struct model *m, const struct row_key *k)
{
    if (!k->ctr)
        return NODE_HOST;
    const struct scan_node *nd = model_node(m);
    for (size_t c = 0; c < nd->nctrs; c++)
        if (ui_ctr_identity(m, c) == k->ctr)
            return c;
    return UI_CTR_ANY;
}

size_t ui_ctr_slot(size_t ctr)
{
    return ctr == NODE_HOST || ctr == UI_CTR_ANY ? 0 : ctr + 1;
}

void ui_ctr_label(const struct model *m, size_t ctr, char *dst, size_t n)
{
    const struct node_ctr *c = model_ctr(m, ctr);
    if (!c) {
        snprintf(dst, n, "host");
        return;
    }
    const struct container_info *ci = &c->info;
    /* Its name or pod; else its runtime and id (a hostname may be the
     * host's, seen through a container that shares its /etc/hostname);
     * else its hostname; else its mount namespace. container_label puts a
     * containerd namespace first where the id is one a person chose. */
    const char *name = ci->name ? ci->name : ci->pod;
    char esc[128];
    if (name || ci->id) {
        char *label = container_label(ci->containerd_namespace, name, ci->id);
        term_escape(esc, sizeof(esc), label);
        free(label);
        const char *runtime = container_runtime_name(ci->runtime); /* NULL: none */
        if (name)
            snprintf(dst, n, "%s", esc);
        else
            snprintf(dst, n, "%s %s", runtime ? runtime : "container", esc);
    } else if (ci->hostname) {
        term_escape(esc, sizeof(esc), ci->hostname);
        snprintf(dst, n, "%s", esc);
    } else {
        snprintf(dst, n, "mntns %lu (pid %d)", c->mntns, (int)c->pid);
    }
}

void ui_mount_label(const struct ui *u, size_t mount, char *dst, size_t n)
{
    const struct scan_node *nd = model_node(&u->snap->model);
    const struct shm_mount *mt = model_mount(&u->snap->model, mount);
    char who[160], path[96];
    size_t owner = node_owner_index(nd, mount);
    ui_ctr_label(&u->snap->model, owner, who, sizeof(who));
    term_escape(path, sizeof(path), mt->path);
    size_t others = 0;
    if (mount < nd->nmounts)
        others = nd->mounts[mount].nctrs - (owner != NODE_HOST && nd->mounts[mount].nctrs > 0);
    if (others)
        snprintf(dst, n, "%s +%zu %s", who, others, path);
    else
        snprintf(dst, n, "%s %s", who, path);
}

/* How critical mount i is: its owner's verdict first, then its fill. */
static double criticality(const struct model *m, size_t i)
{
    const struct shm_mount *mt = model_mount(m, i);
    return (double)model_mount_budget(m, i)->verdict * 1000.0 + mount_used_pct(mt);
}

static const struct model *order_model;

static int cmp_critical(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double cx = criticality(order_model, x), cy = criticality(order_model, y);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

size_t ui_mount_order(const struct ui *u, size_t *order)
{
    const struct model *m = &u->snap->model;
    size_t n = 0;
    for (size_t i = 0; i < model_nmounts(m); i++)
        if (!ui_own_only(u) || model_mount_seen_by(m, i, NODE_HOST))
            order[n++] = i;
    if (ui_node(u)) {
        order_model = m;
        qsort(order, n, sizeof(*order), cmp_critical);
    }
    return n;
}

size_t ui_ctr_order(const struct ui *u, size_t *order)
{
    const struct model *m = &u->snap->model;
    const struct scan_node *nd = model_node(m);
    size_t nm = model_nmounts(m), n = 0;
    size_t *mounts = xmalloc(sizeof(*mounts) * nm);
    nm = ui_mount_order(u, mounts);
    bool *seen = xcalloc(nd->nctrs + 1, sizeof(*seen)); /* by ui_ctr_slot */
    for (size_t k = 0; k < nm; k++) { /* each container where its most critical mount is */
        size_t c = node_owner_index(nd, mounts[k]);
        if ((c == NODE_HOST || c < nd->nctrs) && !seen[ui_ctr_slot(c)]) {
            seen[ui_ctr_slot(c)] = true;
            order[n++] = c;
        }
    }
    if (!seen[ui_ctr_slot(NODE_HOST)])
        order[n++] = NODE_HOST; /* the host's processes, even with no mount of its own */
    for (size_t c = 0; c < nd->nctrs; c++)
        if (!seen[ui_ctr_slot(c)])
            order[n++] = c;
    free(seen);
    free(mounts);
    return n;
}

size_t ui_selected_ctr(const struct ui *u)
{
    const struct row *r = ui_node(u) ? ui_current(u) : NULL;
    if (!r)
        return NODE_HOST;
    switch (r->key.kind) {
    case ROW_CTR:
    case ROW_SECTION:
        return ui_key_ctr(&u->snap->model, &r->key);
    case ROW_SEG:
        return node_owner_index(model_node(&u->snap->model), r->seg->mount);
    case ROW_GROUP:
        return r->group->ctr;
    default:
        return r->proc ? r->proc->ctr : NODE_HOST;
    }
}

const struct budget *ui_ctr_budget(const struct ui *u, size_t ctr, size_t *mount)
{
    const struct model *m = &u->snap->model;
    for (size_t i = 0; i < model_nmounts(m); i++)
        if (node_owner_index(model_node(m), i) == ctr) {
            *mount = i;
            return ctr == NODE_HOST ? &m->budget : model_mount_budget(m, i);
        }
    *mount = SIZE_MAX;
    return &m->budget;
}

const struct budget *ui_budget(const struct ui *u, size_t *mount)
{
    const struct model *m = &u->snap->model;
    if (!ui_node(u)) {
        *mount = model_nmounts(m) ? 0 : SIZE_MAX;
        return &m->budget;
    }
    return ui_ctr_budget(u, ui_selected_ctr(u), mount);
}

const struct cgroup_info *ui_cgroup(const struct ui *u)
{
    const struct node_ctr *c = model_ctr(&u->snap->model, ui_selected_ctr(u));
    return c ? &c->cgroup : model_cgroup(&u->snap->model);
}
