#include "act/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"
#include "util/units.h"
#include "util/xalloc.h"

void clean_policy_default(struct clean_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->min_age_s = 600;
}

/* An orphan of an earlier run: its container by name where the node view
 * knows it, and when the processes that can write the mount now began. */
static void earlier_run_why(const struct model *m, const struct segment *sg, struct buf *b)
{
    const struct node_ctr *c = node_owner(model_node(m), sg->mount);
    const struct container_info *ci = c ? &c->info : NULL;
    const char *name = ci && ci->name && ci->name[0] ? ci->name : NULL;
    char when[32] = "?";
    struct tm tm;
    time_t t = m->mounts[sg->mount].pids.first_start.tv_sec;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    buf_printf(b, "orphan: held by nobody, left by an earlier run of %s%s (restarted at %s)",
               name ? "" : "its container", name ? name : "", when);
}

/* Why segment sg, an orphan or an unheld one (push is given no other),
 * would be removed (malloc'd sentence). */
static char *segment_why(const struct model *m, const struct segment *sg)
{
    struct buf b;
    buf_init(&b);
    char age[32];
    fmt_duration(age, sizeof(age), (double)segment_age_s(m, sg));
    if (sg->state == SEG_ORPHAN && sg->type == FT_DIR)
        buf_printf(&b, "orphan: a %s folder, none of its files held, its creator pid %d is gone",
                   seg_kind_name(sg->kind), (int)sg->creator_pid);
    else if (sg->state == SEG_ORPHAN && sg->earlier_run)
        earlier_run_why(m, sg, &b);
    else if (sg->state == SEG_ORPHAN)
        buf_printf(&b, "orphan: held by nobody, its creator pid %d is gone", (int)sg->creator_pid);
    else if (sg->note != NOTE_NONE) {
        char note[256];
        buf_printf(&b, "unheld for %s: %s", age, segment_note(m, sg, note, sizeof(note)));
    } else
        buf_printf(&b, "unheld: held by nobody for %s, owner unknown", age);
    return buf_steal(&b);
}

/* Counts t in the plan's totals unless planning refused it. */
static void count_try(struct unlink_plan *p, const struct unlink_target *t)
{
    if (!t->refuse) {
        p->ntry++;
        p->bytes += t->alloc;
    }
}

static void push(const struct model *m, const struct segment *sg, struct unlink_plan *out)
{
    const struct shm_mount *mt = model_segment_mount(m, sg);
    struct unlink_target *t = VEC_PUSH(out->items, out->n, out->cap);
    t->mount = xstrdup(mt->path);
    t->mount_index = sg->mount;
    t->name = xstrdup(sg->name);
    t->dev = sg->dev;
    t->ino = sg->ino;
    t->uid = sg->uid;
    t->mtime = sg->mtime;
    t->alloc = sg->alloc;
    t->state = sg->state;
    t->why = segment_why(m, sg);
    t->folder = sg->type == FT_DIR && sg->kind == KIND_JOBLIB;
    t->refuse = t->folder ? NULL : unlink_type_refusal(sg->type);
    count_try(out, t);
}

/* Whether pol lets a plan act on mount i (clean_policy.own_mounts). */
static bool in_scope(const struct model *m, const struct clean_policy *pol, size_t mount)
{
    return !pol->own_mounts || model_mount_seen_by(m, mount, NODE_HOST);
}

void targets_clean(const struct model *m, const struct clean_policy *pol, struct unlink_plan *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        if (!in_scope(m, pol, sg->mount))
            continue;
        bool dead_creator = sg->has_creator && !sg->creator_alive;
        if (sg->state == SEG_ORPHAN) {
            push(m, sg, out);
        } else if (sg->state == SEG_UNHELD) {
            /* A torch-named entry of a dead creator that is not a regular
             * file looks like an orphan: shown, refused. Not a joblib
             * folder: push plans it for removal (as a folder), and this
             * one is no orphan (young, or its pid proves nothing). */
            bool folder = sg->type == FT_DIR && sg->kind == KIND_JOBLIB;
            /* A live creator's is a live job's (a batch its main has not
             * taken yet), however old: never removed as unheld. */
            bool live_creator = sg->has_creator && sg->creator_alive;
            if (pol->all_unheld && !live_creator &&
                (double)segment_age_s(m, sg) >= pol->min_age_s) {
                push(m, sg, out);
                continue;
            }
            if (dead_creator && sg->type != FT_REGULAR && !folder)
                push(m, sg, out);
            else if (pol->all_unheld && live_creator)
                out->live++;
            else if (pol->all_unheld)
                out->young++;
            if (sg->note == NOTE_YOUNG) {
                out->inflight++;
            } else if (sg->note == NOTE_SHARED || sg->note == NOTE_UNPROVEN) {
                out->doubtful++;
                if (!out->doubt) {
                    out->doubtful_evidence = m->mounts[sg->mount].pids.evidence;
                    out->doubt = pid_evidence_note(out->doubtful_evidence);
                }
            }
        } else if (sg->state == SEG_IN_USE && dead_creator) {
            out->held++;
        }
    }
}

bool targets_add_segment(const struct model *m, size_t seg, const struct clean_policy *pol,
                         struct unlink_plan *out, char *why, size_t n)
{
    if (seg >= m->nsegs) {
        snprintf(why, n, "no such segment");
        return false;
    }
    const struct segment *sg = &m->segs[seg];
    if (!in_scope(m, pol, sg->mount)) {
        snprintf(why, n, "not in this view: on another container's mount");
        return false;
    }
    char age[32], min[32];
    switch (sg->state) {
    case SEG_ORPHAN:
        break;
    case SEG_UNHELD:
        if (!pol->all_unheld) {
            char note[256];
            if (sg->note != NOTE_NONE)
                snprintf(why, n, "not an orphan: %s (remove unheld segments with U)",
                         segment_note(m, sg, note, sizeof(note)));
            else
                snprintf(why, n, "unheld, but its owner is unknown: it may be a persistent "
                                 "segment (remove unheld segments with U)");
            return false;
        }
        if (sg->has_creator && sg->creator_alive) {
            snprintf(why, n, "its creator pid %d is alive: a live job's, a batch in flight",
                     (int)sg->creator_pid);
            return false;
        }
        double age_s = (double)segment_age_s(m, sg);
        if (age_s < pol->min_age_s) {
            fmt_duration(age, sizeof(age), age_s);
            fmt_duration(min, sizeof(min), pol->min_age_s);
            snprintf(why, n, "unheld for only %s, younger than the minimum age %s", age, min);
            return false;
        }
        break;
    case SEG_IN_USE:
        snprintf(why, n, "in use: %u holder%s", (unsigned)sg->nholders, sg->nholders == 1 ? "" : "s");
        return false;
    case SEG_HIDDEN:
        snprintf(why, n, "hidden: it has no name left to remove; it is freed when its "
                         "holders exit");
        return false;
    }
    push(m, sg, out);
    return true;
}

void targets_keep_state(struct unlink_plan *p, enum seg_state state)
{
    size_t k = 0;
    p->ntry = 0;
    p->bytes = 0;
    for (size_t i = 0; i < p->n; i++) {
        struct unlink_target *t = &p->items[i];
        if (t->state != state) {
            free(t->mount);
            free(t->name);
            free(t->why);
            continue;
        }
        count_try(p, t);
        p->items[k++] = *t;
    }
    p->n = k;
}

bool targets_proc(const struct model *m, pid_t pid, struct signal_target *t)
{
    const struct proc *p = model_scan_proc(m, pid);
    if (!p)
        return false;
    const struct mproc *mp = model_find_proc(m, pid);
    signal_target_from_proc(t, p, mp ? mp->role : ROLE_NONE);
    return true;
}

/* An orphaned worker's why: the fact roles.c proved it by, no more. */
static void orphan_why(struct buf *b, const struct proc *p, const struct proc *parent,
                       unsigned proof)
{
    buf_printf(b,
               "orphaned worker: a DataLoader worker by its %s whose parent, pid %d (%s), is not "
               "its main",
               proof & ORPHAN_BY_NAME ? "name" : "caught signals and libtorch", (int)p->ppid,
               parent ? parent->comm : "?");
}

static char *role_why(const struct model *m, const struct proc *p, const struct mproc *mp)
{
    struct buf b;
    buf_init(&b);
    const struct proc *parent = model_scan_proc(m, p->ppid);
    switch (mp->role) {
    case ROLE_ORPHAN_WORKER:
        orphan_why(&b, p, parent, mp->orphan_proof);
        break;
    case ROLE_SHM_MANAGER:
        buf_printf(&b, "torch_shm_manager");
        break;
    case ROLE_ZOMBIE:
        buf_printf(&b, "zombie: already dead, waiting for its parent pid %d (%s) to reap it",
                   (int)p->ppid, parent ? parent->comm : "?");
        break;
    default:
        buf_printf(&b, "%s", proc_role_name(mp->role));
    }
    return buf_steal(&b);
}

void targets_role(const struct model *m, enum proc_role role, struct signal_plan *out)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].role != role)
            continue;
        const struct proc *p = model_proc(m, &m->procs[i]);
        struct signal_target *t = VEC_PUSH(out->items, out->n, out->cap);
        signal_target_from_proc(t, p, role);
        t->why = role_why(m, p, &m->procs[i]);
    }
}

static bool looks_like_orphan(const struct model *m, const char *name)
{
    pid_t pid;
    if (!name_creator_pid(name, &pid))
        return false;
    const struct proc *p = model_scan_proc(m, pid);
    return !p || p->state == 'Z';
}

void targets_add_dirs(const struct model *m, const struct clean_policy *pol, struct unlink_plan *p)
{
    size_t ndirs;
    const struct shm_dir *dirs = model_dirs(m, &ndirs);
    for (size_t i = 0; i < ndirs; i++) {
        const struct shm_dir *d = &dirs[i];
        if (!in_scope(m, pol, d->mount))
            continue;
        pid_t named;
        if (name_facts(d->name, &named) == KIND_JOBLIB)
            continue; /* a folder segment: the model has it */
        bool orphan_name = looks_like_orphan(m, d->name);
        if (!orphan_name && !pol->all_unheld)
            continue;
        double age = m->now > d->mtime ? (double)(m->now - d->mtime) : 0;
        if (!orphan_name && age < pol->min_age_s)
            continue;
        struct unlink_target *t = VEC_PUSH(p->items, p->n, p->cap);
        t->mount = xstrdup(model_mount(m, d->mount)->path);
        t->mount_index = d->mount;
        t->name = xstrdup(d->name);
        t->dev = d->dev;
        t->ino = d->ino;
        t->uid = d->uid;
        t->mtime = d->mtime;
        t->state = SEG_UNHELD;
        t->why = xstrdup("a directory named like a segment");
        t->refuse = unlink_type_refusal(FT_DIR);
    }
}
