/* The event watcher: what every run that watches over time (a stream, the
 * exporter, `shmwatch record`, the dashboard) keeps between two scans to
 * tell events (model/events.h): the kernel's process connector, inotify on
 * the shm mounts, the cgroups' OOM kill counts and the facts of the last
 * complete scan. Its caller runs the scans and owns the clock's deadlines;
 * the watcher reads the sources and derives the events. */
#ifndef SHMWATCH_EVWATCH_H
#define SHMWATCH_EVWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/proccn.h"
#include "collect/shmnotify.h"
#include "model/events.h"
#include "util/buf.h"

struct scan;
struct sysroot;

/* The most exits kept for the next scan: a busy machine ends many
 * processes an interval, nearly all of them of no model; past this many,
 * the newest are dropped. */
enum { EVWATCH_PENDING_MAX = 65536 };

/* The renames the watcher keeps, the newest (a ring): enough for the
 * seconds between a short-lived process's new program and its end on a
 * busy machine. */
enum { EVWATCH_RENAMES = 4096 };

/* The forkservers the watcher saw start (a ring; each forks for its parent,
 * the process that started it): a job that dies within a second ends its
 * forkserver with it, before its exits are read. */
enum { EVWATCH_FORKSERVERS = 64 };
struct evwatch_forkserver {
    pid_t pid, parent;
};

/* An exit the kernel told of a process the last model did not know, with
 * its parent, process group and name as its /proc/PID/stat said when the
 * exit was read, or as the kernel told them when its parent had reaped it
 * already (child.pid 0: neither; they are read only for an end that was
 * not a plain exit 0, the end of a process that failed). */
struct evwatch_pending {
    struct proc_exit exit;
    struct ev_child child;
};

struct evwatch {
    const struct sysroot *sys; /* the system the scans read */
    int cn;                    /* the process connector, -1 when not seen */
    struct shmnotify sn;
    double churn_since;        /* when the churn counts were last taken (clock_now) */
    struct ev_state prev;      /* the last complete scan's facts */
    /* The pids whose exits the kernel told since the scan before last
     * (reported[0..nolder) the older window): a process may end while a
     * scan reads it, and is then told by the kernel, not as gone. */
    pid_t *reported;
    size_t nreported, nolder, reported_cap;
    /* Exits the kernel told of processes the last model did not know
     * (born since): told at the next scan's end against its model, which
     * read them alive (they ended after), or knows the DataLoader main that
     * forked them (ev_state_forker). */
    struct evwatch_pending *pending;
    size_t npending, pending_cap;
    /* The kernel's renames, renames[i % EVWATCH_RENAMES] the i-th of
     * nrenames: whether a process that ended unread ran another program
     * than its parent's, or named itself. */
    struct proc_rename *renames;
    size_t nrenames;
    struct evwatch_forkserver forkservers[EVWATCH_FORKSERVERS];
    size_t nforkservers; /* forkservers[i % EVWATCH_FORKSERVERS] the i-th */
    struct buf text;     /* a /proc/PID/cmdline read for forkserver_parent */
    /* A death or an OOM kill told since evwatch_take_death: a recorder
     * takes a snapshot at once. */
    bool death;
    double death_t;            /* the wall time of the last one told */
    bool lost_said;            /* lost process events were said (once) */
};

/* Opens the sources (the connector, inotify) for the scans of sys. A
 * source that cannot be used is an "events_off" recorder event in off, at
 * the time of the call, its sentence saying why and what is told without it. */
void evwatch_open(struct evwatch *w, const struct sysroot *sys, struct event_list *off);
void evwatch_close(struct evwatch *w);

/* Waits until the monotonic clock reaches until (or ctl, an extra fd, -1
 * for none, is readable, or a signal interrupts), then reads what came:
 * exits of the last model's processes as events into out (a SIGKILL's
 * cgroup OOM count read first), the others kept for the next scan (one by
 * SIGBUS is a death: a snapshot is due), churn counted; a connector that fails is
 * closed with an "events_off" event in out, as are (once) process events
 * the kernel dropped. 1 when ctl is readable, 0
 * otherwise (the deadline, a signal, or sources read). */
int evwatch_wait(struct evwatch *w, double until, int ctl, struct event_list *out);

/* After a complete scan s, cur its model's facts (ev_state_from_model,
 * moved into the watcher), at wall time t (when it began), its snapshot
 * written: the exits the kernel told while it ran, those of processes
 * born since the last scan that this one knows, then the events its
 * difference from the last one tells (exits seen only as gone, OOM kills,
 * mounts, fill, and with churn the interval's segment counts), into out;
 * cur becomes the last; inotify follows s's mounts. churn: an interval's
 * scan (not the one taken at once after a death); a death told while it
 * ran that came after t is then still due a snapshot (evwatch_take_death). */
void evwatch_scan(struct evwatch *w, const struct scan *s, struct ev_state *cur, double t,
                  bool churn, struct event_list *out);

/* Whether a death or an OOM kill was told since the last call. */
bool evwatch_take_death(struct evwatch *w);

#endif
