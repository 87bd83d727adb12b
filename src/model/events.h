/* Events (doc/recording.md, "Events"): what happened between two looks at
 * the system, told from the facts of the last model (struct ev_state), the
 * exits the kernel reported, the OOM kill counts and the churn counts. Pure:
 * the caller reads the system and supplies every figure and time. */
#ifndef SHMWATCH_EVENTS_H
#define SHMWATCH_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "model/model.h"

enum event_kind { EV_EXIT, EV_OOM_KILL, EV_SEGMENTS, EV_MOUNT, EV_FILL, EV_RECORDER };
enum exit_cause { CAUSE_SIGBUS, CAUSE_OOM_KILL, CAUSE_SIGNAL, CAUSE_EXIT, CAUSE_UNKNOWN };
enum fill_level { FILL_OK, FILL_WARN, FILL_CRITICAL };

/* One event; the members of its kind are set, strings owned by it. */
struct event {
    enum event_kind kind;
    double t;                  /* wall clock, Unix seconds */
    char *container, *container_name; /* NULL: the host's (null) */
    char *container_ns;               /* its containerd namespace, NULL for none */
    bool container_ns_known;          /* false: a recorded line that does not say it
                                       * (util/ctrref.h) */
    /* exit */
    pid_t pid;
    char comm[16];
    enum proc_role role;
    pid_t group;               /* its DataLoader main, 0 for none */
    bool has_exit_code;
    int exit_code;
    int signal;                /* 0: none or unknown */
    bool core;
    enum exit_cause cause;
    /* oom_kill */
    char *cgroup;
    uint64_t kills;
    pid_t victim;              /* 0: not known */
    char victim_comm[16];
    /* segments, mount, fill */
    char mount_id[32];
    char *mount;
    uint64_t created, removed;
    double interval_s;
    bool appeared;             /* mount: appeared, else gone */
    uint64_t used, size;
    double used_pct;
    enum fill_level level;
    /* recorder */
    const char *what;          /* "start", "stop", "disk_full", "events_off", "stalled" */
    char *detail;
    /* stalled: the scan under way, as a stream's stand-in snapshot says it */
    double stalled_s;          /* how long it has run */
    pid_t stalled_pid;         /* the process it reads, 0: not known */
    int stalled_fd;            /* the fd it reads, -1: none or not known */
};

struct event_list {
    struct event *items;
    size_t n, cap;
};

/* Frees e's strings and empties it. */
void event_clear(struct event *e);
void event_list_clear(struct event_list *l);
void event_list_free(struct event_list *l);
/* A recorder event (what: a literal) with its sentence: the new last of out. */
struct event *events_recorder(struct event_list *out, double t, const char *what,
                              const char *detail);
/* The recorder's "stalled" event: its scan has run stalled_s seconds,
 * reading fd (-1: none) of pid (0: not known); detail says it. */
void events_stalled(struct event_list *out, double t, const char *detail, double stalled_s,
                    pid_t pid, int fd);

/* An event line's "event": "exit", "oom_kill", ... */
const char *event_kind_name(enum event_kind k);
const char *exit_cause_name(enum exit_cause c);
const char *fill_level_name(enum fill_level l);
/* "SIGBUS" for 7, NULL for 0 or a number without a name. */
const char *exit_signal_name(int sig);

/* --- The facts of one model ------------------------------------------ */

struct ev_proc {
    pid_t pid;
    unsigned long long start_ticks;
    char comm[16];
    enum proc_role role;
    pid_t group;
    pid_t ppid, pgid;
    bool torch;                       /* it maps libtorch */
    char *ctr_id, *ctr_name, *ctr_ns; /* ctr_ns: its containerd namespace */
    size_t cg;                 /* its cgroup: index into cgroups, SIZE_MAX for none */
};

struct ev_cgroup {
    char *path;                /* as /proc/PID/cgroup names it, else dir */
    char *dir;                 /* where it is read (below the watcher's root) */
    int version;
    bool known;                /* kills holds the kernel's count */
    uint64_t kills;
    char *ctr_id, *ctr_name, *ctr_ns;
};

/* A mount is its device and the birth time of its root. The kernel gives
 * a freed device number (and a freed mount namespace's number) to the next
 * one made, so a tmpfs that ends and another that starts between two scans
 * can show the same device in a namespace of the same number: the birth
 * time tells them apart. */
struct ev_mount {
    char id[32];               /* "MAJ:MIN" of its device */
    bool born_known;           /* born was read (statx, Linux 5.18+) */
    struct timespec born;      /* birth of its root: when the tmpfs was made */
    char *path;
    char *ctr_id, *ctr_name;   /* its owner container's id and name, NULL for the host's */
    char *ctr_ns;              /* and its containerd namespace, NULL for none */
    bool size_known;
    uint64_t used, size;
    double used_pct;
    enum fill_level level;
};

struct ev_alive {
    pid_t pid;
    unsigned long long start_ticks;
};

/* A process as its /proc/PID/stat said when it ended (or as a zombie): its
 * parent (or, where that is Python's forkserver, the process the
 * forkserver forks for), process group and name. Or, when its parent
 * reaped it first, as the kernel's events said: its parent, no process
 * group (0), and its name when it took one; none (comm_inherited) when it
 * ran no other program and named itself nothing since its fork: its name
 * is its forker's. */
struct ev_child {
    pid_t pid, ppid, pgid;
    char comm[16];
    bool comm_inherited;
};

struct ev_state {
    bool valid;                /* false: no model yet (every difference is a baseline) */
    struct ev_proc *procs;     /* the model's interesting processes, by pid */
    size_t nprocs;
    /* The scan's zombies, by pid: who forked a process that ended unseen
     * (events_exit_child). */
    struct ev_child *zombies;
    size_t nzombies;
    struct ev_alive *alive;    /* every process the scan read, by pid */
    size_t nalive;
    struct ev_cgroup *cgroups;
    size_t ncgroups;
    struct ev_mount *mounts;
    size_t nmounts;
};

/* The facts of m (the model of a complete scan), fill levels from warn_pct
 * and crit_pct. */
void ev_state_from_model(struct ev_state *st, const struct model *m, double warn_pct,
                         double crit_pct);
void ev_state_free(struct ev_state *st);
/* e's fill (size_known, used, size, used_pct, level) from mt's statvfs. */
void ev_mount_fill(struct ev_mount *e, const struct shm_mount *mt, double warn_pct,
                   double crit_pct);
const struct ev_proc *ev_state_proc(const struct ev_state *st, pid_t pid);
/* Keeps known in cur the processes prev knew that cur's scan still lists
 * (same pid and start) but no longer counts interesting, with their last
 * role and group: a main whose workers died a moment before it is still
 * their main when it dies; so is a main that cur reads as a holder. A
 * mount cur names no container for keeps the one prev named. */
void ev_state_carry(struct ev_state *cur, const struct ev_state *prev);
/* The holders of st that the exit events of evs from index `from` name as
 * their main (workers no scan read, told as the forker's) become mains
 * there: their own exit is then a main's; ev_state_carry keeps it so for
 * the same process in the next scan's state. */
void ev_state_note_mains(struct ev_state *st, const struct event_list *evs, size_t from);
enum fill_level fill_level_of(double used_pct, double warn_pct, double crit_pct);

/* --- Deriving events ------------------------------------------------- */

/* The zombie of st whose pid is pid, or NULL. */
const struct ev_child *ev_state_zombie(const struct ev_state *st, pid_t pid);

/* The exit of pid with wait status `status` (the kernel's) at t: an exit
 * event when st knows the process (else nothing: false). oom_rose: its
 * cgroup's OOM kill count rose with this death (a SIGKILL then is the OOM
 * killer's). A holder that maps libtorch and did not exit 0 is told as the
 * worker of the process that forked it as a main forks one
 * (ev_state_forker), as a child no scan read is: a worker read between its
 * fork and its first batch holds only what its main held (a
 * multiprocessing lock's semaphore), and bears no other mark of a worker
 * yet. */
bool events_exit(const struct ev_state *st, pid_t pid, int status, double t, bool oom_rose,
                 struct event_list *out);

/* The parent of c (a process st does not know) when it forked c as a
 * DataLoader main forks a worker: st knows the parent as a DataLoader main,
 * or as a process that maps libtorch (a main whose every worker has ended
 * is a holder then), c runs the program it was forked as (the parent's
 * comm) or has a name torch gives its processes, and the parent leads a
 * group or has c in its process group. A child whose process group is not
 * known (0: told by the kernel) is taken to be of its forker's (the kernel
 * tells no change of process group, and a worker makes none); one whose
 * name is inherited runs its forker's program. NULL for any other. */
const struct ev_proc *ev_state_forker(const struct ev_state *st, const struct ev_child *c);

/* The exit of c with wait status `status` at t, as the worker (or shm
 * manager, by its name) of forker (ev_state_forker): its group and
 * container forker's (and its name, when inherited). oom_rose as for
 * events_exit. */
void events_exit_child(const struct ev_child *c, const struct ev_proc *forker, int status,
                       double t, bool oom_rose, struct event_list *out);

/* Cgroup ci of st read again (known: the kernel said count): an oom_kill
 * event when the count rose, with victim (0: unknown) and its comm; the
 * count kept in st as the new baseline. True when it rose. */
bool events_oom(struct ev_state *st, size_t ci, bool known, uint64_t count, pid_t victim,
                const char *victim_comm, double t, struct event_list *out);

/* Segment churn of one mount over an interval. */
struct ev_churn {
    const char *mount_id;
    uint64_t created, removed;
};

/* A new scan's facts cur against prev (its predecessor; prev->valid false:
 * a first scan, nothing to tell but churn): the exits of prev's processes
 * the scan no longer sees and that reported does not hold (sorted pids the
 * kernel told of since prev: those were said already), cause unknown; the
 * OOM kills counted since (cur's counts against prev's, which
 * events_oom keeps current); mounts gone and appeared (one device with
 * another birth time is both, the gone one told first); fill levels
 * crossed; the churn of each mount (a line only when not both 0) over
 * interval_s. */
void events_scan(const struct ev_state *prev, const struct ev_state *cur, const pid_t *reported,
                 size_t nreported, const struct ev_churn *churn, size_t nchurn, double interval_s,
                 double t, struct event_list *out);

/* --- Deaths seen, by signal and role (the exporter's counters) ------- */

struct death_count {
    char signal[16];           /* "SIGBUS", "none" (exited), "unknown" */
    enum proc_role role;
    char *container;           /* name, or id, or "" for the host's */
    char *containerd_ns;       /* its containerd namespace, "" for none */
    uint64_t n;
};

struct death_counts {
    struct death_count *items;
    size_t n, cap;
};

/* Adds the exit events of l to c. */
void death_counts_add(struct death_counts *c, const struct event_list *l);
void death_counts_free(struct death_counts *c);

#endif
