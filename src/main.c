/* shmwatch: watch POSIX shared memory (/dev/shm) the way PyTorch's DataLoader
 * uses it. shmwatch_main parses the command line and runs one mode: a
 * snapshot (text, JSON, Prometheus), a stream of them, a subcommand, or the
 * dashboard. The program's main (src/shmwatch.c) only calls it; the tests'
 * tests/helpers/shmwatch_hooked.c calls it after setting the test hooks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/subcommands.h"
#include "cli/options.h"
#include "cli/settings.h"
#include "collect/scan.h"
#include "model/history.h"
#include "collect/scanjob.h"
#include "model/model.h"
#include "report/report.h"
#include "ui/ui.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/safefile.h"
#include "util/sysroot.h"
#include "util/xalloc.h"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
    {"plan", cmd_plan},
    {"clean", cmd_clean},
    {"reap", cmd_reap},
    {"replay", cmd_replay},
    {"why", cmd_why},
};

/* Why pid cannot be watched, from scan_run's or sysroot_open_pid's
 * answer: one line on stderr. */
static void say_target_failure(pid_t pid, int rc, enum scan_target state)
{
    const char *why = state == SCAN_TARGET_REPLACED
                          ? "the process has exited (its pid now belongs to another process)"
                      : state == SCAN_TARGET_EXITED ? "the process has exited"
                                                    : sysroot_pid_why(pid, rc, strerror(-rc));
    fprintf(stderr, "shmwatch: cannot watch pid %d: %s\n", (int)pid, why);
}

/* A snapshot of s (a complete scan, or the stand-in for a stalled one) in
 * the chosen format into out. last_scan_time: when the last complete
 * scan's data was collected, for the Prometheus stand-in; oom carries the
 * cgroup's OOM kill count, peaks each DataLoader group's peaks and mount_mem
 * each mount's own OOM kill count and peaks from one snapshot of a stream to
 * the next. */
static void render(const struct options *o, const struct config *cfg, struct scan *s,
                   double last_scan_time, struct oom_watch *oom, struct group_peaks *peaks,
                   struct mount_memory *mount_mem, struct buf *out)
{
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    if (o->mode == MODE_PROMETHEUS && s->stalled_s > 0) {
        model_build(s, &mo, &m); /* a stand-in: its warning and how long it runs */
        report_prometheus_stalled(out, &m, last_scan_time);
        model_free(&m);
        return;
    }
    mo.warn_pct = cfg->warn_pct;
    mo.crit_pct = cfg->crit_pct;
    mo.peaks = peaks;
    mo.orphan_min_age_s = cfg->orphan_min_age_s;
    mo.trust_pids = cfg->trust_pids;
    double now = clock_now();
    oom_watch_add(oom, now, s->cgroup.present && s->cgroup.has_oom_kills, s->cgroup.oom_kills);
    mo.oom_recent = oom_watch_recent(oom, now);
    if (!(s->stalled_s > 0)) /* a stand-in shows no mount: nothing is forgotten */
        mount_memory_observe(mount_mem, s, now);
    mo.mount_memory = mount_mem;
    model_build(s, &mo, &m);
    group_peaks_learn(peaks, &m);
    mount_memory_learn(mount_mem, &m);
    if (o->mode == MODE_JSON) {
        /* Written as it is made: emit() adds the rest. */
        report_json_stream(out, &m, stdout);
        buf_addc(out, '\n');
    } else if (o->mode == MODE_PROMETHEUS) {
        report_prometheus(out, &m);
    } else {
        struct text_opts to = {.ascii = cfg->ascii};
        report_text(out, &m, &to);
    }
    model_free(&m);
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

/* Writes all of b to stdout, or to the --prometheus-file; false when the
 * reader has gone or the file cannot be written. */
static bool emit(const struct options *o, const struct buf *b)
{
    if (o->prometheus_file)
        return write_atomically(o->prometheus_file, b);
    return output_write(b);
}

static void sleep_interval(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Waits for the scan until the monotonic clock reaches until, a slice at a
 * time so that SIGINT and SIGTERM are heard; true when it has ended. */
static bool wait_scan(struct scan_job *job, double until)
{
    for (;;) {
        double now = clock_now(), slice = now + 0.2;
        if (scan_job_wait(job, slice < until ? slice : until))
            return true;
        if (stop_requested || clock_now() >= until)
            return false;
    }
}

/* Snapshots at each --interval, each scan in a thread of its own watched
 * by this one: a scan that has not ended after scan_stall_limit is said,
 * in place of a snapshot (a stand-in with no figures and a warning of what
 * it is reading; text: on stderr), and again at each interval while it
 * lasts; it is never started twice. The status is 1 when the last snapshot
 * was such a stand-in. */
static int run_snapshots(const struct options *o, const struct config *cfg)
{
    /* --pid: the process as it is now (sysroot_open_pid pins its start
     * time); a stream ends when it exits. */
    pid_t pid = (pid_t)o->pid;
    struct sysroot sys;
    int irc = sysroot_open_system(&sys, pid);
    if (irc < 0) {
        if (pid)
            say_target_failure(pid, irc, SCAN_TARGET_OK);
        else
            fprintf(stderr, "shmwatch: cannot open /proc: %s\n", strerror(-irc));
        return 1;
    }
    struct scan_opts so = {
        .sys = &sys,
        .mounts = (const char *const *)cfg->mounts.item,
        .nmounts = cfg->mounts.n,
        .all = o->all,
    };
    double limit = scan_stall_limit(o->interval);
    double last_scan_time = 0;
    struct scan_job *job = NULL;
    struct buf out;
    buf_init(&out);
    struct group_peaks peaks = {0};
    int rc = 0;
    bool stalled = false;
    struct oom_watch oom = {0};
    struct mount_memory mount_mem = {0};
    for (long long i = 0; !stop_requested && (o->count == 0 || i < o->count); i++) {
        if (i > 0)
            sleep_interval(o->interval);
        if (stop_requested)
            break;
        if (!job && !(job = scan_job_start(&so))) {
            fprintf(stderr, "shmwatch: cannot start the scan: %s\n", strerror(errno));
            rc = 1;
            break;
        }
        struct scan s;
        if (wait_scan(job, stalled ? clock_now() : scan_job_started(job) + limit)) {
            int src = scan_job_finish(job, &s);
            job = NULL;
            stalled = false;
            if (src < 0) {
                say_target_failure(pid, src, s.target_state);
                scan_free(&s);
                rc = 1;
                break;
            }
            last_scan_time = (double)s.time.tv_sec + (double)s.time.tv_nsec / 1e9;
        } else if (stop_requested) {
            break;
        } else {
            stalled = true;
            scan_stalled(&s, &so, clock_now() - scan_job_started(job), scan_job_beacon(job));
            if (o->mode == MODE_ONCE) {
                char *where = esc_term_dup(s.warn.msg[0]); /* it names a process */
                fprintf(stderr, "shmwatch: %s\n", where);
                free(where);
                scan_free(&s);
                continue;
            }
        }
        buf_reset(&out);
        render(o, cfg, &s, last_scan_time, &oom, &peaks, &mount_mem, &out);
        scan_free(&s);
        if (!emit(o, &out)) {
            /* A reader that closes the pipe ends a stream normally; any other
             * failure to write (a full disk, /dev/full) is an error.
             * write_atomically has said why it failed. */
            rc = o->prometheus_file ? 1 : output_status(NULL, NULL);
            break;
        }
    }
    buf_free(&out);
    group_peaks_free(&peaks);
    mount_memory_free(&mount_mem);
    if (stalled && rc == 0)
        rc = 1;
    if (job) {
        /* Its thread may never come back: exit without waiting for it (a
         * leak checker at exit would). */
        scan_job_abandon(job);
        fflush(NULL);
        _exit(rc);
    }
    sysroot_close(&sys);
    return rc;
}

/* The mounts named by --mount or the setting mounts, checked before any
 * scan: a path that is no tmpfs mount is said, and false returned; else a
 * directory of the root file system would be shown as segments. A --pid
 * that cannot be opened is said by the scan, as without --mount. */
static bool mounts_usable(const struct options *o, const struct config *cfg)
{
    if (o->demo || cfg->mounts.n == 0)
        return true;
    struct sysroot sys;
    if (sysroot_open_system(&sys, (pid_t)o->pid) != 0)
        return true;
    char *err = NULL;
    int rc = settings_check_mounts(o, cfg, &sys, &err);
    sysroot_close(&sys);
    if (rc == 0)
        return true;
    fprintf(stderr, "shmwatch: %s\n", err);
    free(err);
    return false;
}

int shmwatch_main(int argc, char **argv)
{
    /* A reader that goes away is seen as EPIPE from a write, not a signal
     * that would end clean or reap between two actions. */
    signal(SIGPIPE, SIG_IGN);
    if (argc > 1) {
        for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
            if (strcmp(argv[1], subcommands[i].name) == 0)
                return subcommands[i].run(argc - 1, argv + 1);
    }
    struct options o;
    char *err = NULL;
    if (cli_parse(CLI_MAIN, argc, argv, &o, &err) != 0) {
        fprintf(stderr, "%s\n", err);
        free(err);
        options_free(&o);
        return 2;
    }
    struct config cfg;
    if (o.mode != MODE_HELP && o.mode != MODE_VERSION && settings_load(&o, &cfg, &err) != 0) {
        fprintf(stderr, "shmwatch: %s\n", err);
        free(err);
        config_free(&cfg);
        options_free(&o);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    if (o.mode != MODE_HELP && o.mode != MODE_VERSION && !mounts_usable(&o, &cfg)) {
        config_free(&cfg);
        options_free(&o);
        return 2;
    }

    int rc = 0;
    switch (o.mode) {
    case MODE_HELP:
        rc = usage_print(CLI_MAIN);
        break;
    case MODE_VERSION:
        output_printf("shmwatch %s\n", SHMWATCH_VERSION);
        rc = output_status(NULL, NULL);
        break;
    case MODE_ONCE:
    case MODE_JSON:
    case MODE_PROMETHEUS:
        rc = run_snapshots(&o, &cfg);
        break;
    case MODE_DASHBOARD:
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
            fputs("shmwatch: the dashboard needs a terminal; use --once or --json for a "
                  "snapshot\n",
                  stderr);
            rc = 2;
            break;
        }
        {
            struct ui_flags uf = {
                .pid = (pid_t)o.pid,
                .all = o.all,
                .demo = o.demo,
                .mounts_given = o.mounts.n > 0,
                .theme_given = o.theme != NULL,
            };
            rc = ui_main(&uf, &cfg);
        }
        break;
    }
    if (o.mode != MODE_HELP && o.mode != MODE_VERSION)
        config_free(&cfg);
    options_free(&o);
    return rc;
}
