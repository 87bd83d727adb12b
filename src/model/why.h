/* `shmwatch why`: the abnormal ends a recording holds, each explained from
 * the records around it (doc/recording.md): who died, how and when, the
 * /dev/shm and the budget just before and at that moment, the diagnosis in
 * the guide's words, what it left behind and the sizes that would have
 * fitted. Pure: the records come parsed through a callback, nothing is read
 * or printed here. */
#ifndef SHMWATCH_WHY_H
#define SHMWATCH_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/jsondoc.h"

/* One record of the recording; the records come in time order (as the
 * store's index sorts them). */
struct why_rec {
    double t;         /* Unix seconds */
    bool snapshot;    /* else an event */
    const char *event; /* the event's KIND ("exit", ...), "" for a snapshot */
};

struct why_source {
    const struct why_rec *recs;
    size_t n;
    /* Record i parsed, owned by the source (kept until it is freed); NULL
     * when it cannot be read (the source says why in its own warnings). */
    const struct jd *(*doc)(void *ctx, size_t i);
    void *ctx;
};

/* Which ends: those from on (Unix seconds; 0: no bound); with pid, only
 * that process's and those of the DataLoader whose main it is; with
 * container, only those in the container of that name, id (or a prefix of
 * 12 or more hex digits of it) or pod, and with "NAMESPACE/" before it only
 * those of that containerd namespace (a record that does not say its
 * namespace is of none). */
struct why_filter {
    double from;
    int64_t pid;
    const char *container;
};

/* The biggest DataLoader groups of the mount just before. */
#define WHY_TOP 3
struct why_group {
    int64_t main_pid;
    uint64_t shm_bytes;
    size_t workers;
};

struct why_death {
    /* Who. */
    bool has_pid;
    int64_t pid;
    char *comm, *role;   /* NULL when not known */
    bool has_group;
    int64_t group;       /* its DataLoader main */
    char *container, *container_name, *pod;
    char *container_ns;      /* the container's containerd namespace, NULL for none */
    bool container_ns_known; /* false: the records do not say it (util/ctrref.h) */
    /* How and when. */
    double t;
    const char *cause;   /* "sigbus", "oom_kill", "signal", "exit", "unknown" */
    char *signal;
    bool has_exit_code;
    int64_t exit_code;
    char *cgroup;        /* the memory cgroup whose OOM killer fired, or whose budget it is */
    /* Its /dev/shm: in the last snapshot before, the first at or after. */
    bool has_mount;
    bool mount_unknown;      /* no mount: the snapshots show several, and nothing
                              * ties it to one (not its job's segments nor its
                              * container) */
    char *mount_id, *mount_path;
    uint64_t size;
    bool has_before, has_at;
    uint64_t used_before, used_at;
    double t_before, t_at;
    uint64_t pending_before; /* space promised to segments, not yet written */
    uint64_t used_peak;      /* the most seen from the snapshot before to the one at */
    bool full;               /* used_peak within a page or 1 % of the size, or less
                              * free than one batch, or more promised than free */
    uint64_t free_batch;     /* one batch of the loader on it (0: none seen) */
    /* The budget of the mount's owner, just before (else at); app and shm the
     * most of the snapshots before and at. */
    bool has_budget;
    uint64_t limit, app, shm_used, headroom;
    uint64_t shm_other;      /* the used bytes of the other shm mounts of the same
                              * cgroup, which the headroom counts
                              * (shm_other_bytes), the most of the two */
    bool limit_cgroup;       /* the limit is a memory cgroup's, not MemTotal */
    struct why_group top[WHY_TOP];
    size_t ntop;
    /* The earlier end in its job this one followed (0: none). */
    int64_t after_pid;
    const char *after_cause;
    double after_dt;
    /* What it left behind: its job's segments that nobody holds, in the
     * last snapshot of the recording after it. */
    uint64_t left_segments, left_bytes;
    bool has_left;           /* a snapshot after it was there to look */
    /* The sizes that fit what was recorded (plan's "at least"). */
    bool has_advice;
    uint64_t rec_shm, rec_memory;
    uint64_t need_shm;       /* the peak the advice was made from */
    bool from_loader;        /* need_shm is the loader's arithmetic (plan --observe) */
    bool from_size;          /* need_shm is the mount's size, which a Bus error reached */
    uint64_t loader_batch, loader_workers, loader_prefetch;
    uint64_t advice_app;     /* the application's peak the advice counts */
    char *diagnosis;
};

struct why_result {
    struct why_death *d;
    size_t n;
    size_t cap;
};

/* Finds the abnormal ends of src that pass f: exit events whose cause is
 * sigbus, oom_kill or signal, an exit with a status other than 0, an end of
 * unknown cause of a main, worker or shm manager; and oom_kill events
 * whose victim has no exit event of its own. In time order. */
void why_find(const struct why_source *src, const struct why_filter *f, struct why_result *r);
void why_result_free(struct why_result *r);

/* "2026-12-05 03:12:07 UTC" and "03:12:07" of Unix seconds t. */
const char *why_fmt_time(char *dst, size_t n, double t);
const char *why_fmt_clock(char *dst, size_t n, double t);

#endif
