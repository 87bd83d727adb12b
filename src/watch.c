/* The loop of snapshots and events (watch.h). One iteration is one scan:
 * at its interval, or (the recorder) at once after a death or an OOM kill;
 * the events a complete scan derives (live/evwatch.h) follow its snapshot. */
#include "watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/scan.h"
#include "collect/scanjob.h"
#include "live/evwatch.h"
#include "live/recwrite.h"
#include "model/events.h"
#include "model/history.h"
#include "model/model.h"
#include "report/report.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/safefile.h"
#include "util/sysroot.h"
#include "util/xalloc.h"

volatile sig_atomic_t watch_stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    watch_stop_requested = 1;
}

void watch_catch_signals(bool hangup)
{
    /* No SA_RESTART: a poll or a wait returns at once with EINTR. */
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (hangup)
        sigaction(SIGHUP, &sa, NULL);
}

struct loop {
    const struct options *o;
    const struct config *cfg;
    struct store *store;       /* the recorder's; NULL for a stream */
    const char *cmd;           /* "shmwatch" or "shmwatch record", for messages */
    struct sysroot sys;
    struct scan_opts so;
    bool events;               /* this run watches over time: events are told */
    struct evwatch ew;         /* the events' sources and the last scan's facts */
    struct event_list got;     /* the watcher's events as they come, for take_news */
    struct event_list evs;
    /* A stream's own news (why process events are not seen), written just
     * before the first exit whose cause it leaves unknown: a stream with
     * nothing to say keeps only its snapshot lines. */
    struct event_list pending;
    struct death_counts deaths;
    struct buf out, line;
    struct group_peaks peaks;
    struct oom_watch oom;
    struct mount_memory mount_mem;
    double last_scan_time;
    bool stall_said;           /* the scan under way was said stalled on stderr */
    struct scan_job *job;      /* the scan under way, NULL between scans */
    bool stalled;              /* it has run past its limit (scan_stall_limit) */
    long long done;            /* the intervals taken */
    double next;               /* when the next interval comes (clock_now) */
    int rc;                    /* the exit status */
};

/* Why pid cannot be watched, from scan_run's or sysroot_open_pid's answer. */
static const char *target_why(pid_t pid, int rc, enum scan_target state)
{
    return state == SCAN_TARGET_REPLACED
               ? "the process has exited (its pid now belongs to another process)"
           : state == SCAN_TARGET_EXITED ? "the process has exited"
                                         : sysroot_pid_why(pid, rc, strerror(-rc));
}

/* --- Writing --------------------------------------------------------- */

/* One record into the store (live/recwrite.h): what the store says of it
 * (a record lost, or its oldest file dropped) on stderr; the recorder goes on. */
static void store_put(struct loop *L, double t, const struct buf *b)
{
    char msg[512];
    recwrite_put(L->store, t, b, msg, sizeof(msg));
    if (msg[0])
        fprintf(stderr, "%s: %s\n", L->cmd, msg); /* its names escaped already */
}

/* Writes all of b to stdout, to the --prometheus-file, or (the recorder)
 * as one record of time t; false when the reader has gone or the file
 * cannot be written (said on stderr). The file is replaced atomically: a
 * reader sees the old file or the new one, never half of either; never
 * through a planted link (util/safefile.h). */
static bool emit(struct loop *L, const struct buf *b, double t)
{
    if (L->store) {
        store_put(L, t, b);
        return true;
    }
    if (!L->o->prometheus_file)
        return output_write(b);
    int rc = safefile_replace(L->o->prometheus_file, b->data, b->len, 0644);
    if (rc < 0) {
        char *shown = esc_term_dup(L->o->prometheus_file);
        fprintf(stderr, "shmwatch: cannot write %s: %s\n", shown, safefile_strerror(-rc));
        free(shown);
    }
    return rc == 0;
}

/* One event: the recorder's record, a stream's line (the exporter only
 * counts them). False when a stream's reader has gone. */
static bool put_event(struct loop *L, const struct event *e)
{
    if (!L->store && L->o->mode != MODE_JSON)
        return true;
    buf_reset(&L->line);
    report_event_json(&L->line, e);
    if (!L->store)
        buf_addc(&L->line, '\n');
    return emit(L, &L->line, e->t);
}

/* The events gathered so far, each at once; the exporter counts the
 * deaths. A stream's pending news goes just before the first exit it
 * explains. False when a stream's reader has gone. */
static bool emit_events(struct loop *L)
{
    bool ok = true;
    death_counts_add(&L->deaths, &L->evs);
    for (size_t i = 0; i < L->evs.n && ok; i++) {
        const struct event *e = &L->evs.items[i];
        if (e->kind == EV_EXIT && e->cause == CAUSE_UNKNOWN && L->o->mode == MODE_JSON) {
            for (size_t k = 0; k < L->pending.n && ok; k++)
                ok = put_event(L, &L->pending.items[k]);
            event_list_clear(&L->pending);
        }
        ok = ok && put_event(L, e);
    }
    event_list_clear(&L->evs);
    return ok;
}

/* A snapshot of s (a complete scan, or the stand-in for a stalled one) in
 * the chosen format into L->out; the recorder's with its reason. oom
 * carries the cgroup's OOM kill count, peaks each DataLoader group's peaks
 * and mount_mem each mount's own OOM kill count and peaks from one snapshot
 * of a stream to the next. cur, when not NULL, gets the model's facts for
 * the events. */
static void render(struct loop *L, struct scan *s, const char *reason, struct ev_state *cur)
{
    const struct options *o = L->o;
    const struct config *cfg = L->cfg;
    struct buf *out = &L->out;
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    if (o->mode == MODE_PROMETHEUS && s->stalled_s > 0) {
        model_build(s, &mo, &m); /* a stand-in: its warning and how long it runs */
        report_prometheus_stalled(out, &m, L->last_scan_time);
        model_free(&m);
        return;
    }
    mo.warn_pct = cfg->warn_pct;
    mo.crit_pct = cfg->crit_pct;
    mo.peaks = &L->peaks;
    mo.orphan_min_age_s = cfg->orphan_min_age_s;
    mo.trust_pids = cfg->trust_pids;
    double now = clock_now();
    oom_watch_add(&L->oom, now, s->cgroup.present && s->cgroup.has_oom_kills, s->cgroup.oom_kills);
    mo.oom_recent = oom_watch_recent(&L->oom, now);
    if (!(s->stalled_s > 0)) /* a stand-in shows no mount: nothing is forgotten */
        mount_memory_observe(&L->mount_mem, s, now);
    mo.mount_memory = &L->mount_mem;
    model_build(s, &mo, &m);
    group_peaks_learn(&L->peaks, &m);
    mount_memory_learn(&L->mount_mem, &m);
    if (L->store) {
        report_json_record(out, &m, reason);
    } else if (o->mode == MODE_JSON) {
        /* Written as it is made: emit() adds the rest. */
        report_json_stream(out, &m, stdout);
        buf_addc(out, '\n');
    } else if (o->mode == MODE_PROMETHEUS) {
        /* The deaths first: the file's last line stays the snapshot's last metric. */
        if (L->events)
            report_prometheus_deaths(out, &L->deaths);
        report_prometheus(out, &m);
    } else {
        report_text(out, &m, cfg->ascii);
    }
    if (cur)
        ev_state_from_model(cur, &m, cfg->warn_pct, cfg->crit_pct);
    model_free(&m);
}

/* --- Events between scans -------------------------------------------- */

/* A source that cannot be used, said once, plainly: by the recorder on
 * stderr and in an events_off record at once; by a stream in an events_off
 * line just before the first exit it leaves without a cause (its stderr
 * and its lines stay as they were while there is nothing to explain). */
static void source_off(struct loop *L, const char *line)
{
    if (L->store)
        fprintf(stderr, "%s: %s\n", L->cmd, line);
    events_recorder(L->store ? &L->evs : &L->pending, clock_wall(), "events_off", line);
}

/* The watcher's events (L->got) into L->evs; its own news (a source
 * gone or events lost: "events_off") said as source_off says it. */
static void take_news(struct loop *L)
{
    for (size_t i = 0; i < L->got.n; i++) {
        struct event *e = &L->got.items[i];
        if (e->kind == EV_RECORDER) {
            source_off(L, e->detail);
            continue;
        }
        *VEC_PUSH(L->evs.items, L->evs.n, L->evs.cap) = *e;
        memset(e, 0, sizeof(*e));
    }
    event_list_clear(&L->got);
}

/* Waits until the monotonic clock reaches until, taking the process events
 * and the churn as they come; returns early on SIGTERM/SIGINT and when the
 * recorder is due an event snapshot. False when a stream's reader has gone. */
static bool wait_until(struct loop *L, double until)
{
    bool ok = true;
    while (ok && !watch_stop_requested && !(L->store && L->ew.death) && clock_now() < until) {
        evwatch_wait(&L->ew, until, -1, &L->got);
        take_news(L);
        if (L->evs.n)
            ok = emit_events(L);
    }
    return ok;
}

/* --- The loop -------------------------------------------------------- */

/* Waits for the scan until the monotonic clock reaches until, a slice at a
 * time so that SIGINT and SIGTERM are heard; true when it has ended. */
static bool wait_scan(struct scan_job *job, double until)
{
    for (;;) {
        double now = clock_now(), slice = now + 0.2;
        if (scan_job_wait(job, slice < until ? slice : until))
            return true;
        if (watch_stop_requested || clock_now() >= until)
            return false;
    }
}

/* An interval taken: the next one is due o->interval from now. */
static void interval_done(struct loop *L)
{
    L->done++;
    L->next = clock_now() + L->o->interval;
}

/* The scan under way has ended: its result into s. False (L->rc 1) when
 * the watched process is gone: said on stderr and, by the recorder, in its
 * stop record. */
static bool finish_scan(struct loop *L, struct scan *s)
{
    if (L->stall_said)
        fprintf(stderr, "%s: the stalled scan has finished after %.0f s: snapshots go on\n", L->cmd,
                clock_now() - scan_job_started(L->job));
    L->stall_said = false;
    int rc = scan_job_finish(L->job, s);
    L->job = NULL;
    L->stalled = false;
    if (rc >= 0) {
        L->last_scan_time = clock_seconds(s->time);
        return true;
    }
    char why[300];
    snprintf(why, sizeof(why), "cannot watch pid %d: %s", (int)L->o->pid,
             target_why((pid_t)L->o->pid, rc, s->target_state));
    fprintf(stderr, "%s: %s\n", L->cmd, why);
    if (L->store) {
        events_recorder(&L->evs, clock_wall(), "stop", why);
        emit_events(L);
    }
    scan_free(s);
    L->rc = 1;
    return false;
}

/* The scan under way has run past its limit: its stand-in into s. True
 * when a stream shows the stand-in as its snapshot; false when the stall
 * was told otherwise and s freed: by a one-shot snapshot on stderr; by the
 * recorder on stderr when it begins and in a stalled record at each
 * interval while it lasts, as a stream's stand-in is (not for a death's
 * own: the death was recorded, no scan can follow it). No stand-in
 * snapshot goes in the store: its empty lists would read as every mount
 * and process gone. */
static bool stand_in(struct loop *L, struct scan *s, bool on_time)
{
    L->stalled = true;
    scan_stalled(s, &L->so, clock_now() - scan_job_started(L->job), scan_job_beacon(L->job));
    if (!L->store && L->o->mode != MODE_ONCE)
        return true;
    if (on_time) { /* always, for a one-shot snapshot: its only turn */
        const char *why = s->warn.msg[0]; /* scan_stalled's */
        if (!L->stall_said) {
            char *shown = esc_term_dup(why); /* it names a process */
            fprintf(stderr, "%s: %s\n", L->cmd, shown);
            free(shown);
            L->stall_said = true;
        }
        if (L->store) {
            events_stalled(&L->evs, clock_wall(), why, s->stalled_s, s->stalled_pid,
                           s->stalled_fd);
            emit_events(L);
        }
        interval_done(L);
    }
    scan_free(s);
    return false;
}

/* The snapshot of s (a complete scan, or a stream's stand-in) written, its
 * reason "event" or "interval", then the events a complete scan's
 * difference from the last one tells (cur, its facts, becomes the last;
 * interval: its churn counts taken, where an event snapshot leaves them
 * counting). False (L->rc set) when it cannot be written. */
static bool show(struct loop *L, struct scan *s, bool complete, const char *reason, bool interval)
{
    struct ev_state cur = {0};
    bool events = complete && L->events;
    buf_reset(&L->out);
    render(L, s, reason, events ? &cur : NULL);
    double t = clock_seconds(s->time);
    bool ok = true;
    if (!emit(L, &L->out, t)) {
        /* A reader that closes the pipe ends a stream normally; any other
         * failure to write (a full disk, /dev/full) is an error, which
         * emit has said for the --prometheus-file. */
        L->rc = L->o->prometheus_file ? 1 : output_status(NULL, NULL);
        ok = false;
    } else if (events) {
        evwatch_scan(&L->ew, s, &cur, t, interval, &L->got);
        take_news(L);
        if (!emit_events(L)) {
            L->rc = output_status(NULL, NULL);
            ok = false;
        }
    }
    ev_state_free(&cur);
    return ok;
}

/* One turn of the loop: the wait for the next interval (none before the
 * first, L->next 0) or (the recorder) a death; then the scan, its snapshot
 * and its events. False when the run ends (L->rc its status). */
static bool turn(struct loop *L)
{
    if (!wait_until(L, L->next)) {
        L->rc = output_status(NULL, NULL);
        return false;
    }
    /* on_time: the interval has come (not only a death). by_event: the
     * recorder's snapshot at once after a death, its reason "event" (also
     * when the interval comes with it), when its scan begins now: a scan
     * that stalled before the death ends as its interval's. interval: the
     * snapshot counts as the interval's, its churn taken. */
    bool death = L->store && evwatch_take_death(&L->ew);
    bool on_time = clock_now() >= L->next || !death;
    bool by_event = death && !L->job;
    bool interval = on_time || !by_event;
    if (watch_stop_requested)
        return false;
    if (!L->job && !(L->job = scan_job_start(&L->so))) {
        fprintf(stderr, "%s: cannot start the scan: %s\n", L->cmd, strerror(errno));
        L->rc = 1;
        return false;
    }
    struct scan s;
    double limit = scan_stall_limit(L->o->interval);
    double until = L->stalled ? clock_now() : scan_job_started(L->job) + limit;
    bool complete = wait_scan(L->job, until);
    if (complete) {
        if (!finish_scan(L, &s))
            return false;
    } else if (watch_stop_requested) {
        return false;
    } else if (!stand_in(L, &s, on_time)) {
        return true;
    }
    bool ok = show(L, &s, complete, by_event ? "event" : "interval", interval);
    scan_free(&s);
    if (ok && interval)
        interval_done(L);
    return ok;
}

int watch_run(const struct options *o, const struct config *cfg, struct store *store)
{
    struct loop L = {
        .o = o,
        .cfg = cfg,
        .store = store,
        .cmd = store ? "shmwatch record" : "shmwatch",
        .ew = {.cn = -1, .sn.fd = -1},
    };
    /* --pid: the process as it is now (sysroot_open_pid pins its start
     * time); a stream ends when it exits. */
    pid_t pid = (pid_t)o->pid;
    int irc = sysroot_open_system(&L.sys, pid);
    if (irc < 0) {
        if (pid)
            fprintf(stderr, "%s: cannot watch pid %d: %s\n", L.cmd, (int)pid,
                    target_why(pid, irc, SCAN_TARGET_OK));
        else
            fprintf(stderr, "%s: cannot open /proc: %s\n", L.cmd, strerror(-irc));
        return 1;
    }
    L.so = (struct scan_opts){
        .sys = &L.sys,
        .mounts = (const char *const *)cfg->mounts.item,
        .nmounts = cfg->mounts.n,
        .all = o->all,
    };
    buf_init(&L.out);
    buf_init(&L.line);
    L.events = store || (o->interval_set && o->count != 1 &&
                         (o->mode == MODE_JSON || o->prometheus_file));
    if (L.events) {
        /* Without the connector the exits are told from the scans. */
        evwatch_open(&L.ew, &L.sys, &L.got);
        take_news(&L);
    }
    if (store) {
        /* After the sources' news; a record never ends the run. */
        events_recorder(&L.evs, clock_wall(), "start", "the recorder started");
        emit_events(&L);
    }
    while (!watch_stop_requested && (o->count == 0 || L.done < o->count))
        if (!turn(&L))
            break;
    int rc = L.rc;
    if (store && rc == 0) {
        events_recorder(&L.evs, clock_wall(), "stop",
                        watch_stop_requested ? "the recorder was stopped" : "the recorder ended");
        emit_events(&L);
    }
    buf_free(&L.out);
    buf_free(&L.line);
    group_peaks_free(&L.peaks);
    mount_memory_free(&L.mount_mem);
    event_list_free(&L.got);
    event_list_free(&L.evs);
    event_list_free(&L.pending);
    death_counts_free(&L.deaths);
    evwatch_close(&L.ew);
    if (L.stalled && rc == 0 && !store) /* the recorder's SIGTERM ends it well */
        rc = 1;
    if (L.job) {
        /* Its thread may never come back: exit without waiting for it (a
         * leak checker at exit would). The recorder's store is closed
         * first: every record it wrote is whole. */
        scan_job_abandon(L.job);
        store_close(store);
        fflush(NULL);
        _exit(rc);
    }
    sysroot_close(&L.sys);
    return rc;
}
