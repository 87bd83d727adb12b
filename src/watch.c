/* The loop of snapshots and events (watch.h). One iteration is one scan:
 * at its interval, or (the recorder) at once after a death or an OOM kill.
 * Between two scans it polls the process connector's socket and the
 * inotify instance until the next deadline: an exit of a process the last
 * model knew is an event at once, its cgroup's OOM count read again when
 * it died of SIGKILL. After each complete scan the events told by the
 * difference of two models (exits seen only as gone, OOM kills, mounts,
 * fill levels, churn) follow its snapshot. */
#include "watch.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/cgroup.h"
#include "collect/proccn.h"
#include "collect/scan.h"
#include "collect/scanjob.h"
#include "collect/shmnotify.h"
#include "model/events.h"
#include "model/history.h"
#include "model/model.h"
#include "report/jsonw.h"
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

void watch_catch_signals(void)
{
    /* No SA_RESTART: a poll or a wait returns at once with EINTR. */
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

struct loop {
    const struct options *o;
    const struct config *cfg;
    struct store *store;       /* the recorder's; NULL for a stream */
    const char *cmd;           /* "shmwatch" or "shmwatch record", for messages */
    struct sysroot sys;
    struct scan_opts so;
    bool events;               /* this run watches over time: events are told */
    int cn;                    /* the process connector, -1 when not seen */
    bool cn_lost_said;
    struct shmnotify sn;
    double churn_since;        /* when the churn counts were last taken */
    struct ev_state prev;      /* the last complete scan's facts */
    /* The pids whose exits the kernel told since the scan before last
     * (reported[0..nolder) the older window): a process may end while a
     * scan reads it, and is then told by the kernel, not as gone. */
    pid_t *reported;
    size_t nreported, nolder, reported_cap;
    struct event_list evs;
    /* A stream's own news (why process events are not seen), written just
     * before the first exit whose cause it leaves unknown: a stream with
     * nothing to say keeps only its snapshot lines. */
    struct event_list pending;
    struct death_counts deaths;
    bool event_snapshot_due;   /* the recorder: a death or an OOM kill since the last scan */
    struct buf out, line;
    struct group_peaks peaks;
    struct oom_watch oom;
    struct mount_memory mount_mem;
    double last_scan_time;
};

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The wall clock time of a CLOCK_MONOTONIC nanosecond stamp (the kernel's). */
static double wall_of_mono(uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double mono = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    double ago = mono - (double)ns / 1e9;
    return wall_now() - (ago > 0 ? ago : 0);
}

/* Why pid cannot be watched, from scan_run's or sysroot_open_pid's answer. */
static const char *target_why(pid_t pid, int rc, enum scan_target state)
{
    return state == SCAN_TARGET_REPLACED
               ? "the process has exited (its pid now belongs to another process)"
           : state == SCAN_TARGET_EXITED ? "the process has exited"
                                         : sysroot_pid_why(pid, rc, strerror(-rc));
}

/* The same in one line on stderr. */
static void say_target_failure(const char *cmd, pid_t pid, int rc, enum scan_target state)
{
    fprintf(stderr, "%s: cannot watch pid %d: %s\n", cmd, (int)pid, target_why(pid, rc, state));
}

/* --- Writing --------------------------------------------------------- */

/* One record into the store: said on stderr when it cannot be written
 * (the store has tried dropping the oldest file); the recorder goes on. A
 * full disk that the store made room on by dropping its oldest file is
 * said on stderr and in a disk_full record. */
static void store_put(struct loop *L, double t, const struct buf *b)
{
    char msg[512] = "";
    int rc = store_write(L->store, t, b->data, b->len, msg, sizeof(msg));
    if (msg[0]) {
        char *shown = esc_term_dup(msg);
        fprintf(stderr, "%s: %s\n", L->cmd, shown);
        free(shown);
    }
    if (rc == 0 && msg[0]) {
        struct event_list note = {0};
        events_recorder(&note, wall_now(), "disk_full", msg);
        struct buf line;
        buf_init(&line);
        report_event_json(&line, &note.items[0]);
        char again[512];
        store_write(L->store, note.items[0].t, line.data, line.len, again, sizeof(again));
        buf_free(&line);
        event_list_free(&note);
    }
}

/* The events gathered so far, each at once: a stream's lines, the
 * recorder's records; the exporter counts the deaths. False when a
 * stream's reader has gone. */
static bool emit_events(struct loop *L)
{
    bool ok = true;
    death_counts_add(&L->deaths, &L->evs);
    for (size_t i = 0; i < L->evs.n && ok; i++) {
        const struct event *e = &L->evs.items[i];
        if (L->pending.n && e->kind == EV_EXIT && e->cause == CAUSE_UNKNOWN &&
            L->o->mode == MODE_JSON && !L->store) {
            for (size_t k = 0; k < L->pending.n && ok; k++) {
                buf_reset(&L->line);
                report_event_json(&L->line, &L->pending.items[k]);
                buf_addc(&L->line, '\n');
                ok = output_write(&L->line);
            }
            event_list_clear(&L->pending);
        }
        buf_reset(&L->line);
        report_event_json(&L->line, &L->evs.items[i]);
        if (L->store) {
            store_put(L, L->evs.items[i].t, &L->line);
        } else if (L->o->mode == MODE_JSON) {
            buf_addc(&L->line, '\n');
            ok = output_write(&L->line);
        }
    }
    event_list_clear(&L->evs);
    return ok;
}

/* Replaces path with b's content atomically: a reader sees the old file or
 * the new one, never half of either; never through a planted link
 * (util/safefile.h). */
static bool write_atomically(const char *path, const struct buf *b)
{
    int rc = safefile_replace(path, b->data, b->len, 0644);
    if (rc < 0) {
        char *shown = esc_term_dup(path);
        fprintf(stderr, "shmwatch: cannot write %s: %s\n", shown, safefile_strerror(-rc));
        free(shown);
    }
    return rc == 0;
}

/* Writes all of b to stdout, to the --prometheus-file, or (the recorder)
 * as one record of time t; false when the reader has gone or the file
 * cannot be written. */
static bool emit(struct loop *L, const struct buf *b, double t)
{
    if (L->store) {
        store_put(L, t, b);
        return true;
    }
    if (L->o->prometheus_file)
        return write_atomically(L->o->prometheus_file, b);
    return output_write(b);
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
        /* The snapshot's object with one member added at its end. */
        report_json(out, &m);
        if (out->len && out->data[out->len - 1] == '}') {
            out->len--;
            buf_printf(out, ",\"reason\":\"%s\"}", reason);
        }
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
        struct text_opts to = {.ascii = cfg->ascii};
        report_text(out, &m, &to);
    }
    if (cur)
        ev_state_from_model(cur, &m, cfg->warn_pct, cfg->crit_pct);
    model_free(&m);
}

/* --- Events between scans -------------------------------------------- */

static void source_off(struct loop *L, const char *line);

static void reported_add(struct loop *L, pid_t pid)
{
    if (L->nreported == L->reported_cap) {
        L->reported_cap = L->reported_cap ? 2 * L->reported_cap : 64;
        L->reported = xrealloc(L->reported, L->reported_cap * sizeof(*L->reported));
    }
    L->reported[L->nreported++] = pid;
}

static int pid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* The exits waiting on the connector: each of a process the last model
 * knew is an exit event at once; one by SIGKILL has its cgroup's OOM
 * count read first (the kernel counts the kill before it sends it). */
static void on_exits(struct loop *L)
{
    struct proc_exits x = {0};
    int rc = proccn_read(L->cn, &x);
    if (rc == -ENOBUFS && !L->cn_lost_said) {
        source_off(L, "some process events were lost (the socket's queue was full); those "
                      "exits are told from the scans, cause unknown");
        L->cn_lost_said = true;
    } else if (rc < 0 && rc != -ENOBUFS) {
        char why[256];
        snprintf(why, sizeof(why), "process events stopped: %s; exits are told from the scans, "
                 "cause unknown", strerror(-rc));
        source_off(L, why);
        proccn_close(L->cn);
        L->cn = -1;
    }
    for (size_t i = 0; i < x.n && L->prev.valid; i++) {
        const struct proc_exit *e = &x.items[i];
        const struct ev_proc *p = ev_state_proc(&L->prev, e->pid);
        if (!p)
            continue;
        reported_add(L, e->pid);
        double t = wall_of_mono(e->timestamp_ns);
        bool killed = WIFSIGNALED(e->status) && WTERMSIG(e->status) == SIGKILL;
        bool rose = false, known = false;
        uint64_t count = 0;
        size_t cg = p->cg;
        if (killed && cg < L->prev.ncgroups) {
            const struct ev_cgroup *g = &L->prev.cgroups[cg];
            known = cgroup_read_oom_kills(&L->sys, g->dir, g->version, &count) == 0;
            rose = known && g->known && count > g->kills;
        }
        pid_t pid = p->pid;
        char comm[16];
        memcpy(comm, p->comm, sizeof(comm));
        events_exit(&L->prev, pid, e->status, t, rose, &L->evs);
        if (killed && cg < L->prev.ncgroups)
            events_oom(&L->prev, cg, known, count, pid, comm, t, &L->evs);
        if (L->store)
            L->event_snapshot_due = true;
    }
    proc_exits_free(&x);
}

/* Waits until the monotonic clock reaches until, taking the process events
 * and the churn as they come; returns early on SIGTERM/SIGINT and when the
 * recorder is due an event snapshot. False when a stream's reader has gone. */
static bool wait_until(struct loop *L, double until)
{
    for (;;) {
        if (watch_stop_requested || L->event_snapshot_due)
            return true;
        double left = until - clock_now();
        if (left <= 0)
            return true;
        struct pollfd p[2];
        int n = 0, icn = -1, isn = -1;
        if (L->cn >= 0) {
            icn = n;
            p[n++] = (struct pollfd){.fd = L->cn, .events = POLLIN};
        }
        if (L->sn.fd >= 0) {
            isn = n;
            p[n++] = (struct pollfd){.fd = L->sn.fd, .events = POLLIN};
        }
        int r = poll(p, (nfds_t)n, (int)(left * 1000.0) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        if (icn >= 0 && p[icn].revents)
            on_exits(L);
        if (isn >= 0 && p[isn].revents)
            shmnotify_read(&L->sn);
        if (L->evs.n && !emit_events(L))
            return false;
    }
}

/* After a complete scan (cur its facts): the events its difference from
 * the last one tells, then cur becomes the last. churn: take the interval's
 * counts (an interval scan; an event snapshot leaves them counting). */
static bool scan_events(struct loop *L, struct scan *s, struct ev_state *cur, double t, bool churn)
{
    /* Exits the kernel told while the scan ran belong to the last model's
     * processes: taken before cur replaces it. The snapshot just written
     * is after them. */
    if (L->cn >= 0) {
        on_exits(L);
        L->event_snapshot_due = false;
    }
    shmnotify_read(&L->sn);
    struct ev_churn *ch = NULL;
    size_t nch = 0;
    double interval_s = clock_now() - L->churn_since;
    if (churn && L->sn.fd >= 0) {
        ch = xcalloc(cur->nmounts ? cur->nmounts : 1, sizeof(*ch));
        for (size_t i = 0; i < cur->nmounts; i++) {
            uint64_t c, r;
            if (shmnotify_take(&L->sn, cur->mounts[i].id, &c, &r))
                ch[nch++] = (struct ev_churn){cur->mounts[i].id, c, r};
        }
        L->churn_since = clock_now();
    }
    if (L->nreported > 1)
        qsort(L->reported, L->nreported, sizeof(*L->reported), pid_cmp);
    events_scan(&L->prev, cur, L->reported, L->nreported, ch, nch, interval_s, t, &L->evs);
    free(ch);
    /* The newer window becomes the older one. */
    if (L->nolder) {
        memmove(L->reported, L->reported + L->nolder,
                (L->nreported - L->nolder) * sizeof(*L->reported));
        L->nreported -= L->nolder;
    }
    L->nolder = L->nreported;
    /* The OOM counts the connector's deaths were checked against stay the
     * baseline only until this scan's are known: cur's are newer. */
    ev_state_free(&L->prev);
    L->prev = *cur;
    memset(cur, 0, sizeof(*cur));
    shmnotify_follow(&L->sn, s, &L->sys);
    return emit_events(L);
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

/* A source that cannot be used, said once, plainly: by the recorder on
 * stderr and in an events_off record at once; by a stream in an events_off
 * line just before the first exit it leaves without a cause (its stderr
 * and its lines stay as they were while there is nothing to explain). */
static void source_off(struct loop *L, const char *line)
{
    if (L->store) {
        fprintf(stderr, "%s: %s\n", L->cmd, line);
        events_recorder(&L->evs, wall_now(), "events_off", line);
    } else {
        events_recorder(&L->pending, wall_now(), "events_off", line);
    }
}

/* The events' sources, opened when the run watches over time; without
 * the connector the exits are told from the scans. */
static void open_sources(struct loop *L)
{
    char why[256];
    L->cn = proccn_open(why, sizeof(why));
    if (L->cn < 0) {
        L->cn = -1;
        char line[400];
        snprintf(line, sizeof(line), "%s; exits are told from the scans, cause unknown", why);
        source_off(L, line);
    }
    if (shmnotify_init(&L->sn) < 0) {
        char line[256];
        snprintf(line, sizeof(line), "segment churn is not counted: inotify: %s",
                 strerror(errno));
        source_off(L, line);
    }
    L->churn_since = clock_now();
}

int watch_run(const struct options *o, const struct config *cfg, struct store *store)
{
    struct loop L;
    memset(&L, 0, sizeof(L));
    L.o = o;
    L.cfg = cfg;
    L.store = store;
    L.cmd = store ? "shmwatch record" : "shmwatch";
    L.cn = -1;
    L.sn.fd = -1;
    /* --pid: the process as it is now (sysroot_open_pid pins its start
     * time); a stream ends when it exits. */
    pid_t pid = (pid_t)o->pid;
    int irc = sysroot_open_system(&L.sys, pid);
    if (irc < 0) {
        if (pid)
            say_target_failure(L.cmd, pid, irc, SCAN_TARGET_OK);
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
    L.events = store || (o->interval_set && o->count != 1 &&
                         (o->mode == MODE_JSON || o->prometheus_file));
    if (L.events)
        open_sources(&L);
    if (store)
        events_recorder(&L.evs, wall_now(), "start", "the recorder started");
    double limit = scan_stall_limit(o->interval);
    struct scan_job *job = NULL;
    buf_init(&L.out);
    buf_init(&L.line);
    int rc = 0;
    bool stalled = false;
    if (L.evs.n && !emit_events(&L))
        rc = output_status(NULL, NULL);
    long long done = 0;
    double next = 0;
    for (bool first = true; rc == 0 && !watch_stop_requested && (o->count == 0 || done < o->count);
         first = false) {
        bool by_event = false;
        if (!first) {
            if (!wait_until(&L, next)) {
                rc = output_status(NULL, NULL);
                break;
            }
            by_event = L.event_snapshot_due && clock_now() < next;
            L.event_snapshot_due = false;
        }
        if (watch_stop_requested)
            break;
        if (!job && !(job = scan_job_start(&L.so))) {
            fprintf(stderr, "%s: cannot start the scan: %s\n", L.cmd, strerror(errno));
            rc = 1;
            break;
        }
        struct scan s;
        bool complete = false;
        if (wait_scan(job, stalled ? clock_now() : scan_job_started(job) + limit)) {
            int src = scan_job_finish(job, &s);
            job = NULL;
            stalled = false;
            if (src < 0) {
                say_target_failure(L.cmd, pid, src, s.target_state);
                if (store) {
                    char why[300];
                    snprintf(why, sizeof(why), "cannot watch pid %d: %s", (int)pid,
                             target_why(pid, src, s.target_state));
                    events_recorder(&L.evs, wall_now(), "stop", why);
                    emit_events(&L);
                }
                scan_free(&s);
                rc = 1;
                break;
            }
            complete = true;
            L.last_scan_time = (double)s.time.tv_sec + (double)s.time.tv_nsec / 1e9;
        } else if (watch_stop_requested) {
            break;
        } else {
            stalled = true;
            scan_stalled(&s, &L.so, clock_now() - scan_job_started(job), scan_job_beacon(job));
            if (o->mode == MODE_ONCE) {
                char *where = esc_term_dup(s.warn.msg[0]); /* it names a process */
                fprintf(stderr, "shmwatch: %s\n", where);
                free(where);
                scan_free(&s);
                done++;
                next = clock_now() + o->interval;
                continue;
            }
        }
        buf_reset(&L.out);
        struct ev_state cur = {0};
        render(&L, &s, by_event ? "event" : "interval", complete && L.events ? &cur : NULL);
        double t = (double)s.time.tv_sec + (double)s.time.tv_nsec / 1e9;
        if (!emit(&L, &L.out, t)) {
            /* A reader that closes the pipe ends a stream normally; any other
             * failure to write (a full disk, /dev/full) is an error.
             * write_atomically has said why it failed. */
            rc = o->prometheus_file ? 1 : output_status(NULL, NULL);
            ev_state_free(&cur);
            scan_free(&s);
            break;
        }
        if (complete && L.events && !scan_events(&L, &s, &cur, t, !by_event)) {
            rc = output_status(NULL, NULL);
            scan_free(&s);
            break;
        }
        ev_state_free(&cur);
        scan_free(&s);
        if (!by_event) {
            done++;
            next = clock_now() + o->interval;
        }
    }
    if (store && rc == 0) {
        events_recorder(&L.evs, wall_now(), "stop",
                        watch_stop_requested ? "the recorder was stopped" : "the recorder ended");
        emit_events(&L);
    }
    buf_free(&L.out);
    buf_free(&L.line);
    group_peaks_free(&L.peaks);
    mount_memory_free(&L.mount_mem);
    event_list_free(&L.evs);
    event_list_free(&L.pending);
    death_counts_free(&L.deaths);
    ev_state_free(&L.prev);
    free(L.reported);
    if (L.cn >= 0)
        proccn_close(L.cn);
    if (L.sn.fd >= 0)
        shmnotify_free(&L.sn);
    if (stalled && rc == 0 && !store) /* the recorder's SIGTERM ends it well */
        rc = 1;
    if (job) {
        /* Its thread may never come back: exit without waiting for it (a
         * leak checker at exit would). The recorder's store is closed
         * first: every record it wrote is whole. */
        scan_job_abandon(job);
        if (store)
            store_close(store);
        fflush(NULL);
        _exit(rc);
    }
    sysroot_close(&L.sys);
    return rc;
}
