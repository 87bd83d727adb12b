#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/segsort.h"
#include "util/fileio.h"
#include "util/inomap.h"
#include "util/units.h"
#include "util/xalloc.h"

void model_opts_default(struct model_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->warn_pct = 80;
    o->crit_pct = 95;
    o->orphan_min_age_s = ORPHAN_MIN_AGE_DEFAULT;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The name of an unlinked segment, from a holder's link or maps text: the
 * path below the mount when it starts with the mount's path, else its last
 * component. It points into the holder's path (the scan outlives the model). */
static const char *hidden_name(const char *path, const char *mount_path)
{
    size_t n = strlen(mount_path);
    if (strncmp(path, mount_path, n) == 0 && path[n] == '/' && path[n + 1])
        return path + n + 1;
    return base_name(path);
}

static void add_holder(struct segment *sg, const struct shm_holder *h, int32_t proc)
{
    /* A mapping-only record of a pid that also has an fd to the inode is
     * folded into that fd's entry. A scan reads one process at a time, so
     * a pid's records come together: past a few holders only the last
     * pid's run is searched (a segment mapped by thousands stays linear). */
    size_t from = 0;
    if (sg->nholders > 16)
        for (from = sg->nholders; from > 0 && sg->holders[from - 1].pid == h->pid; from--)
            ;
    for (size_t i = from; i < sg->nholders; i++) {
        struct seg_holder *x = &sg->holders[i];
        if (x->pid == h->pid && (h->fd < 0 || x->fd < 0)) {
            if (h->fd >= 0)
                x->fd = h->fd;
            x->mapped = x->mapped || h->mapped;
            return;
        }
    }
    /* The slice join() made holds every record of the segment. */
    sg->holders[sg->nholders++] =
        (struct seg_holder){.pid = h->pid, .fd = h->fd, .proc = proc, .mapped = h->mapped};
}

/* The segment of an inode the listing does not have, made from its first
 * holder record: join() names it and takes its stat from its records, the
 * mapping's length standing in until one could stat the inode. */
static void segment_from_holder(struct model *m, const struct shm_holder *h, long mount)
{
    struct segment *sg = VEC_PUSH(m->segs, m->nsegs, m->segs_cap);
    sg->mount = (size_t)mount;
    sg->dev = h->dev;
    sg->ino = h->ino;
    sg->type = FT_REGULAR;
    sg->creator_proc = -1;
    sg->state = h->deleted ? SEG_HIDDEN : SEG_IN_USE;
    sg->size = h->map_bytes;
    sg->alloc = h->map_bytes;
}

/* The segment of each holder record (a listed file's, or one made for a
 * hidden inode): the per-record segment index, or NO_SEGMENT for a record
 * off the mounts. 32-bit: a scan's records and segments number far fewer,
 * and these are pages that every snapshot makes. */
#define NO_SEGMENT UINT32_MAX
static uint32_t *place_holders(struct model *m, struct inomap *idx)
{
    const struct scan *s = m->scan;
    uint32_t *segof = xmalloc(s->holders.n * sizeof(*segof));
    /* The mount of the last device asked about: a process's records come
     * together, nearly all on its container's one mount. */
    dev_t last_dev = 0;
    long last_mount = -1;
    for (size_t i = 0; i < s->holders.n; i++) {
        const struct shm_holder *h = &s->holders.items[i];
        size_t k;
        segof[i] = NO_SEGMENT;
        if (!inomap_get(idx, h->dev, h->ino, &k)) {
            if (h->dev != last_dev || last_mount < 0) {
                last_dev = h->dev;
                last_mount = mounts_find_dev(&s->mounts, h->dev);
            }
            if (last_mount < 0)
                continue;
            segment_from_holder(m, h, last_mount);
            k = m->nsegs - 1;
            inomap_put(idx, h->dev, h->ino, k);
        }
        segof[i] = (uint32_t)k;
    }
    return segof;
}

static void join(struct model *m)
{
    const struct scan *s = m->scan;
    struct inomap idx;
    inomap_init(&idx);
    /* Sized for the listing and the hidden inodes the walk counted (the
     * holders' unlisted), and the index likewise: after a walk neither
     * moves nor rehashes while it fills. The index only serves to find the
     * holders' segments: with no holder (a mount of files nobody holds) it
     * is not made. */
    size_t bound = s->files.n + (s->holders.n ? s->holders.unlisted : 0);
    m->segs = xmalloc(bound * sizeof(*m->segs));
    m->segs_cap = bound;
    bool indexed = s->holders.n > 0;
    if (indexed)
        inomap_reserve(&idx, bound);
    for (size_t i = 0; i < s->files.n; i++) {
        const struct shm_file *f = &s->files.items[i];
        struct segment *sg = VEC_PUSH(m->segs, m->nsegs, m->segs_cap);
        sg->mount = f->mount;
        sg->name = f->name; /* the scan outlives the model */
        sg->dev = f->dev;
        sg->ino = f->ino;
        sg->type = f->type;
        sg->size = f->size;
        sg->alloc = f->alloc;
        sg->alloc_known = true;
        sg->uid = f->uid;
        sg->mtime = f->mtime;
        sg->ctime = f->ctime;
        sg->state = SEG_UNHELD;
        sg->creator_proc = -1;
        if (indexed)
            inomap_put(&idx, f->dev, f->ino, m->nsegs - 1);
    }
    uint32_t *segof = place_holders(m, &idx);
    inomap_free(&idx);
    /* Every segment's holders in one array: a slice each, sized by its
     * record count (folding only shrinks it). */
    uint32_t *count = xcalloc(m->nsegs, sizeof(*count));
    size_t total = 0;
    for (size_t i = 0; i < s->holders.n; i++) {
        if (segof[i] != NO_SEGMENT) {
            count[segof[i]]++;
            total++;
        }
    }
    m->holder_pool = xmalloc(total * sizeof(*m->holder_pool));
    for (size_t i = 0, at = 0; i < m->nsegs; i++) {
        m->segs[i].holders = count[i] ? m->holder_pool + at : NULL;
        at += count[i];
    }
    /* The index of a holder's pid in the scan's processes (-1 for none): a
     * scan reads one process at a time, so consecutive records name the
     * same pid and the last answer is kept. 32 bits, as a holder entry
     * keeps it: a scan lists at most pid_max (2^22) processes. */
    pid_t last_pid = -1;
    int32_t last_proc = -1;
    for (size_t i = 0; i < s->holders.n; i++) {
        if (segof[i] == NO_SEGMENT)
            continue;
        const struct shm_holder *h = &s->holders.items[i];
        struct segment *sg = &m->segs[segof[i]];
        /* A hidden inode's name and state: from its first record that has a path. */
        if (!sg->name && h->path) {
            sg->name = hidden_name(h->path, s->mounts.items[sg->mount].path);
            sg->state = h->deleted ? SEG_HIDDEN : SEG_IN_USE;
        }
        if (sg->state == SEG_UNHELD)
            sg->state = SEG_IN_USE;
        if (!sg->alloc_known && h->stat_ok) { /* the first record that could stat the inode */
            sg->size = h->size;
            sg->alloc = h->alloc;
            sg->alloc_known = true;
            sg->uid = h->uid;
            sg->mtime = h->mtime;
        }
        if (h->pid != last_pid) {
            const struct proc *p = procs_find(&s->procs, h->pid);
            last_pid = h->pid;
            last_proc = p ? (int32_t)(p - s->procs.items) : -1;
        }
        add_holder(sg, h, last_proc);
    }
    free(segof);
    free(count);
    for (size_t i = 0; i < m->nsegs; i++)
        if (!m->segs[i].name) /* no holder's link or mapping could be read */
            m->segs[i].name = "?";
    if (m->segs_cap > m->nsegs + 64) { /* hidden segments grew it: give the slack back */
        m->segs = xrealloc(m->segs, m->nsegs * sizeof(*m->segs));
        m->segs_cap = m->nsegs;
    }
}

/* Folds the files of each joblib folder (a directory listed at the top of a
 * mount, its files after it in name order) into the folder's segment: its
 * size and allocation are their sums, its age that of the newest, its
 * holders theirs; a held file makes it in use. A hidden file of the folder
 * (unlinked, still held) stays a segment of its own. */
static void fold_folders(struct model *m)
{
    size_t pool = 0;
    for (size_t i = 0; i < m->nsegs; i++)
        if (strchr(m->segs[i].name, '/'))
            pool += m->segs[i].nholders;
    m->folder_pool = xmalloc(pool * sizeof(*m->folder_pool));
    size_t used = 0, kept = 0;
    for (size_t i = 0; i < m->nsegs;) {
        struct segment *dir = &m->segs[i];
        pid_t pid;
        if (dir->type != FT_DIR || strchr(dir->name, '/') ||
            name_facts(dir->name, &pid) != KIND_JOBLIB) {
            m->segs[kept++] = m->segs[i++];
            continue;
        }
        struct segment folder = *dir;
        folder.size = folder.alloc = 0;
        folder.nholders = 0;
        folder.holders = m->folder_pool + used; /* its files' holders, one after another */
        size_t at = kept++; /* the folder's; what shares its prefix but is not in it follows */
        size_t len = strlen(folder.name), j = i + 1;
        for (; j < m->nsegs && m->segs[j].mount == folder.mount &&
               strncmp(m->segs[j].name, folder.name, len) == 0;
             j++) {
            struct segment *c = &m->segs[j];
            if (c->name[len] != '/' || c->state == SEG_HIDDEN) {
                m->segs[kept++] = *c; /* kept <= j: down, over what was read */
                continue;
            }
            folder.size += c->size;
            folder.alloc += c->alloc;
            if (c->mtime > folder.mtime)
                folder.mtime = c->mtime;
            if (c->ctime > folder.ctime)
                folder.ctime = c->ctime;
            if (c->state == SEG_IN_USE)
                folder.state = SEG_IN_USE;
            if (c->nholders) {
                memcpy(m->folder_pool + used, c->holders, c->nholders * sizeof(*c->holders));
                used += c->nholders;
                folder.nholders += c->nholders;
            }
        }
        m->segs[at] = folder;
        i = j;
    }
    m->nsegs = kept;
}

/* A live process (not a zombie, not a kernel thread: a kernel thread makes
 * no segment, so the pid was reused). */
static const struct proc *alive(const struct proc *p)
{
    return p && !p->kernel_thread && p->state != 'Z' ? p : NULL;
}

/* Sets the creator of a segment whose name carries pid named, read as the
 * mount's evidence allows: proven dead when neither creator_alive nor
 * creator_unknown. */
static void creator(const struct scan *s, struct pid_lookup *l, const struct mount_pids *mp,
                    struct segment *sg, pid_t named)
{
    const struct proc *p = NULL;
    if (mp->evidence == PIDS_SHARED) {
        /* Alive if alive in any of the namespaces that reach the mount. */
        for (size_t k = 0; k < mp->npidns && !p; k++)
            p = alive(pid_lookup_find(l, mp->pidns[k], named));
    } else {
        p = pid_lookup_find(l, mp->lookup, named);
        if (p && p->kernel_thread)
            p = NULL;
    }
    sg->creator_pid = p ? p->pid : named;
    sg->creator_alive = p && p->state != 'Z';
    sg->creator_proc = sg->creator_alive ? (int32_t)(p - s->procs.items) : -1;
    if (!sg->creator_alive && (mp->evidence == PIDS_SHARED || mp->evidence == PIDS_UNPROVEN)) {
        sg->creator_unknown = true;
        sg->note = mp->evidence == PIDS_SHARED ? NOTE_SHARED : NOTE_UNPROVEN;
    }
}

/* Was sg last changed before every process that can write its mount now
 * started? */
static bool of_earlier_run(const struct scan *s, const struct mount_pids *mp,
                           const struct segment *sg)
{
    int64_t changed = sg->ctime > sg->mtime ? sg->ctime : sg->mtime;
    if (!mp->first_start_ok || changed <= 0 ||
        changed + PIDTRUST_EARLIER_SLACK_S >= (int64_t)mp->first_start.tv_sec)
        return false;
    /* A live process of the name's pid wrote it unless it started after:
     * it may be one whose namespaces this shmwatch cannot read (another
     * user's, watched without root), which first_start leaves out. */
    if (!sg->creator_alive)
        return true;
    struct timespec started;
    return nsmap_started(&s->ns, s->procs.items[sg->creator_proc].start_ticks, &started) &&
           changed + PIDTRUST_EARLIER_SLACK_S < (int64_t)started.tv_sec;
}

static void classify(struct model *m, const struct model_opts *o)
{
    const struct scan *s = m->scan;
    for (size_t i = 0; i < s->mounts.n; i++)
        pidtrust_mount(s, i, o->trust_pids, &m->mounts[i].pids);
    struct pid_lookup l = {.s = s};
    pid_t last_named = -1;
    size_t last_mount = SIZE_MAX;
    struct segment last_seg;
    for (size_t i = 0; i < m->nsegs; i++) {
        struct segment *sg = &m->segs[i];
        const char *base = base_name(sg->name);
        pid_t named;
        sg->kind = name_facts(base, &named);
        if (named > 0) {
            /* Sorted by name, a creator's segments come together. */
            if (named != last_named || sg->mount != last_mount) {
                last_named = named;
                last_mount = sg->mount;
                memset(&last_seg, 0, sizeof(last_seg));
                creator(s, &l, &m->mounts[sg->mount].pids, &last_seg, named);
            }
            sg->has_creator = true;
            sg->creator_pid = last_seg.creator_pid;
            sg->creator_alive = last_seg.creator_alive;
            sg->creator_proc = last_seg.creator_proc;
            sg->creator_unknown = last_seg.creator_unknown;
            sg->note = last_seg.note;
            /* Whatever process its pid names now (the same numbers come
             * back in a restarted container), none of them made it. */
            if (sg->state == SEG_UNHELD && of_earlier_run(s, &m->mounts[sg->mount].pids, sg)) {
                sg->earlier_run = true;
                sg->creator_pid = named;
                sg->creator_alive = false;
                sg->creator_proc = -1;
                sg->creator_unknown = false;
                sg->note = NOTE_NONE;
            }
        }
        /* Only a regular file, held by nobody, whose owner is provably dead
         * is garbage, and only a name of a kind that carries its creator's
         * pid (torch, joblib, omp) can prove that: anything else with no
         * holder is merely unheld. A joblib folder is removable as a whole.
         * A file inside some other directory is never more than unheld:
         * the directory is someone's own (an application's cache, a
         * runtime's folder), and the name's pid is only a guess there.
         * One younger than the in-flight minimum may be a batch on its way
         * from a worker to the main process. */
        bool removable = base == sg->name &&
            (sg->type == FT_REGULAR || (sg->type == FT_DIR && sg->kind == KIND_JOBLIB));
        bool dead = sg->has_creator && !sg->creator_alive && !sg->creator_unknown;
        if (sg->state == SEG_UNHELD && removable && seg_kind_has_creator(sg->kind) && dead &&
            s->holders_scanned) {
            if ((double)segment_age_s(m, sg) < o->orphan_min_age_s)
                sg->note = NOTE_YOUNG;
            else
                sg->state = SEG_ORPHAN;
        }
        if (sg->state != SEG_UNHELD)
            sg->note = NOTE_NONE; /* held: no reason to give */
    }
    pid_lookup_free(&l);
}

const char *segment_note(const struct model *m, const struct segment *sg, char *buf, size_t n)
{
    char age[32], min[32];
    const struct shm_mount *mt = &m->scan->mounts.items[sg->mount];
    switch (sg->note) {
    case NOTE_YOUNG:
        snprintf(buf, n,
                 "written %s ago, younger than orphan_min_age %s: it may be in flight between "
                 "processes",
                 fmt_duration(age, sizeof(age), (double)segment_age_s(m, sg)),
                 fmt_duration(min, sizeof(min), m->orphan_min_age_s));
        break;
    case NOTE_SHARED:
        snprintf(buf, n,
                 "pid %d is alive in none of the %zu pid namespaces that reach %s, but which one "
                 "wrote it is unknown",
                 (int)sg->creator_pid, m->mounts[sg->mount].pids.npidns, mt->path);
        break;
    case NOTE_UNPROVEN:
        snprintf(buf, n,
                 "pid %d is not alive here, but processes outside this pid namespace may write "
                 "to %s (--trust-pids if they cannot)",
                 (int)sg->creator_pid, mt->path);
        break;
    default: buf[0] = '\0';
    }
    return buf;
}

static void figures(struct model *m)
{
    const struct scan *s = m->scan;
    struct totals *t = &m->totals;
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        struct mount_figures *f = &m->mounts[sg->mount];
        f->nsegments++;
        t->segments++;
        if (sg->state == SEG_HIDDEN) {
            f->hidden += sg->alloc;
            t->hidden++;
            t->hidden_bytes += sg->alloc;
        } else {
            f->named += sg->alloc;
        }
        if (sg->state == SEG_ORPHAN) {
            f->orphan += sg->alloc;
            if (sg->earlier_run)
                f->leftover += sg->alloc;
            t->orphans++;
            t->orphan_bytes += sg->alloc;
        }
        if (sg->state == SEG_UNHELD)
            t->unheld++;
        if (sg->state == SEG_IN_USE)
            t->in_use++;
        if ((sg->state == SEG_IN_USE || sg->state == SEG_HIDDEN) && sg->size > sg->alloc &&
            sg->alloc_known)
            f->pending += sg->size - sg->alloc;
    }
    for (size_t i = 0; i < s->mounts.n; i++) {
        const struct shm_mount *mt = &s->mounts.items[i];
        struct mount_figures *f = &m->mounts[i];
        uint64_t seen = f->named + f->hidden;
        f->unattributed = mt->stat_ok && mt->listed && mt->used > seen ? mt->used - seen : 0;
    }
}

/* Whether mount i is another listed mount of ctr than `mount`, itself
 * ctr's (other_shm, other_rec). */
static bool other_mount(const struct scan *s, size_t mount, size_t ctr, size_t i)
{
    return i != mount && mount < s->mounts.n && s->mounts.items[i].stat_ok &&
           node_owner_index(&s->node, mount) == ctr && node_owner_index(&s->node, i) == ctr;
}

/* The used bytes of the listed mounts other than `mount` whose owner is ctr
 * (node_owner_index): their pages are charged to ctr's cgroup too. None
 * when mount itself is not ctr's. *n how many, *first the first of them
 * (SIZE_MAX: none). A mount whose size could not be read adds nothing. */
static uint64_t other_shm(const struct model *m, size_t mount, size_t ctr, size_t *n,
                          size_t *first)
{
    const struct scan *s = m->scan;
    uint64_t sum = 0;
    *n = 0;
    *first = SIZE_MAX;
    for (size_t i = 0; i < s->mounts.n; i++) {
        if (!other_mount(s, mount, ctr, i))
            continue;
        sum += s->mounts.items[i].used;
        if ((*n)++ == 0)
            *first = i;
    }
    return sum;
}

uint64_t model_budget_other_shm(const struct model *m, const struct budget *b, size_t *n,
                                size_t *first)
{
    if (b >= m->mount_budgets && b < m->mount_budgets + m->nmount_budgets) {
        size_t i = (size_t)(b - m->mount_budgets);
        return other_shm(m, i, node_owner_index(&m->scan->node, i), n, first);
    }
    return other_shm(m, 0, NODE_HOST, n, first); /* the top-level budget: the first mount's */
}

/* The budget of mount `mount` (none past the scan's mounts: the top-level
 * budget of a scan without mounts) against cg, with the processes of
 * container ctr (all of them when every process is the host's, as without
 * --all). The top-level budget (top) has the observed peaks and recent OOM
 * kills of o (the host's first mount's); a mount's budget those of its own
 * entry in o->mount_memory, or, without one, the top-level's peaks for the
 * first mount only and its recent OOM kills for every mount of the host,
 * whose cgroup they all share. The listed mounts of the same owner count
 * against the same limit (other_shm), and in its -m at other_rec, their
 * recommended sizes (budget). */
static void budget_of(struct model *m, const struct model_opts *o, size_t mount, bool top,
                      const struct cgroup_info *cg, size_t ctr, uint64_t other_rec,
                      struct budget *out)
{
    const struct scan *s = m->scan;
    struct budget_input in = {
        .cg = cg,
        .mem_total = s->mem.total,
        .warn_pct = o->warn_pct,
        .crit_pct = o->crit_pct,
        .peak_shm = mount == 0 ? o->peak_shm : 0,
        .peak_app = mount == 0 ? o->peak_app : 0,
        .oom_recent = ctr == NODE_HOST ? o->oom_recent : 0,
    };
    if (!top && o->mount_memory && mount < s->mounts.n) {
        char key[sizeof(o->mount_memory->items->key)];
        const struct mount_mem *e =
            mount_memory_find(o->mount_memory, mount_memory_key(s, mount, key, sizeof(key)));
        in.peak_shm = e ? e->peak_shm : 0;
        in.peak_app = e ? e->peak_app : 0;
        in.oom_recent = e ? e->oom_recent : 0;
    }
    if (mount < s->mounts.n && s->mounts.items[mount].stat_ok) { /* else unknown, not 0 */
        const struct shm_mount *mt = &s->mounts.items[mount];
        in.shm_size = mt->size;
        in.shm_used = mt->used;
        in.shm_avail = mt->avail;
        in.inodes = mt->inodes;
        in.inodes_free = mt->inodes_free;
        in.pending = m->mounts[mount].pending;
        in.leftover = m->mounts[mount].leftover;
        in.path = mt->path;
    }
    size_t nother, first;
    char several[48];
    in.shm_other = other_shm(m, mount, ctr, &nother, &first);
    in.shm_other_rec = other_rec;
    if (nother == 1) {
        in.other = s->mounts.items[first].path;
    } else if (nother > 1) {
        snprintf(several, sizeof(several), "%zu other shm mounts", nother);
        in.other = several;
    }
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct mproc *mp = &m->procs[i];
        if (mp->ctr != ctr)
            continue;
        if (mp->role == ROLE_WORKER)
            in.workers_present = true;
        if (mp->role != ROLE_ZOMBIE)
            in.rss_anon_sum += s->procs.items[mp->proc].rss_anon;
    }
    budget_compute(&in, out);
}

/* The sum of the recommended sizes (rec_shm_size, of their own budgets) of
 * the mounts other_shm counts for `mount` and ctr; never past UINT64_MAX. */
static uint64_t other_rec(const struct model *m, size_t mount, size_t ctr)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m->scan->mounts.n; i++)
        if (other_mount(m->scan, mount, ctr, i) &&
            __builtin_add_overflow(sum, m->mount_budgets[i].rec_shm_size, &sum))
            sum = UINT64_MAX;
    return sum;
}

/* Each mount's budget, then the top-level one (the first mount's, if any).
 * A mount's recommended -m counts the other mounts of its owner at their
 * recommended sizes, known once their own budgets are made: a mount with
 * such others has its budget made again with them (its own recommended
 * size does not change). */
static void budget(struct model *m, const struct model_opts *o)
{
    const struct scan *s = m->scan;
    m->mount_budgets = xcalloc(s->mounts.n, sizeof(*m->mount_budgets));
    m->nmount_budgets = s->mounts.n;
    for (size_t i = 0; i < s->mounts.n; i++)
        budget_of(m, o, i, false, scan_mount_cgroup(s, i), node_owner_index(&s->node, i), 0,
                  &m->mount_budgets[i]);
    for (size_t i = 0; i < s->mounts.n; i++) {
        uint64_t rec = other_rec(m, i, node_owner_index(&s->node, i));
        if (!rec)
            continue;
        budget_free(&m->mount_budgets[i]); /* its rec_shm_size stays: rec is not in it */
        budget_of(m, o, i, false, scan_mount_cgroup(s, i), node_owner_index(&s->node, i), rec,
                  &m->mount_budgets[i]);
    }
    budget_of(m, o, 0, true, &s->cgroup, NODE_HOST, other_rec(m, 0, NODE_HOST), &m->budget);
}

const struct budget *model_mount_budget(const struct model *m, size_t i)
{
    return i < m->nmount_budgets ? &m->mount_budgets[i] : &m->budget;
}

bool model_mount_seen_by(const struct model *m, size_t i, size_t ctr)
{
    const struct scan_node *n = &m->scan->node;
    if (i >= n->nmounts)
        return true; /* no node facts: one world */
    const struct node_mount *nm = &n->mounts[i];
    if (ctr == NODE_HOST)
        return nm->host_sees || !n->all;
    for (size_t k = 0; k < nm->nctrs; k++)
        if (nm->ctrs[k] == ctr)
            return true;
    return false;
}

void model_build(const struct scan *s, const struct model_opts *o, struct model *m)
{
    memset(m, 0, sizeof(*m));
    m->scan = s;
    m->now = (int64_t)s->time.tv_sec;
    m->orphan_min_age_s = o->orphan_min_age_s;
    m->mounts = xcalloc(s->mounts.n, sizeof(*m->mounts));
    join(m);
    segsort(m->segs, m->nsegs);
    fold_folders(m);
    classify(m, o);
    figures(m);
    roles_assign(m, o->memory);
    loader_observe(m, o->peaks);
    budget(m, o);
    loader_budget(m);
}

void model_free(struct model *m)
{
    free(m->holder_pool); /* every segment's holders */
    free(m->folder_pool);
    free(m->segs);
    free(m->procs);
    for (size_t i = 0; i < m->ngroups; i++) {
        free(m->groups[i].workers);
        free(m->groups[i].managers);
    }
    free(m->groups);
    free(m->mounts);
    budget_free(&m->budget);
    for (size_t i = 0; i < m->nmount_budgets; i++)
        budget_free(&m->mount_budgets[i]);
    free(m->mount_budgets);
    memset(m, 0, sizeof(*m));
}

const struct mproc *model_find_proc(const struct model *m, pid_t pid)
{
    size_t lo = 0, hi = m->nprocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        pid_t p = m->scan->procs.items[m->procs[mid].proc].pid;
        if (p == pid)
            return &m->procs[mid];
        if (p < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int64_t segment_age_s(const struct model *m, const struct segment *sg)
{
    return sg->mtime && m->now > sg->mtime ? m->now - sg->mtime : 0;
}

const struct group *model_find_group(const struct model *m, pid_t main_pid)
{
    /* m->groups is sorted by main pid (roles.c). */
    return m->ngroups ? bsearch(&main_pid, m->groups, m->ngroups, sizeof(*m->groups), pid_cmp)
                      : NULL;
}

const struct proc *model_proc(const struct model *m, const struct mproc *mp)
{
    return &m->scan->procs.items[mp->proc];
}

const struct proc *model_group_main(const struct model *m, const struct group *g)
{
    return &m->scan->procs.items[g->main_proc];
}

const struct proc *model_holder_proc(const struct model *m, const struct seg_holder *h)
{
    return h->proc >= 0 ? &m->scan->procs.items[h->proc] : NULL;
}

const struct proc *model_scan_proc(const struct model *m, pid_t pid)
{
    return procs_find(&m->scan->procs, pid);
}

size_t model_nmounts(const struct model *m)
{
    return m->scan->mounts.n;
}

const struct shm_mount *model_mount(const struct model *m, size_t i)
{
    return &m->scan->mounts.items[i];
}

const struct shm_mount *model_segment_mount(const struct model *m, const struct segment *sg)
{
    return &m->scan->mounts.items[sg->mount];
}

size_t model_proc_ctr(const struct model *m, const struct proc *p)
{
    return node_proc_ctr(&m->scan->node, (size_t)(p - m->scan->procs.items));
}

const struct scan_node *model_node(const struct model *m)
{
    return &m->scan->node;
}

const struct node_ctr *model_ctr(const struct model *m, size_t ctr)
{
    const struct scan_node *n = &m->scan->node;
    return ctr < n->nctrs ? &n->ctrs[ctr] : NULL;
}

const struct cgroup_info *model_cgroup(const struct model *m)
{
    return &m->scan->cgroup;
}

const struct cgroup_info *model_mount_cgroup(const struct model *m, size_t i)
{
    return scan_mount_cgroup(m->scan, i);
}

const struct shm_dir *model_dirs(const struct model *m, size_t *n)
{
    *n = m->scan->files.ndirs;
    return m->scan->files.dirs;
}

const struct sysv_list *model_sysv(const struct model *m)
{
    return &m->scan->sysv;
}

const struct warnings *model_warnings(const struct model *m)
{
    return &m->scan->warn;
}

struct timespec model_scan_time(const struct model *m)
{
    return m->scan->time;
}

double model_scan_duration(const struct model *m)
{
    return m->scan->duration_s;
}

bool model_holders_scanned(const struct model *m)
{
    return m->scan->holders_scanned;
}

pid_t model_target_pid(const struct model *m)
{
    return m->scan->target_pid;
}

const char *model_target_host(const struct model *m)
{
    return m->scan->target_host;
}

unsigned long model_view_pidns(const struct model *m, bool *initial)
{
    *initial = m->scan->ns.view_initial;
    return m->scan->ns.view_pidns;
}

double model_stalled(const struct model *m, pid_t *pid, int *fd)
{
    *pid = m->scan->stalled_pid;
    *fd = m->scan->stalled_fd;
    return m->scan->stalled_s;
}
