/* The dashboard's background thread: the holder scan (and the model built
 * from it) at the scan interval and on demand, and the cheap statvfs gauge
 * refresh at the gauge interval, so that drawing never waits for /proc.
 * Results are handed over under a lock; a byte on poller_fd says that
 * something new is there. */
#ifndef SHMWATCH_UI_POLLER_H
#define SHMWATCH_UI_POLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "collect/scan.h"
#include "model/model.h"

/* One scan and its model; model.scan points at scan. */
struct snap {
    struct scan scan;
    struct model model;
    uint64_t oom_new; /* the cgroup's OOM kills new since the previous scan */
    /* --all: the first container's mount whose owner's OOM kills rose since
     * the previous scan, and by how many (0: none) */
    size_t oom_mount;
    uint64_t oom_mount_new;
};
void snap_free(struct snap *s);

struct gauge {
    char *path;
    dev_t dev; /* the mount's device */
    char *key; /* its history's key, "MAJ:MIN" (the path when the device is
                * unknown): one per mount, also in the node view, where several
                * mounts have one path (/dev/shm) */
    bool ok;
    uint64_t size, used;
};

/* Readings of every watched mount at time t (CLOCK_MONOTONIC seconds). */
struct gauges {
    double t;
    struct gauge *items;
    size_t n;
};
void gauges_free(struct gauges *g);
/* The readings of the mounts ml (a scan's) at time t, into g (whose old
 * contents are freed). */
void gauges_read(struct gauges *g, const struct mount_list *ml, double t);

struct config;
struct store;

struct poller_cfg {
    struct scan_opts scan; /* its strings must outlive the poller */
    /* --record: the store each snapshot and event is written to (as
     * `shmwatch record` writes them, live/recwrite.h), else NULL; the
     * caller opens it before and closes it after the poller. */
    struct store *store;
    /* The intervals and model_opts' settings; outlives the poller. Read-only
     * while the poller runs: nothing writes it from poller_start to
     * poller_stop, and both threads (the poller's, and the caller's, which
     * reads it too, as poller_stalled does) only read it, without the lock. */
    const struct config *set;
};

/* An event as the dashboard shows it (model/evline.h): its wall clock
 * time, its line (raw: names as they are) and whether it stands out (a
 * Bus error, an OOM kill, a critical fill). */
struct poller_event {
    double t;
    bool critical;   /* drawn in the critical colour */
    bool announce;   /* said at once on the message line too */
    char text[320];
};

struct poller;

/* Starts the thread (with every signal blocked in it, so that they reach
 * the drawing thread). Returns NULL with errno set on failure. */
struct poller *poller_start(const struct poller_cfg *cfg);
/* Stops the thread (waiting for a scan in progress) and frees everything;
 * true. A scan that has run past scan_stall_limit is not waited for: its
 * job is abandoned, its thread left with what it uses (cfg->scan's), and
 * false says so (the caller keeps those and should end the process with
 * _exit: a leak checker's exit handler would wait for the stuck thread). */
bool poller_stop(struct poller *p);

/* Has the scan under way been running past scan_stall_limit (scanjob.h)?
 * Then *running_s is how long, and where says what it is reading. */
bool poller_stalled(struct poller *p, double *running_s, char *where, size_t n);

/* Readable when something new is there; drain it with poller_drain. */
int poller_fd(const struct poller *p);
void poller_drain(struct poller *p);

/* --pid: SCAN_TARGET_OK while the watched process lives; once a scan finds
 * it exited or replaced, that (for good: nothing is scanned any more, so the
 * last snapshot stays the newest) and, in *when, the wall-clock time. */
int poller_target_gone(struct poller *p, time_t *when);

/* The events told since the last call, oldest first, moved into *out (a
 * new array the caller frees); how many. Also the watcher's and the
 * recorder's own news (a source of events missing, a write failed). */
size_t poller_take_events(struct poller *p, struct poller_event **out);

/* Asks for a holder scan now. */
void poller_request_scan(struct poller *p);

/* The newest snapshot not yet taken (the caller frees it), or NULL. */
struct snap *poller_take_snap(struct poller *p);
/* The newest gauge readings, if newer than the last taken: moved into *out
 * (whose old contents are freed). */
bool poller_take_gauges(struct poller *p, struct gauges *out);

#endif
