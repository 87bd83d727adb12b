#include "ui/cells.h"

#include <stdio.h>

#include "config/config.h"
#include "ui/term.h"
#include "util/units.h"

const struct coldef cols[NCOLS] = {
    [C_NAME] = {"NAME", 0, false, CONFIG_SORT_NAME},
    [C_STATE] = {"STATE", 6, false, CONFIG_SORT_STATE},
    [C_KIND] = {"KIND", 9, false, -1}, /* "deepspeed" */
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

void cell_name(const struct ui *u, const struct row *r, char *dst, size_t n)
{
    char esc[512];
    const struct proc *p;
    switch (r->key.kind) {
    case ROW_GROUP:
        p = r->proc ? model_proc(&u->snap->model, r->proc) : NULL;
        term_escape(esc, sizeof(esc), p ? (p->cmdline ? p->cmdline : p->comm) : "?");
        snprintf(dst, n, "main %d %s", (int)r->group->main_pid, esc);
        break;
    case ROW_PROC:
        p = model_proc(&u->snap->model, r->proc);
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
    case ROW_CTR: {
        size_t ctr = ui_key_ctr(&u->snap->model, &r->key);
        ui_ctr_label(&u->snap->model, ctr, esc, sizeof(esc));
        if (ctr == NODE_HOST)
            snprintf(dst, n, "host (not in a container)");
        else
            snprintf(dst, n, "container %s", esc);
        break;
    }
    }
}

static void holders_text(const struct segment *sg, char *dst, size_t n)
{
    if (!sg->nholders)
        snprintf(dst, n, "-");
    else if (sg->nholders > 1)
        snprintf(dst, n, "%d +%u", (int)sg->holders[0].pid, (unsigned)(sg->nholders - 1));
    else if (sg->holders[0].fd >= 0)
        snprintf(dst, n, "%d fd%d", (int)sg->holders[0].pid, sg->holders[0].fd);
    else
        snprintf(dst, n, "%d map", (int)sg->holders[0].pid);
}

void cell_text(const struct ui *u, const struct row *r, enum col_id c, char *dst, size_t n,
               enum theme_role *role)
{
    const struct segment *sg = r->seg;
    const struct proc *p = r->proc ? model_proc(&u->snap->model, r->proc) : NULL;
    char a[32];
    dst[0] = '\0';
    bool seg = r->key.kind == ROW_SEG;
    switch (c) {
    case C_STATE:
    case P_STATE:
        if (seg) {
            snprintf(dst, n, "%s", seg_state_name(sg->state));
            *role = state_colour(sg->state);
        } else if (r->key.kind == ROW_GROUP) {
            snprintf(dst, n, "group");
        } else if (r->key.kind == ROW_CTR) {
            size_t mount;
            const struct budget *b = ui_ctr_budget(u, ui_key_ctr(&u->snap->model, &r->key), &mount);
            snprintf(dst, n, "%s", mount == SIZE_MAX ? "-" : verdict_name(b->verdict));
            if (mount != SIZE_MAX)
                *role = (enum theme_role)dash_verdict_role(b->verdict);
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
            snprintf(dst, n, "%zu seg%s", r->count, r->count == 1 ? "" : "s");
        break;
    case C_AGE:
        if (seg && sg->mtime > 0)
            snprintf(dst, n, "%s",
                     fmt_duration(a, sizeof(a), (double)segment_age_s(&u->snap->model, sg)));
        break;
    case C_PID:
    case P_PID:
        if (seg && sg->has_creator)
            snprintf(dst, n,
                     sg->creator_alive     ? "%d"
                     : sg->creator_unknown ? "?%d"
                                           : "(%d)",
                     (int)sg->creator_pid);
        else if (p)
            snprintf(dst, n, "%d", (int)p->pid);
        break;
    case C_GROUP:
        if (seg && sg->group)
            snprintf(dst, n, "%d", (int)sg->group);
        else if (r->group)
            snprintf(dst, n, "%d", (int)r->group->main_pid);
        break;
    case P_PPID:
        snprintf(dst, n, "%d", (int)p->ppid);
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

enum theme_role cell_row_colour(const struct row *r)
{
    switch (r->key.kind) {
    case ROW_GROUP:
        return THEME_group;
    case ROW_SECTION:
        return r->key.section == SEC_ORPHANS ? THEME_state_orphan : THEME_group;
    case ROW_CTR:
        return THEME_header;
    case ROW_PROC:
        return proc_role_colour(r->proc->role);
    default:
        return THEME_normal;
    }
}
