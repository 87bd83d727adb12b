/* The model: a scan interpreted. Segments joined to their holders (by
 * device and inode), their states and kinds, process roles and DataLoader
 * groups, per-mount byte figures and the memory budget. Pure functions of
 * the scan; no I/O. */
#ifndef SHMWATCH_MODEL_H
#define SHMWATCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/scan.h"
#include "model/budget.h"
#include "model/history.h"
#include "model/pidtrust.h"

enum seg_state { SEG_IN_USE, SEG_HIDDEN, SEG_ORPHAN, SEG_UNHELD };
/* The kinds of doc/design.md's table; KIND_OTHER is anything else. */
enum seg_kind {
    KIND_TORCH, KIND_JOBLIB, KIND_OMP, KIND_NCCL, KIND_PYTHON, KIND_SEM, KIND_MPI, KIND_UCX,
    KIND_RAY, KIND_DALI, KIND_DEEPSPEED, KIND_PULSE, KIND_CHROMIUM, KIND_OTHER, KIND_COUNT
};
enum proc_role {
    ROLE_NONE, ROLE_MAIN, ROLE_WORKER, ROLE_SHM_MANAGER, ROLE_ORPHAN_WORKER, ROLE_ZOMBIE,
    ROLE_HOLDER,
};

/* What proved an orphaned worker (model/roles.c), bits of mproc.orphan_proof:
 * a DataLoader worker by its name, or by its caught signals with libtorch
 * mapped, whose parent is not its main. */
enum orphan_proof {
    ORPHAN_BY_NAME = 1,
    ORPHAN_BY_SIGNALS = 2,
};

/* Why a segment held by nobody is not (or not yet) an orphan, though the pid
 * in its name is not alive where it was looked up (segment_note says it). */
enum seg_note {
    NOTE_NONE,
    NOTE_YOUNG,    /* younger than orphan_min_age: it may be in flight */
    NOTE_SHARED,   /* the mount is at /dev/shm in several pid namespaces */
    NOTE_UNPROVEN, /* the watcher cannot see every process that may reach the mount */
};

struct seg_holder {
    pid_t pid;
    int fd;      /* -1: mapped only */
    int32_t proc; /* index into the scan's processes, -1 when the scan read none of
                   * that pid (model_holder_proc); set once by model_build */
    bool mapped;
};

struct segment {
    /* Ordered, and its indexes 32-bit, so that the record has little
     * padding: a model keeps one per segment (up to 100,000), and
     * their pages are a good part of what a snapshot costs
     * (doc/performance.md). */
    const char *name;    /* relative to the mount: the scan's own string, or "?" when no
                          * holder's link or mapping could be read */
    dev_t dev;
    ino_t ino;
    uint64_t size, alloc;
    int64_t mtime;
    int64_t ctime;       /* status change time, 0 when not read (a held file's) */
    struct seg_holder *holders; /* a slice of the model's holder_pool */
    uint32_t nholders;   /* at most the scan's holder records */
    uint32_t mount;      /* index into the scan's mounts */
    enum file_type type;
    uid_t uid;
    enum seg_state state;
    enum seg_kind kind;
    pid_t creator_pid;   /* as a pid of this machine when it could be mapped */
    int32_t creator_proc; /* index into the scan's processes when creator_alive, else -1 */
    pid_t group;         /* main pid of its DataLoader group, 0 for none */
    enum seg_note note;
    bool alloc_known;    /* false: a mapping's length stands in for the allocation */
    bool has_creator;    /* the name carries a creator pid */
    bool creator_alive;
    bool creator_unknown; /* whether the creator lives cannot be told (the pid was
                           * not alive where looked, but another pid namespace may
                           * have written it): creator_alive is false, and means
                           * nothing */
    bool earlier_run;     /* unheld, and last changed before every process that can
                           * write its mount now started (model/pidtrust.h,
                           * first_start): its creator is gone with an earlier run */
};

struct mproc {
    size_t proc;         /* index into scan->procs: model_proc(m, mp) */
    enum proc_role role;
    pid_t group;         /* 0 for none */
    uint64_t shm_bytes;  /* allocation of the segments it holds */
    size_t nsegments;
    size_t ctr;          /* its container (scan->node.ctrs), NODE_HOST for none */
    unsigned orphan_proof; /* ROLE_ORPHAN_WORKER: enum orphan_proof bits, else 0 */
};

struct group {
    pid_t main_pid;
    size_t main_proc;    /* index into scan->procs: model_group_main(m, g) */
    pid_t *workers;
    size_t nworkers, workers_cap;
    pid_t *managers;
    size_t nmanagers, managers_cap;
    size_t nsegments;
    uint64_t shm_bytes;
    /* Learnt from its segments (loader.c); 0 when it has none. */
    uint64_t batch_shm_bytes;     /* one batch's shm, all its tensors, in whole pages */
    uint64_t batch_segment_bytes; /* its largest tensor: one segment per batch in flight */
    size_t batches_in_flight;
    size_t worker_prefetched;     /* of them, the most one worker holds that the main
                                   * has not received */
    bool worker_prefetched_known; /* whether the holders tell worker_prefetched (a batch
                                   * segment has a holder; a group loaded from a
                                   * recording: no) */
    size_t batch_segments;        /* its torch segments, whose bytes... */
    uint64_t batch_segments_bytes; /* ...in whole pages are the batches in flight */
    uint64_t shm_per_worker;      /* shm_bytes over the live workers */
    uint64_t peak_shm, peak_batch_shm; /* the highest since this shmwatch started */
    size_t ctr;                   /* its main's container, NODE_HOST for none */
};

/* The peaks of each group across scans (the dashboard's, a --json stream's). */
struct group_peak {
    pid_t main_pid;
    uint64_t peak_shm, peak_batch_shm;
};

struct group_peaks {
    struct group_peak *items;
    size_t n, cap;
};

#define GROUP_PEAKS_MAX 4096

/* Each mount's budget history across scans (the dashboard's, a --json
 * stream's), so that every container's budget has its own: the OOM kills of
 * the mount's owner's cgroup seen rising, and the mount's peak shm and its
 * budget's peak app. Keyed by the owner container's id and the mount's
 * device ("<id> MAJ:MIN"), by its mount namespace and device for a
 * container no runtime names ("mntns N MAJ:MIN": a device number freed by
 * one is soon another's), or by the device alone for the host's; an entry
 * whose mount a scan no longer shows is forgotten (the container is gone),
 * and at most MOUNT_MEMORY_MAX are kept. */
struct mount_mem {
    char key[96];
    struct oom_watch oom;
    uint64_t oom_recent;       /* oom_watch_recent at the last observation */
    uint64_t oom_new;          /* kills new at the last observation (oom_watch_add) */
    uint64_t peak_shm, peak_app;
};

struct mount_memory {
    struct mount_mem *items;
    size_t n, cap;
};

#define MOUNT_MEMORY_MAX 4096

struct model;
/* The key of mount i of s (as above) into buf. */
const char *mount_memory_key(const struct scan *s, size_t i, char *buf, size_t n);
/* Before model_build: feeds each mount's owner's OOM kill count (at time t)
 * and the mount's use; forgets the mounts s no longer shows. */
void mount_memory_observe(struct mount_memory *mm, const struct scan *s, double t);
/* After model_build: each mount budget's app into its peak. */
void mount_memory_learn(struct mount_memory *mm, const struct model *m);
const struct mount_mem *mount_memory_find(const struct mount_memory *mm, const char *key);
void mount_memory_free(struct mount_memory *mm);

struct mount_figures {
    /* unattributed: used minus named and hidden; 0 when the mount's use or
     * its listing is unknown */
    uint64_t named, hidden, orphan, unattributed, pending;
    uint64_t leftover; /* of orphan: those an earlier run left (segment.earlier_run) */
    size_t nsegments;
    struct mount_pids pids; /* what a creator pid in a name proves here */
};

struct totals {
    size_t segments, hidden, orphans, unheld, in_use, zombies, orphan_workers;
    uint64_t hidden_bytes, orphan_bytes;
};

/* Workers seen in earlier scans and the main each served, sorted by worker
 * pid. An orphan made by one of them still belongs to that main's group while
 * the main lives: a single scan cannot know it (the creator is gone), the
 * dashboard remembers it. */
struct worker_seen {
    pid_t worker, main;
};

/* pid_cmp (util/fileio.h) orders groups and worker_seen records by the pid
 * each begins with. */
_Static_assert(offsetof(struct group, main_pid) == 0 && offsetof(struct worker_seen, worker) == 0,
               "pid_cmp reads a record's pid at its start");

struct worker_memory {
    struct worker_seen *items; /* sorted by worker pid, each worker once */
    size_t n, cap;
};

/* Adds every worker of m's groups (a later scan wins for a reused pid).
 * At most WORKER_MEMORY_MAX entries are kept: past that it starts afresh. */
#define WORKER_MEMORY_MAX 65536
void worker_memory_learn(struct worker_memory *mem, const struct model *m);
void worker_memory_free(struct worker_memory *mem);

struct model_opts {
    double warn_pct, crit_pct; /* fill thresholds for the verdict */
    uint64_t peak_shm, peak_app; /* observed peaks (0: use the current figures) */
    uint64_t oom_recent;         /* the cgroup's OOM kills seen rising lately (history.h) */
    const struct worker_memory *memory; /* optional */
    const struct group_peaks *peaks;    /* optional: earlier scans' group peaks */
    const struct mount_memory *mount_memory; /* optional: each mount's OOM kills and peaks
                                 * (mount_memory_observe): its budget's, in place of the
                                 * host's first mount's oom_recent and peaks above */
    double orphan_min_age_s;   /* a segment younger than this is never an orphan (in
                                * flight); default 60 */
    bool trust_pids;           /* the user says a mount not shown private is (inside a
                                * pid namespace): its creator pids are this namespace's */
};

struct model {
    const struct scan *scan;
    int64_t now;
    double orphan_min_age_s; /* as model_opts */
    struct segment *segs;
    size_t nsegs, segs_cap;
    struct seg_holder *holder_pool; /* the segments' holders arrays are slices of it */
    struct seg_holder *folder_pool; /* the folders' holders (copies of their files') */
    struct mproc *procs;      /* interesting processes only, sorted by pid */
    size_t nprocs, procs_cap;
    struct group *groups;     /* sorted by main pid */
    size_t ngroups, groups_cap;
    struct mount_figures *mounts; /* one per scan->mounts item */
    struct totals totals;
    struct budget budget;
    /* One per scan->mounts item: the budget of the cgroup that owns the
     * mount (the host's mounts: the same figures as budget but for that
     * mount; a container's: its cgroup, its processes). */
    struct budget *mount_budgets;
    size_t nmount_budgets;
};

void model_opts_default(struct model_opts *o);
/* The model points into s (its processes, mounts and file names): s must
 * outlive it. */
void model_build(const struct scan *s, const struct model_opts *o, struct model *m);
void model_free(struct model *m);

/* The budget of mount i (model_build fills one per mount). */
const struct budget *model_mount_budget(const struct model *m, size_t i);
/* What else b (a budget of m) counts against its limit: the used bytes of
 * the other listed shm mounts charged to the same cgroup (of the same
 * owner), *n how many there are, *first the index of the first (SIZE_MAX:
 * none). */
uint64_t model_budget_other_shm(const struct model *m, const struct budget *b, size_t *n,
                                size_t *first);
/* Whether container ctr (NODE_HOST: the host's namespace) sees mount i. */
bool model_mount_seen_by(const struct model *m, size_t i, size_t ctr);

/* The model's entry for a pid, or NULL when the process is not interesting. */
const struct mproc *model_find_proc(const struct model *m, pid_t pid);

/* Accessors: what reports, the dashboard and the actions read of the scan
 * behind a model. The model's own arrays (segs, procs, groups, mounts) are
 * read directly; the scan's processes and mounts through these. */
/* The process of an interesting one. */
const struct proc *model_proc(const struct model *m, const struct mproc *mp);
const struct proc *model_group_main(const struct model *m, const struct group *g);
/* The process that holds through h, NULL when the scan read none of its pid. */
const struct proc *model_holder_proc(const struct model *m, const struct seg_holder *h);
/* Any process the scan read (interesting or not), NULL for none. */
const struct proc *model_scan_proc(const struct model *m, pid_t pid);
/* The watched mounts: figures m->mounts[i] go with model_mount(m, i). */
size_t model_nmounts(const struct model *m);
const struct shm_mount *model_mount(const struct model *m, size_t i);
const struct shm_mount *model_segment_mount(const struct model *m, const struct segment *sg);
/* The container of a process of the scan (p from the accessors above), NODE_HOST
 * for none; a zombie's is its parent's (node_proc_ctr). */
size_t model_proc_ctr(const struct model *m, const struct proc *p);
/* The node's facts: each mount's id and containers, the containers (node.h). */
const struct scan_node *model_node(const struct model *m);
/* Container ctr of the node (an index such as model_proc_ctr's), NULL for
 * the host (NODE_HOST). */
const struct node_ctr *model_ctr(const struct model *m, size_t ctr);
/* The memory cgroup of the watched world, and the one that owns mount i (its
 * owner container's, else the watched world's). */
const struct cgroup_info *model_cgroup(const struct model *m);
const struct cgroup_info *model_mount_cgroup(const struct model *m, size_t i);
/* The directories at the top of each mount (files.h: struct shm_dir). */
const struct shm_dir *model_dirs(const struct model *m, size_t *n);
const struct sysv_list *model_sysv(const struct model *m);
/* What the scan could not read. */
const struct warnings *model_warnings(const struct model *m);
/* The scan's account of itself: when it started (wall clock), how long it
 * took, whether the holders were searched; the watched process (0: the
 * watcher's own world) and its /etc/hostname (NULL: none); the pid
 * namespace whose processes /proc lists (0: unknown) and whether it is the
 * machine's first. */
struct timespec model_scan_time(const struct model *m);
double model_scan_duration(const struct model *m);
bool model_holders_scanned(const struct model *m);
pid_t model_target_pid(const struct model *m);
const char *model_target_host(const struct model *m);
unsigned long model_view_pidns(const struct model *m, bool *initial);
/* A stand-in for a scan that has not ended (scan_stalled): how long it has
 * been running (0 for a complete scan), the process (0: unknown) and fd
 * (-1: unknown) it is reading. */
double model_stalled(const struct model *m, pid_t *pid, int *fd);
const struct group *model_find_group(const struct model *m, pid_t main_pid);
/* Seconds since the segment was last written, at the scan's time; 0 when
 * unknown or in the future (a clock that went back). */
int64_t segment_age_s(const struct model *m, const struct segment *sg);

/* The one-line reason of sg->note ("" for NOTE_NONE), in buf. */
const char *segment_note(const struct model *m, const struct segment *sg, char *buf, size_t n);
/* The model default of orphan_min_age (seconds). */
#define ORPHAN_MIN_AGE_DEFAULT 60

const char *seg_state_name(enum seg_state s);
const char *seg_kind_name(enum seg_kind k);
const char *proc_role_name(enum proc_role r);

/* kind.c: classification by name alone. name_facts gives the kind and the
 * creator pid the name carries (0 for none) in one reading of the name. */
enum seg_kind name_facts(const char *basename, pid_t *creator);
/* The creator pid a name carries (torch_<pid>_<n>[_<k>], __KMP_REGISTERED_LIB_<pid>[_<uid>],
 * joblib_memmapping_folder_<pid>_...). */
bool name_creator_pid(const char *basename, pid_t *pid);
/* A kind by its name ("torch", ...); false for an unknown one. */
bool seg_kind_parse(const char *s, enum seg_kind *out);
/* Whether names of this kind carry their creator's pid: only those can be
 * proved orphans. */
bool seg_kind_has_creator(enum seg_kind k);

/* loader.c: each group's batch, batches in flight, shm per worker and
 * peaks (from gp, which may be NULL); model_build calls it. */
void loader_observe(struct model *m, const struct group_peaks *gp);
/* Keeps m's group peaks in gp for the next scan. */
void group_peaks_learn(struct group_peaks *gp, const struct model *m);
void group_peaks_free(struct group_peaks *gp);
/* Workers that fit in room when each prefetches `prefetch` batches of
 * `batch` bytes and the main holds PLAN_MAIN_HELD more: (room / batch -
 * PLAN_MAIN_HELD) / prefetch, rounded down; 0 when not even one fits or
 * batch is 0. */
uint64_t loader_workers_fit(uint64_t room, uint64_t batch, uint64_t prefetch);
/* Fills the budgets' loader figures (after budget_compute): how many
 * workers fit the mount and the limit. The top-level budget's from the
 * busiest group; each mount's budget's from the busiest of its owner's
 * groups (its container's, or the host's) whose batches lie on that mount,
 * against that mount's size and that owner's limit. */
void loader_budget(struct model *m);
/* The prefetch factor that explains a group's batches in flight: the most
 * batches one worker holds that the main has not received (worker_prefetched;
 * the main's own may include batches it received out of order, which still
 * count against the workers' prefetch). Where the holders do not tell
 * (worker_prefetched_known false, or the main holds every batch in flight),
 * the main is taken to hold PLAN_MAIN_HELD and the workers the rest, per
 * worker, rounded. 2, the default, when it cannot tell (no workers, or no
 * more than PLAN_MAIN_HELD batches in flight). */
uint64_t loader_prefetch_of(const struct group *g);

/* errors.c: the messages users meet when a limit runs out. */
enum shm_limit { SHM_LIMIT_SHM_SIZE, SHM_LIMIT_MEMORY };
struct shm_error {
    enum seg_kind kind;   /* whose message (KIND_OTHER: any process's) */
    enum shm_limit limit; /* which limit it means */
    const char *message;
};
const char *shm_limit_name(enum shm_limit l);
/* Every message, in the guide's order. */
size_t shm_errors_all(const struct shm_error **out);
/* The messages the state of mount `mount` of m leads to: *first is the
 * limit that runs out first (the memory limit when the headroom of the
 * mount's budget is smaller than its free space), and the messages are
 * those of the kinds on the mount (a DataLoader's when none is known yet)
 * for it. At most max. */
size_t shm_errors_ahead(const struct model *m, size_t mount, enum shm_limit *first,
                        const struct shm_error **out, size_t max);

/* roles.c: process roles and DataLoader groups over a model whose segments
 * are already joined. */
void roles_assign(struct model *m, const struct worker_memory *mem);

#endif
