/* Sort orders of the lists. Every order ends in a unique tie-break (inode,
 * pid) so that rows never swap places between two identical scans. */
#include <string.h>

#include "config/config.h"
#include "ui/term.h"
#include "ui/ui_priv.h"

#define CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* Most urgent first: what can be cleaned, then what may be garbage. */
static int state_rank(enum seg_state s)
{
    switch (s) {
    case SEG_ORPHAN:
        return 0;
    case SEG_UNHELD:
        return 1;
    case SEG_HIDDEN:
        return 2;
    default:
        return 3;
    }
}

static int role_rank(enum proc_role r)
{
    switch (r) {
    case ROLE_ZOMBIE:
        return 0;
    case ROLE_ORPHAN_WORKER:
        return 1;
    case ROLE_MAIN:
        return 2;
    case ROLE_WORKER:
        return 3;
    case ROLE_SHM_MANAGER:
        return 4;
    default:
        return 5;
    }
}

int sort_segments(const struct ui *u, const struct segment *a, const struct segment *b)
{
    int c = 0;
    switch (u->sort) {
    case CONFIG_SORT_SIZE:
        c = CMP(b->size, a->size);
        if (!c)
            c = CMP(b->alloc, a->alloc);
        break;
    case CONFIG_SORT_AGE:
        c = CMP(a->mtime, b->mtime);
        break;
    case CONFIG_SORT_STATE:
        c = CMP(state_rank(a->state), state_rank(b->state));
        if (!c)
            c = CMP(b->alloc, a->alloc);
        break;
    case CONFIG_SORT_PID:
        c = CMP(!a->has_creator, !b->has_creator);
        if (!c)
            c = CMP(a->creator_pid, b->creator_pid);
        break;
    default:
        break;
    }
    if (!c) /* torch_12_9 before torch_12_10 */
        c = strverscmp(a->name, b->name);
    if (!c)
        c = CMP(a->ino, b->ino);
    return u->reverse ? -c : c;
}

int sort_procs(const struct ui *u, const struct mproc *a, const struct mproc *b)
{
    const struct proc *pa = model_proc(&u->snap->model, a), *pb = model_proc(&u->snap->model, b);
    int c = 0;
    switch (u->sort) {
    case CONFIG_SORT_SIZE:
        c = CMP(b->shm_bytes, a->shm_bytes);
        if (!c)
            c = CMP(pb->rss_anon, pa->rss_anon);
        break;
    case CONFIG_SORT_AGE:
        c = CMP(pa->start_ticks, pb->start_ticks);
        break;
    case CONFIG_SORT_STATE:
        c = CMP(role_rank(a->role), role_rank(b->role));
        break;
    case CONFIG_SORT_NAME:
        c = strcmp(pa->comm, pb->comm);
        break;
    default:
        break;
    }
    if (!c)
        c = CMP(pa->pid, pb->pid);
    return u->reverse ? -c : c;
}

int sort_groups(const struct ui *u, const struct group *a, const struct group *b)
{
    const struct model *m = &u->snap->model;
    const struct proc *ma = model_group_main(m, a), *mb = model_group_main(m, b);
    int c = 0;
    switch (u->sort) {
    case CONFIG_SORT_SIZE:
        c = CMP(b->shm_bytes, a->shm_bytes);
        break;
    case CONFIG_SORT_AGE:
        c = CMP(ma->start_ticks, mb->start_ticks);
        break;
    case CONFIG_SORT_NAME:
        c = strcmp(ma->cmdline ? ma->cmdline : ma->comm, mb->cmdline ? mb->cmdline : mb->comm);
        break;
    default:
        break;
    }
    if (!c)
        c = CMP(a->main_pid, b->main_pid);
    return u->reverse ? -c : c;
}

const char *sort_arrow(const struct ui *u)
{
    bool down =
        u->sort == CONFIG_SORT_SIZE || u->sort == CONFIG_SORT_AGE || u->sort == CONFIG_SORT_STATE;
    return down != u->reverse ? term_glyphs()->down : term_glyphs()->up;
}
