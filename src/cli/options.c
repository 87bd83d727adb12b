#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

static const char usage[] =
    "Usage: shmwatch [options]            live dashboard of POSIX shared memory (/dev/shm)\n"
    "       shmwatch --once               one plain-text snapshot, then exit\n"
    "       shmwatch --json [--interval S --count N]   JSON snapshot(s), one per line\n"
    "       shmwatch --prometheus         one snapshot in Prometheus text format\n"
    "       shmwatch plan --batch-size N --sample-shape CxHxW[,...] --workers N [...]\n"
    "       shmwatch plan --observe PID [--workers N] [--prefetch-factor K] [...]\n"
    "       shmwatch clean [--dry-run] [--yes] [--all-unheld] [--min-age DUR] [--mount PATH]\n"
    "                      [--orphan-min-age DUR] [--trust-pids] [--log FILE] [--config FILE]\n"
    "                      [--pid PID | --all]\n"
    "       shmwatch reap  [--dry-run] [--yes] [--timeout S] [--log FILE] [--config FILE]\n"
    "                      [--pid PID | --all]\n"
    "\n"
    "Shows every shm mount's fill, every segment with its holders and state (in use,\n"
    "hidden = deleted but held, orphan, unheld), PyTorch DataLoader groups (main ->\n"
    "workers -> shm managers) and the memory budget (app + shm against the limit).\n"
    "\n"
    "Options:\n"
    "  --once                 print a text snapshot and exit\n"
    "  --json                 print a JSON snapshot (schema 1) and exit\n"
    "  --prometheus           print Prometheus metrics and exit\n"
    "  --prometheus-file PATH write metrics to PATH atomically every --interval\n"
    "                         (default 15 s) until stopped or --count is reached\n"
    "  --interval S           seconds between snapshots (with --json/--prometheus-file)\n"
    "                         or between holder scans (dashboard; default 2)\n"
    "  --count N              number of snapshots with --interval (0 = forever)\n"
    "                         (a scan still running after 3 intervals, at least 10 s,\n"
    "                         is reported as stalled in place of a snapshot)\n"
    "  --mount PATH           watch this mount (repeatable; default: tmpfs at\n"
    "                         /dev/shm and /run/shm)\n"
    "  --pid PID              watch the mount and cgroup namespaces of PID\n"
    "                         (e.g. a container's process, from the host)\n"
    "  --all                  the node view: every shm mount of every mount namespace\n"
    "                         (every container's /dev/shm), each with its container\n"
    "                         and its own memory budget\n"
    "  --orphan-min-age DUR   never call a segment younger than DUR an orphan\n"
    "                         (default: the setting orphan_min_age, 60s)\n"
    "  --trust-pids           inside a container whose /dev/shm shmwatch cannot show\n"
    "                         private, still prove orphans by the pids in their names\n"
    "  --config FILE          configuration file (YAML)\n"
    "  --theme NAME|FILE      colour theme for the dashboard\n"
    "  --no-color             no colours (also when NO_COLOR is set)\n"
    "  --ascii                ASCII-only drawing and names\n"
    "  --read-only            disable every action key in the dashboard\n"
    "  --log FILE             action log (default: the setting log_file, else\n"
    "                         $XDG_STATE_HOME/shmwatch/actions.log)\n"
    "  --demo                 open the dashboard on a private demo scene\n"
    "  --version              print the version and exit\n"
    "  -h, --help             print this help and exit\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure, 2 usage or configuration error,\n"
    "3 (clean, reap) something asked for was refused.\n"
    "See shmwatch(1) and the guide in doc/guide.md.\n";

const char *options_usage(void)
{
    return usage;
}

/* The errno of the first write to stdout that failed, else 0. */
static int output_err;

/* Flushes stdout after a write of want bytes that wrote put; false, with
 * the failure kept, when not all of it went out. Once a write has failed no
 * other is tried: the output is already incomplete. */
static bool output_done(size_t put, size_t want)
{
    if (put == want && fflush(stdout) == 0 && !ferror(stdout))
        return true;
    output_err = errno ? errno : EIO;
    return false;
}

bool output_write(const struct buf *b)
{
    if (output_err)
        return false;
    errno = 0;
    return output_done(fwrite(b->data, 1, b->len, stdout), b->len);
}

bool output_printf(const char *fmt, ...)
{
    if (output_err)
        return false;
    errno = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n >= 0 ? output_done((size_t)n, (size_t)n) : output_done(0, 1);
}

int output_status(const char *cmd, const char *note)
{
    if (!output_err) { /* what was written otherwise (fputs, a stream) */
        errno = 0;
        output_done(0, 0);
    }
    if (!output_err || output_err == EPIPE)
        return 0;
    fprintf(stderr, "shmwatch%s%s: cannot write the output: %s%s%s\n", cmd ? " " : "",
            cmd ? cmd : "", strerror(output_err), note ? "; " : "", note ? note : "");
    return 1;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = str_vprintf(fmt, ap);
    va_end(ap);
    /* The arguments are the user's text: a newline or an escape sequence
     * must not split the line or reach the terminal. */
    char *m = esc_term_dup(msg);
    fprintf(stderr, "shmwatch %s: %s (see shmwatch %s --help)\n", cmd, m, cmd);
    free(m);
    free(msg);
    return 2;
}

enum {
    OPT_ONCE = 256, OPT_JSON, OPT_PROM, OPT_PROM_FILE, OPT_INTERVAL, OPT_COUNT, OPT_MOUNT,
    OPT_PID, OPT_CONFIG, OPT_THEME, OPT_NO_COLOR, OPT_ASCII, OPT_READ_ONLY, OPT_LOG, OPT_DEMO,
    OPT_VERSION, OPT_TRUST_PIDS, OPT_ORPHAN_MIN_AGE,
    OPT_ALL,
};

static const struct option longopts[] = {
    {"once", no_argument, NULL, OPT_ONCE},
    {"json", no_argument, NULL, OPT_JSON},
    {"prometheus", no_argument, NULL, OPT_PROM},
    {"prometheus-file", required_argument, NULL, OPT_PROM_FILE},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"count", required_argument, NULL, OPT_COUNT},
    {"mount", required_argument, NULL, OPT_MOUNT},
    {"pid", required_argument, NULL, OPT_PID},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"theme", required_argument, NULL, OPT_THEME},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"ascii", no_argument, NULL, OPT_ASCII},
    {"read-only", no_argument, NULL, OPT_READ_ONLY},
    {"log", required_argument, NULL, OPT_LOG},
    {"demo", no_argument, NULL, OPT_DEMO},
    {"trust-pids", no_argument, NULL, OPT_TRUST_PIDS},
    {"orphan-min-age", required_argument, NULL, OPT_ORPHAN_MIN_AGE},
    {"all", no_argument, NULL, OPT_ALL},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

__attribute__((format(printf, 2, 0))) static int fail(char **err, const char *fmt,
                                                      const char *arg)
{
    char *a = esc_term_dup(arg); /* the user's text, as in usage_error */
    *err = str_printf(fmt, a);
    free(a);
    return 2;
}

static int set_mode(struct options *o, enum run_mode m, char **err)
{
    if (o->mode != MODE_DASHBOARD && o->mode != m)
        return fail(err, "%s", "--once, --json and --prometheus exclude each other");
    o->mode = m;
    return 0;
}

int options_parse(int argc, char **argv, struct options *o, char **err)
{
    memset(o, 0, sizeof(*o));
    o->count = 1;
    *err = NULL;
    optind = 1;
    opterr = 0;
    int c;
    long long v;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case OPT_ONCE: rc = set_mode(o, MODE_ONCE, err); break;
        case OPT_JSON: rc = set_mode(o, MODE_JSON, err); break;
        case OPT_PROM: rc = set_mode(o, MODE_PROMETHEUS, err); break;
        case OPT_PROM_FILE: o->prometheus_file = optarg; break;
        case OPT_INTERVAL:
            if (!parse_duration(optarg, &o->interval) || o->interval < 0.05 ||
                o->interval > 86400)
                return fail(err, "--interval: '%s' is not a duration from 0.05 s to 1 day",
                            optarg);
            o->interval_set = true;
            break;
        case OPT_COUNT:
            if (!parse_int(optarg, 0, 1000000000, &o->count))
                return fail(err, "--count: '%s' is not a whole number >= 0", optarg);
            o->count_set = true;
            break;
        case OPT_MOUNT:
            if (optarg[0] != '/')
                return fail(err, "--mount: '%s' is not an absolute path", optarg);
            o->mounts = xrealloc(o->mounts, (o->nmounts + 1) * sizeof(*o->mounts));
            o->mounts[o->nmounts++] = optarg;
            break;
        case OPT_PID:
            if (!parse_int(optarg, 1, 0x7fffffff, &v))
                return fail(err, "--pid: '%s' is not a process id", optarg);
            o->pid = (pid_t)v;
            break;
        case OPT_CONFIG: o->config = optarg; break;
        case OPT_THEME: o->theme = optarg; break;
        case OPT_NO_COLOR: o->no_color = true; break;
        case OPT_ASCII: o->ascii = true; break;
        case OPT_READ_ONLY: o->read_only = true; break;
        case OPT_LOG: o->log_file = optarg; break;
        case OPT_DEMO: o->demo = true; break;
        case OPT_TRUST_PIDS: o->trust_pids = true; break;
        case OPT_ORPHAN_MIN_AGE: o->orphan_min_age = optarg; break;
        case OPT_ALL: o->all = true; break;
        case OPT_VERSION: o->mode = MODE_VERSION; return 0;
        case 'h': o->mode = MODE_HELP; return 0;
        case ':': return fail(err, "%s needs a value", argv[optind - 1]);
        default: return fail(err, "unknown option '%s' (see --help)", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return fail(err, "unexpected argument '%s' (see --help)", argv[optind]);
    if (o->prometheus_file) {
        if (o->mode != MODE_DASHBOARD && o->mode != MODE_PROMETHEUS)
            return fail(err, "%s", "--prometheus-file goes with Prometheus output only");
        o->mode = MODE_PROMETHEUS;
        /* The documented default: a file rewritten every 15 s, --count
         * times (or until stopped) whether --interval is given or not. */
        if (!o->interval_set)
            o->interval = 15;
        o->interval_set = true;
    }
    if (o->all && o->pid)
        return fail(err, "%s", "--all and --pid exclude each other");
    if (o->all && o->demo)
        return fail(err, "%s", "--demo watches its own scene: it excludes --all");
    if (o->count_set && !o->interval_set && o->count != 1)
        return fail(err, "%s", "--count needs --interval");
    if (o->interval_set && o->mode != MODE_DASHBOARD && !o->count_set)
        o->count = 0;
    return 0;
}

void options_free(struct options *o)
{
    free(o->mounts);
    o->mounts = NULL;
}
