/* Process roles and DataLoader groups.
 *
 * A DataLoader is a main process whose workers are its children. torch >= 2.5
 * names workers (pt_data_worker, pt_multiprocess, pt_thread_data_); older
 * releases (Debian's 1.13) do not, so a worker is also recognised as a child
 * running the same executable as its parent that shows torch evidence: it
 * created or holds torch segments, or it started a torch_shm_manager, or it
 * has libtorch loaded and catches the signals torch's workers catch. The
 * topmost process of such a chain is the main (so a launcher that runs the
 * same interpreter is not mistaken for one). torch >= 2.x names torchrun's
 * elastic agent pt_elastic: its children are training processes (ranks),
 * never DataLoader workers, whatever segments they hold. Python's
 * forkserver (multiprocessing_context='forkserver') stands between a main
 * and its workers: it is the main's child, the workers are its children.
 * It is passed through, neither main nor worker: a worker it forked is a
 * worker of the forkserver's parent, the main it serves; once that main is
 * dead, the forkserver lives on as long as its workers do (they hold its
 * pipe), and they are orphaned workers. The names, the signals and the
 * forkserver's command line are util/torchprint.h's, which the /proc walk
 * uses too. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/fileio.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

const char *proc_role_name(enum proc_role r)
{
    switch (r) {
    case ROLE_MAIN: return "main";
    case ROLE_WORKER: return "worker";
    case ROLE_SHM_MANAGER: return "shm_manager";
    case ROLE_ORPHAN_WORKER: return "orphan_worker";
    case ROLE_ZOMBIE: return "zombie";
    case ROLE_HOLDER: return "holder";
    default: return "none";
    }
}

/* The mount namespace whose /dev/shm is watched: the --pid target's, else
 * the scanning process's; 0 when unknown. */
static unsigned long watched_mntns(const struct model *m)
{
    const struct scan *s = m->scan;
    const struct proc *p = procs_find(&s->procs, s->target_pid > 0 ? s->target_pid : s->self_pid);
    return p ? p->mntns : 0;
}

/* A process that sees another /dev/shm than the watched one (another
 * container) is only of interest through segments of the watched mounts:
 * in the watched mount namespace, or in one whose mountinfo shows a
 * watched mount. */
static bool in_world(const struct scan *s, unsigned long world, const struct proc *p)
{
    if (!world || !p->mntns || p->mntns == world)
        return true;
    return nsmap_shows_first(&s->ns, p->mntns, s->mounts.n);
}

/* A worker's caught signals with libtorch mapped mark a worker even when it
 * holds no segment and carries no name (torch < 2.5; util/torchprint.h). */
static bool looks_like_worker(const struct model *m, const struct proc *p)
{
    return torchprint_worker_signals(p->sigcatch) &&
           holders_torch_loaded(&m->scan->holders, p->pid);
}

static bool same_program(const struct proc *a, const struct proc *b)
{
    if (a->exe && b->exe)
        return strcmp(a->exe, b->exe) == 0;
    return strcmp(a->comm, b->comm) == 0;
}

/* A worker torch has named (so its comm is no longer its program's) whose
 * program cannot be compared with its parent's (one exe unreadable: another
 * user's process, without root), but whom its parent forked: still in the
 * parent's process group, and the parent not init (a reparented orphan's
 * new parent never shares its group). */
static bool forked_named_worker(const struct proc *p, const struct proc *parent,
                                enum torch_comm comm)
{
    return comm == TORCH_COMM_WORKER && (!p->exe || !parent->exe) && parent->pid != 1 &&
           p->pgid == parent->pgid;
}

/* What Python's forkserver is to the roles (the header). */
enum forkserver {
    FORKSERVER_NONE,     /* no forkserver, or one that stands as any process does */
    FORKSERVER_PASSED,   /* its workers are its parent's */
    FORKSERVER_ORPHANED, /* its main is dead: its workers have none */
};

/* p is a forkserver when it runs its command line (util/torchprint.h) and
 * its parent does not (the processes it forks keep that command line), and
 * it is no worker by name or fingerprint (a worker whose forkserver has
 * exited keeps the command line too). It is passed through when its parent
 * runs the same program (the main started it with its own interpreter).
 * It is orphaned when its parent runs another program and is of another
 * session: the main shares its session with the forkserver it started, so
 * that parent is the init or subreaper that took the forkserver in when its
 * main died. A forkserver whose parent runs another program in its own
 * session (Python embedded in another executable, the forkserver reparented
 * to a subreaper of the main's session) stands as any process does, its
 * workers its own: never orphans. */
static enum forkserver forkserver(const struct model *m, const struct proc *p,
                                  const struct proc *parent, enum torch_comm comm)
{
    if (p->state == 'Z' || !parent || !torchprint_forkserver(p->cmdline) ||
        torchprint_forkserver(parent->cmdline) || comm == TORCH_COMM_WORKER ||
        looks_like_worker(m, p))
        return FORKSERVER_NONE;
    if (parent->state != 'Z' && same_program(p, parent))
        return FORKSERVER_PASSED;
    return parent->sid != p->sid ? FORKSERVER_ORPHANED : FORKSERVER_NONE;
}

/* Per-process facts gathered once, indexed like scan->procs. */
struct facts {
    enum torch_comm comm; /* what its name says (util/torchprint.h) */
    enum forkserver forkserver;
    bool evidence;        /* torch evidence */
    bool candidate; /* looks like a worker of its parent */
    bool has_candidate_child;
    enum proc_role role;
    unsigned orphan_proof; /* enum orphan_proof bits */
    pid_t group;
    long parent; /* index of the parent, -1 for none */
    long up;     /* whose worker it may be: its parent, or its forkserver's (-1 for none) */
    bool local;  /* of the watched world (find_facts) */
    uint64_t shm_bytes;  /* allocation of the segments it holds (attach_segments) */
    size_t nsegments;
    size_t counted;      /* the last segment counted for it: its index + 1 */
};

/* Per process: the index of its parent in the scan's processes (-1 for
 * none), built once per model build (a segment's holders and its creator
 * carry their indexes already, model.c); what its name says, looked up once
 * here rather than at each rule that asks; what it is as a forkserver, and
 * so whose worker it may be; and whether it is of the watched world
 * (in_world). One that has ended or is ending (a zombie, or one whose
 * memory is released already: no start_code) has no namespaces left to
 * read: it is of the world of its parent, which reaps it: another world's
 * worker caught as it dies is no orphaned worker of this one. */
static void find_facts(const struct model *m, struct facts *f)
{
    const struct proc_list *pl = &m->scan->procs;
    unsigned long world = watched_mntns(m);
    for (size_t i = 0; i < pl->n; i++) {
        const struct proc *p = &pl->items[i];
        const struct proc *parent = procs_find(pl, p->ppid);
        f[i].parent = parent ? (long)(parent - pl->items) : -1;
        f[i].comm = torchprint_comm(p->comm);
        f[i].forkserver = forkserver(m, p, parent, f[i].comm);
        bool ending = p->state == 'Z' || (!p->kernel_thread && !p->start_code);
        if (ending && !p->mntns)
            f[i].local = !parent || in_world(m->scan, world, parent);
        else
            f[i].local = in_world(m->scan, world, p);
    }
    for (size_t i = 0; i < pl->n; i++) {
        long k = f[i].parent;
        f[i].up = k;
        if (k >= 0 && f[k].forkserver == FORKSERVER_PASSED)
            f[i].up = f[k].parent;
        else if (k >= 0 && f[k].forkserver == FORKSERVER_ORPHANED)
            f[i].up = -1;
    }
}

static void gather_evidence(const struct model *m, struct facts *f)
{
    const struct proc_list *pl = &m->scan->procs;
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        if (sg->kind != KIND_TORCH)
            continue;
        long c = sg->creator_proc; /* -1 unless the creator is alive */
        if (c >= 0)
            f[c].evidence = true;
        for (size_t h = 0; h < sg->nholders; h++) {
            long k = sg->holders[h].proc;
            if (k >= 0)
                f[k].evidence = true;
        }
    }
    for (size_t i = 0; i < pl->n; i++)
        if (f[i].comm == TORCH_COMM_MANAGER && f[i].local && f[i].parent >= 0)
            f[f[i].parent].evidence = true; /* it started a torch_shm_manager */
}

static void assign(const struct model *m, struct facts *f)
{
    const struct proc_list *pl = &m->scan->procs;
    for (size_t i = 0; i < pl->n; i++) {
        const struct proc *p = &pl->items[i];
        long up = f[i].up;
        bool local = f[i].local;
        /* The process that forked it: its program and process group are
         * compared with that one's (a forkserver passed through runs the
         * same program as the main it serves, up). */
        const struct proc *forker = up >= 0 ? &pl->items[f[i].parent] : NULL;
        if (p->state == 'Z') {
            if (local)
                f[i].role = ROLE_ZOMBIE;
        } else if (f[i].comm == TORCH_COMM_MANAGER) {
            if (local)
                f[i].role = ROLE_SHM_MANAGER;
        } else if (up >= 0 && !f[i].forkserver && pl->items[up].state != 'Z' &&
                   node_proc_ctr(&m->scan->node, i) ==
                       node_proc_ctr(&m->scan->node, (size_t)up) &&
                   f[up].comm != TORCH_COMM_LAUNCHER &&
                   (same_program(p, forker) || forked_named_worker(p, forker, f[i].comm)) &&
                   ((f[i].evidence && p->pgid == forker->pgid) ||
                    (local && (f[i].comm == TORCH_COMM_WORKER || looks_like_worker(m, p))))) {
            /* The parent may be pid 1: in a container the main often is.
             * Torch evidence alone (segments, an shm manager child) makes a
             * worker only in its parent's process group, where a fork
             * leaves it: a job started by a program of the same name in a
             * session of its own (a Jupyter kernel under its server, the
             * dashboard's demo under shmwatch) is that program's child, not
             * its worker. */
            f[i].candidate = true;
            f[up].has_candidate_child = true;
        }
    }
    for (size_t i = 0; i < pl->n; i++) {
        if (f[i].candidate && !f[i].has_candidate_child) {
            f[i].role = ROLE_WORKER;
            f[f[i].up].role = ROLE_MAIN;
        }
    }
    for (size_t i = 0; i < pl->n; i++) {
        const struct proc *p = &pl->items[i];
        if (f[i].role != ROLE_NONE || f[i].candidate || p->state == 'Z')
            continue;
        /* A worker by name or fingerprint whose parent (or its
         * forkserver's) is not its main (no candidate above) was orphaned.
         * Mere torch evidence proves no worker, whatever became of its
         * process group's leader: a live main started by a script that has
         * exited holds segments, has init for its parent and a leader that
         * is gone, as an orphan does. reap and K say the fact that holds.
         * A zombie is dead already: one of this world is a zombie above. */
        bool local = f[i].local;
        unsigned proof = 0;
        if (local && f[i].comm == TORCH_COMM_WORKER)
            proof = ORPHAN_BY_NAME;
        else if (local && looks_like_worker(m, p))
            proof = ORPHAN_BY_SIGNALS;
        if (proof) {
            f[i].role = ROLE_ORPHAN_WORKER;
            f[i].orphan_proof = proof;
        }
    }
}

/* The group whose main is main_pid: build_groups made one for every main,
 * and every group a worker, a manager or a segment joins is one of them. */
static struct group *group_of(struct model *m, pid_t main_pid)
{
    return &m->groups[model_find_group(m, main_pid) - m->groups];
}

/* One group per main, sorted by main pid as the processes are; then its
 * workers, and the shm managers its processes started. */
static void build_groups(struct model *m, struct facts *f)
{
    const struct proc_list *pl = &m->scan->procs;
    for (size_t i = 0; i < pl->n; i++) {
        if (f[i].role != ROLE_MAIN)
            continue;
        f[i].group = pl->items[i].pid;
        struct group *g = VEC_PUSH(m->groups, m->ngroups, m->groups_cap);
        g->main_pid = pl->items[i].pid;
        g->main_proc = i;
        g->ctr = node_proc_ctr(&m->scan->node, i);
    }
    for (size_t i = 0; i < pl->n; i++) {
        if (f[i].role != ROLE_WORKER)
            continue;
        f[i].group = f[f[i].up].group; /* its main: its parent, or its forkserver's */
        struct group *g = group_of(m, f[i].group);
        *(pid_t *)VEC_PUSH(g->workers, g->nworkers, g->workers_cap) = pl->items[i].pid;
    }
    for (size_t i = 0; i < pl->n; i++) {
        long parent = f[i].parent;
        if (f[i].role != ROLE_SHM_MANAGER || parent < 0 || !f[parent].group)
            continue;
        f[i].group = f[parent].group;
        struct group *g = group_of(m, f[i].group);
        *(pid_t *)VEC_PUSH(g->managers, g->nmanagers, g->managers_cap) = pl->items[i].pid;
    }
}

/* The main a dead creator served, when it was remembered as a worker and
 * that main still leads a group; 0 otherwise. */
static pid_t remembered_group(const struct model *m, const struct worker_memory *mem,
                              pid_t creator)
{
    const struct worker_seen *w =
        mem && mem->n ? bsearch(&creator, mem->items, mem->n, sizeof(*w), pid_cmp) : NULL;
    return w && model_find_group(m, w->main) ? w->main : 0;
}

/* The group of process k (-1: none) for segment sg: never a group of a
 * container that does not see the segment's mount. 0 for none. */
static pid_t group_seeing(const struct model *m, const struct facts *f, const struct segment *sg,
                          long k)
{
    if (k < 0 || !f[k].group ||
        !model_mount_seen_by(m, sg->mount, node_proc_ctr(&m->scan->node, (size_t)k)))
        return 0;
    return f[k].group;
}

static void attach_segments(struct model *m, struct facts *f, const struct worker_memory *mem)
{
    /* Segments sorted by name come creator by creator: the group of the
     * last one is kept, saving a search of the groups per segment. */
    struct group *g = NULL;
    for (size_t i = 0; i < m->nsegs; i++) {
        struct segment *sg = &m->segs[i];
        sg->group = group_seeing(m, f, sg, sg->creator_proc); /* -1 unless it is alive */
        if (!sg->group && sg->state == SEG_ORPHAN && sg->has_creator)
            sg->group = remembered_group(m, mem, sg->creator_pid);
        /* A pid may hold a segment by several fds: each segment counts once
         * per process, remembered by the last segment counted for it (no
         * search of the segment's earlier holders, which would be quadratic
         * in their number). */
        for (size_t h = 0; h < sg->nholders; h++) {
            long k = sg->holders[h].proc;
            if (!sg->group)
                sg->group = group_seeing(m, f, sg, k);
            if (k < 0 || f[k].counted == i + 1)
                continue;
            f[k].counted = i + 1;
            f[k].shm_bytes += sg->alloc;
            f[k].nsegments++;
            if (f[k].role == ROLE_NONE)
                f[k].role = ROLE_HOLDER;
        }
        if (sg->group) {
            if (!g || g->main_pid != sg->group)
                g = group_of(m, sg->group);
            g->nsegments++;
            g->shm_bytes += sg->alloc;
        }
    }
}

static void list_procs(struct model *m, const struct facts *f)
{
    const struct proc_list *pl = &m->scan->procs;
    for (size_t i = 0; i < pl->n; i++) {
        if (f[i].role == ROLE_NONE)
            continue;
        struct mproc *mp = VEC_PUSH(m->procs, m->nprocs, m->procs_cap);
        mp->proc = i;
        mp->role = f[i].role;
        mp->orphan_proof = f[i].orphan_proof;
        mp->group = f[i].group;
        mp->ctr = node_proc_ctr(&m->scan->node, i);
        mp->shm_bytes = f[i].shm_bytes;
        mp->nsegments = f[i].nsegments;
        if (mp->role == ROLE_ZOMBIE)
            m->totals.zombies++;
        if (mp->role == ROLE_ORPHAN_WORKER)
            m->totals.orphan_workers++;
    }
}

void roles_assign(struct model *m, const struct worker_memory *mem)
{
    const struct proc_list *pl = &m->scan->procs;
    struct facts *f = xcalloc(pl->n, sizeof(*f));
    find_facts(m, f);
    gather_evidence(m, f);
    assign(m, f);
    build_groups(m, f);
    attach_segments(m, f, mem);
    list_procs(m, f);
    free(f);
}

void worker_memory_learn(struct worker_memory *mem, const struct model *m)
{
    size_t add = 0;
    for (size_t g = 0; g < m->ngroups; g++)
        add += m->groups[g].nworkers;
    if (!add)
        return;
    if (mem->n + add > WORKER_MEMORY_MAX)
        mem->n = 0;
    /* A new entry replaces the old one of its pid, else it is added (a
     * model's workers are distinct pids); then all are sorted again. */
    size_t old = mem->n;
    for (size_t g = 0; g < m->ngroups; g++) {
        for (size_t k = 0; k < m->groups[g].nworkers; k++) {
            struct worker_seen w = {m->groups[g].workers[k], m->groups[g].main_pid};
            struct worker_seen *e =
                old ? bsearch(&w, mem->items, old, sizeof(w), pid_cmp) : NULL;
            if (e)
                *e = w;
            else
                *VEC_PUSH(mem->items, mem->n, mem->cap) = w;
        }
    }
    qsort(mem->items, mem->n, sizeof(*mem->items), pid_cmp);
}

void worker_memory_free(struct worker_memory *mem)
{
    free(mem->items);
    memset(mem, 0, sizeof(*mem));
}
