/* shmwatch: watch POSIX shared memory (/dev/shm) the way PyTorch's DataLoader
 * uses it. main parses the command line and runs one mode: a snapshot (text,
 * JSON, Prometheus), a stream of them, a subcommand, or the dashboard. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/settings.h"
#include "collect/scan.h"
#include "model/history.h"
#include "model/model.h"
#include "report/report.h"
#include "ui/ui.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/safefile.h"

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
};

/* Why pid cannot be watched, from scan_run's or scan_target_identify's
 * answer: one line on stderr. */
static void say_target_failure(pid_t pid, int rc, enum scan_target state)
{
    const char *why = state == SCAN_TARGET_REPLACED
                          ? "the process has exited (its pid now belongs to another process)"
                      : state == SCAN_TARGET_EXITED ? "the process has exited"
                                                    : strerror(-rc);
    fprintf(stderr, "shmwatch: cannot watch pid %d: %s\n", (int)pid, why);
}

/* One scan and model, written in the chosen format into out; target_start
 * pins --pid to the process first seen, oom carries the cgroup's OOM kill
 * count and peaks each DataLoader group's peaks from one snapshot of a
 * stream to the next. */
static int snapshot(const struct options *o, const struct config *cfg,
                    unsigned long long target_start, struct oom_watch *oom,
                    struct group_peaks *peaks, struct buf *out)
{
    struct scan_opts so = {
        .proc_dir = "/proc",
        .target_pid = o->pid,
        .target_start = target_start,
        .mounts = (const char *const *)cfg->mounts.item,
        .nmounts = cfg->mounts.n,
    };
    struct scan s;
    int rc = scan_run(&so, &s);
    if (rc < 0) {
        say_target_failure(o->pid, rc, s.target_state);
        scan_free(&s);
        return 1;
    }
    struct model_opts mo;
    model_opts_default(&mo);
    mo.warn_pct = cfg->warn_pct;
    mo.crit_pct = cfg->crit_pct;
    mo.peaks = peaks;
    double now = clock_now();
    oom_watch_add(oom, now, s.cgroup.present && s.cgroup.has_oom_kills, s.cgroup.oom_kills);
    mo.oom_recent = oom_watch_recent(oom, now);
    struct model m;
    model_build(&s, &mo, &m);
    group_peaks_learn(peaks, &m);
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
    scan_free(&s);
    return 0;
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

static int run_snapshots(const struct options *o, const struct config *cfg)
{
    /* --pid: the process as it is now; a stream ends when it exits. */
    unsigned long long start = 0;
    if (o->pid) {
        int irc = scan_target_identify("/proc", o->pid, &start);
        if (irc < 0) {
            say_target_failure(o->pid, irc, SCAN_TARGET_OK);
            return 1;
        }
    }
    struct buf out;
    buf_init(&out);
    struct group_peaks peaks = {0};
    int rc = 0;
    struct oom_watch oom = {0};
    for (long long i = 0; !stop_requested && (o->count == 0 || i < o->count); i++) {
        if (i > 0)
            sleep_interval(o->interval);
        if (stop_requested)
            break;
        buf_reset(&out);
        rc = snapshot(o, cfg, start, &oom, &peaks, &out);
        if (rc)
            break;
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
    return rc;
}

int main(int argc, char **argv)
{
    /* A scan's big arrays (files, segments, inode tables) are freed whole
     * once the next one is built; mmapped, they go back to the system at
     * once. glibc's default raises the threshold after the first such free
     * and serves them from the heap, which keeps every peak: the dashboard
     * at 100,000 segments peaked at 84 MiB, with this at 59 MiB. */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
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
    if (options_parse(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "shmwatch: %s\n", err);
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

    int rc = 0;
    switch (o.mode) {
    case MODE_HELP:
        output_printf("%s", options_usage());
        rc = output_status(NULL, NULL);
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
        rc = ui_main(&o, &cfg);
        break;
    }
    if (o.mode != MODE_HELP && o.mode != MODE_VERSION)
        config_free(&cfg);
    options_free(&o);
    return rc;
}
