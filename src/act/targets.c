#include "act/targets.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/units.h"
#include "util/fileio.h"
#include "util/xalloc.h"

void clean_policy_default(struct clean_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->min_age_s = 600;
}

/* Why segment sg would be removed (malloc'd sentence). */
static char *segment_why(const struct model *m, const struct segment *sg)
{
    struct buf b;
    buf_init(&b);
    char age[32];
    fmt_duration(age, sizeof(age), (double)segment_age_s(m, sg));
    if (sg->state == SEG_ORPHAN && sg->type == FT_DIR)
        buf_printf(&b, "orphan: a %s folder, none of its files held, its creator pid %d is gone",
                   seg_kind_name(sg->kind), (int)sg->creator_pid);
    else if (sg->state == SEG_ORPHAN)
        buf_printf(&b, "orphan: held by nobody, its creator pid %d is gone", (int)sg->creator_pid);
    else if (sg->state == SEG_UNHELD && sg->note != NOTE_NONE) {
        char note[256];
        buf_printf(&b, "unheld for %s: %s", age, segment_note(m, sg, note, sizeof(note)));
    } else if (sg->state == SEG_UNHELD)
        buf_printf(&b, "unheld: held by nobody for %s, owner unknown", age);
    else
        buf_printf(&b, "%s", seg_state_name(sg->state));
    return buf_steal(&b);
}

/* Where this process reaches mount mt of the scan. */
static char *mount_dir(const struct model *m, const struct shm_mount *mt)
{
    pid_t pid = m->scan->target_pid;
    return pid > 0 ? str_printf("/proc/%d/root%s", (int)pid, mt->path) : xstrdup(mt->path);
}

static void push(const struct model *m, const struct segment *sg, struct unlink_plan *out)
{
    const struct shm_mount *mt = &m->scan->mounts.items[sg->mount];
    struct unlink_target *t = VEC_PUSH(out->items, out->n, out->cap);
    t->mount = xstrdup(mt->path);
    t->mount_dir = mount_dir(m, mt);
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
    if (!t->refuse) {
        out->ntry++;
        out->bytes += sg->alloc;
    }
}

void actplan_clean(const struct model *m, const struct clean_policy *pol, struct unlink_plan *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        bool dead_creator = sg->has_creator && !sg->creator_alive;
        if (sg->state == SEG_ORPHAN) {
            push(m, sg, out);
        } else if (sg->state == SEG_UNHELD) {
            /* A torch-named entry of a dead creator that is not a regular
             * file looks like an orphan: shown, refused. */
            if (pol->all_unheld && (double)segment_age_s(m, sg) >= pol->min_age_s)
                push(m, sg, out);
            else if (dead_creator && sg->type != FT_REGULAR)
                push(m, sg, out);
            else if (pol->all_unheld)
                out->young++;
            if (pol->all_unheld && (double)segment_age_s(m, sg) >= pol->min_age_s)
                continue;
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

bool actplan_add_segment(const struct model *m, size_t seg, const struct clean_policy *pol,
                         struct unlink_plan *out, char *why, size_t n)
{
    if (seg >= m->nsegs) {
        snprintf(why, n, "no such segment");
        return false;
    }
    const struct segment *sg = &m->segs[seg];
    char age[32], min[32];
    switch (sg->state) {
    case SEG_ORPHAN:
        break;
    case SEG_UNHELD:
        if (!pol->all_unheld && sg->note != NOTE_NONE) {
            char note[256];
            snprintf(why, n, "not an orphan: %s (remove unheld segments with U)",
                     segment_note(m, sg, note, sizeof(note)));
            return false;
        }
        if (!pol->all_unheld) {
            snprintf(why, n, "unheld, but its owner is unknown: it may be a persistent "
                             "segment (remove unheld segments with U)");
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
        snprintf(why, n, "in use: %zu holder%s", sg->nholders, sg->nholders == 1 ? "" : "s");
        return false;
    case SEG_HIDDEN:
        snprintf(why, n, "hidden: it has no name left to remove; it is freed when its "
                         "holders exit");
        return false;
    }
    push(m, sg, out);
    return true;
}

void actplan_keep_state(struct unlink_plan *p, enum seg_state state)
{
    size_t k = 0;
    p->ntry = 0;
    p->bytes = 0;
    for (size_t i = 0; i < p->n; i++) {
        struct unlink_target *t = &p->items[i];
        if (t->state != state) {
            free(t->mount);
            free(t->mount_dir);
            free(t->name);
            free(t->why);
            continue;
        }
        if (!t->refuse) {
            p->ntry++;
            p->bytes += t->alloc;
        }
        p->items[k++] = *t;
    }
    p->n = k;
}

bool actplan_proc(const struct model *m, pid_t pid, struct signal_target *t)
{
    const struct proc *p = procs_find(&m->scan->procs, pid);
    if (!p)
        return false;
    const struct mproc *mp = model_find_proc(m, pid);
    signal_target_from_proc(t, p, mp ? mp->role : ROLE_NONE);
    return true;
}

static char *role_why(const struct model *m, const struct proc *p, enum proc_role role)
{
    struct buf b;
    buf_init(&b);
    const struct proc *parent = procs_find(&m->scan->procs, p->ppid);
    switch (role) {
    case ROLE_ORPHAN_WORKER:
        buf_printf(&b, "orphaned worker: the leader of its process group (pid %d) is gone",
                   (int)p->pgid);
        break;
    case ROLE_SHM_MANAGER:
        buf_printf(&b, "torch_shm_manager");
        break;
    case ROLE_ZOMBIE:
        buf_printf(&b, "zombie: already dead, waiting for its parent pid %d (%s) to reap it",
                   (int)p->ppid, parent ? parent->comm : "?");
        break;
    default:
        buf_printf(&b, "%s", proc_role_name(role));
    }
    return buf_steal(&b);
}

void actplan_role(const struct model *m, enum proc_role role, struct signal_plan *out)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].role != role)
            continue;
        const struct proc *p = &m->scan->procs.items[m->procs[i].proc];
        struct signal_target *t = VEC_PUSH(out->items, out->n, out->cap);
        signal_target_from_proc(t, p, role);
        t->why = role_why(m, p, role);
    }
}

static bool looks_like_orphan(const struct model *m, const char *name)
{
    pid_t pid;
    if (!name_creator_pid(name, &pid))
        return false;
    const struct proc *p = procs_find(&m->scan->procs, pid);
    return !p || p->state == 'Z';
}

/* The scan's listing cannot serve here: files_collect descends into a
 * directory without an entry for the directory itself, so an empty one is
 * not in it at all, and no directory's inode, owner or mtime is (one with
 * files shows only as the "dir/..." prefix of their names). So the top of
 * each mount is read again, once per plan, and only the entries that may be
 * added are stat'ed: directories (by d_type; any entry whose type the file
 * system does not give) named after a dead creator, and with all_unheld
 * every directory, for its age. Everything added is refused, never
 * removed: it is only reported. */
void actplan_add_dirs(const struct model *m, const struct clean_policy *pol, struct unlink_plan *p)
{
    for (size_t i = 0; i < m->scan->mounts.n; i++) {
        const struct shm_mount *mt = &m->scan->mounts.items[i];
        char *dir = mount_dir(m, mt);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        free(dir);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
                strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            pid_t named;
            if (name_facts(de->d_name, &named) == KIND_JOBLIB)
                continue; /* a folder segment: the model has it */
            bool orphan_name = looks_like_orphan(m, de->d_name);
            /* A file system mounted inside (another device) is not a
             * segment; its stat never waits on it (stat_nowait). */
            struct stat st;
            bool full;
            if ((!orphan_name && !pol->all_unheld) ||
                stat_nowait(fd, de->d_name, AT_SYMLINK_NOFOLLOW, &st, &full) != 0 ||
                st.st_dev != mt->dev ||
                (!full && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) ||
                !S_ISDIR(st.st_mode))
                continue;
            double age = m->now > st.st_mtim.tv_sec ? (double)(m->now - st.st_mtim.tv_sec) : 0;
            if (!orphan_name && age < pol->min_age_s)
                continue;
            struct unlink_target *t = VEC_PUSH(p->items, p->n, p->cap);
            t->mount = xstrdup(mt->path);
            t->mount_dir = mount_dir(m, mt);
            t->name = xstrdup(de->d_name);
            t->dev = st.st_dev;
            t->ino = st.st_ino;
            t->uid = st.st_uid;
            t->mtime = (int64_t)st.st_mtim.tv_sec;
            t->state = SEG_UNHELD;
            t->why = xstrdup("a directory named like a segment");
            t->refuse = unlink_type_refusal(FT_DIR);
        }
        closedir(d);
    }
}
