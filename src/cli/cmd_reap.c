/* shmwatch reap: ends orphaned DataLoader workers and stuck
 * torch_shm_managers (SIGTERM, then SIGKILL after --timeout), and nudges
 * the parents of zombies. Each process is re-identified (pid and start
 * time) right before each signal. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "act/reap.h"
#include "cli/actcli.h"
#include "cli/subcommands.h"
#include "cli/options.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"

static const char usage[] =
    "Usage: shmwatch reap [--dry-run] [--yes] [--timeout S] [--log FILE]\n"
    "                     [--config FILE] [--pid PID | --all]\n"
    "\n"
    "Ends what a crashed PyTorch job leaves running: orphaned DataLoader workers\n"
    "(their job's main process is gone) and stuck torch_shm_managers (no live\n"
    "client left). Each gets SIGTERM, then SIGKILL if it is still alive after the\n"
    "timeout. A zombie is already dead: its parent is named and sent SIGCHLD.\n"
    "Processes are checked to be the same ones that were scanned (pid and start\n"
    "time) and yours (unless you are root) right before every signal.\n"
    "\n"
    "  -n, --dry-run    check everything, signal nothing\n"
    "  -y, --yes        do not ask\n"
    "  -t, --timeout S  seconds from SIGTERM to SIGKILL (default 5)\n"
    "      --log FILE   action log (default: the setting log_file, else\n"
    "                   $XDG_STATE_HOME/shmwatch/actions.log)\n"
    "      --config FILE\n"
    "                   configuration file (default: as for the dashboard)\n"
    "      --pid PID    act inside the namespaces of process PID only (a container,\n"
    "                   from the host): its processes, each line naming it; refused\n"
    "                   if PID exits before a signal\n"
    "      --all        every container of the node view and the host: each\n"
    "                   process acted on as part of its own container, the plan\n"
    "                   and each line naming it\n"
    "  -h, --help       print this help\n"
    "\n"
    "Settings (log_file) come from the configuration file, as for the dashboard.\n"
    "Without --yes it asks on a terminal; without a terminal it only shows the plan.\n"
    "Exit status: 0 everything asked was done, 3 something was refused or could not\n"
    "be ended, 2 usage or configuration error, 1 the scan failed or the output could\n"
    "not be written (the actions told to happen still happen, and are logged; a log\n"
    "that cannot be written is said on stderr).\n";

enum { OPT_LOG = 256, OPT_CONFIG,
       OPT_PID,
       OPT_ALL };

static const struct option longopts[] = {
    {"dry-run", no_argument, NULL, 'n'},
    {"yes", no_argument, NULL, 'y'},
    {"timeout", required_argument, NULL, 't'},
    {"log", required_argument, NULL, OPT_LOG},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"pid", required_argument, NULL, OPT_PID},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void put_target(struct buf *out, const struct signal_target *t)
{
    buf_printf(out, "pid %d (", (int)t->pid);
    esc_term(out, t->comm, 0);
    buf_adds(out, ")");
    if (t->ns) { /* --pid, --all: which container */
        char *where = actns_where(t->ns);
        buf_printf(out, " (%s)", where);
        free(where);
    }
}

static void print_section(struct buf *out, const char *title, const struct signal_plan *p)
{
    if (!p->n)
        return;
    buf_printf(out, "%s:\n", title);
    for (size_t i = 0; i < p->n; i++) {
        buf_adds(out, "  ");
        put_target(out, &p->items[i]);
        buf_printf(out, " uid %lu  %s\n    ", (unsigned long)p->items[i].uid, p->items[i].why);
        esc_term(out, p->items[i].cmdline, 0);
        buf_addc(out, '\n');
    }
}

static void print_plan(const struct reap_plan *p)
{
    struct buf out;
    buf_init(&out);
    if (reap_plan_count(p) == 0)
        buf_adds(&out, "Nothing to reap: no orphaned workers, stuck shm managers or zombies.\n");
    print_section(&out, "Orphaned workers to end (SIGTERM, then SIGKILL)", &p->workers);
    print_section(&out, "Stuck shm managers to end", &p->managers);
    print_section(&out, "Zombies (already dead; their parents get SIGCHLD)", &p->zombies);
    print_section(&out, "Left alone", &p->serving);
    output_write(&out);
    buf_free(&out);
}

struct tally {
    size_t done, refused, other;
};

static void on_step(void *ctx, const struct signal_target *t, const struct signal_result *r)
{
    struct tally *n = ctx;
    struct buf out;
    buf_init(&out);
    buf_printf(&out, "%-12s ", signal_outcome_name(r->outcome));
    put_target(&out, t);
    buf_printf(&out, "  %s\n", r->reason);
    output_write(&out);
    buf_free(&out);
    switch (r->outcome) {
    case SIGNAL_REFUSED:
    case SIGNAL_FAILED:
    case SIGNAL_SURVIVED: n->refused++; break;
    case SIGNAL_ZOMBIE: n->other++; break;
    default: n->done++; break;
    }
}

int cmd_reap(int argc, char **argv)
{
    struct signal_opts so;
    signal_opts_default(&so);
    bool yes = false;
    const char *log = NULL, *config = NULL;
    pid_t pid = 0;
    bool all = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":nyt:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': so.dry_run = true; break;
        case 'y': yes = true; break;
        case 't':
            if (!parse_duration(optarg, &so.timeout_s) || so.timeout_s > 3600)
                return usage_error("reap", "--timeout: expected seconds (at most 3600), got %s",
                                   optarg);
            break;
        case OPT_LOG: log = optarg; break;
        case OPT_CONFIG: config = optarg; break;
        case OPT_PID:
            if (!actcli_parse_pid(optarg, &pid))
                return usage_error("reap", "--pid: '%s' is not a process id", optarg);
            break;
        case OPT_ALL: all = true; break;
        case 'h': output_printf("%s", usage); return output_status("reap", NULL);
        case ':': return usage_error("reap", "%s needs a value", argv[optind - 1]);
        default: return usage_error("reap", "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("reap", "unexpected argument %s", argv[optind]);
    if (all && pid)
        return usage_error("reap", "--all and --pid exclude each other");
    struct actcli a = {.cmd = "reap"};
    struct options o = {.log_file = log, .config = config, .pid = pid, .all = all};
    int src = actcli_scan(&a, &o);
    if (src != 0)
        return src;
    struct reap_plan plan;
    so.sys = &a.sys;
    reap_plan_build_where(&a.model, &a.sys, actviews_proc, &a.views, &plan);
    print_plan(&plan);
    int rc = 0;
    bool acted = false;
    if (reap_plan_count(&plan)) {
        bool declined;
        enum actcli_mode mode = actcli_decide(so.dry_run, yes, "Proceed?", &declined);
        if (!declined) {
            so.dry_run = mode == ACTCLI_DRY;
            acted = !so.dry_run;
            if (acted)
                actcli_open_log(&a);
            so.log = &a.log;
            struct tally n = {0};
            struct reap_results res;
            reap_run(&so, &plan, &res, on_step, &n);
            if (so.dry_run)
                output_printf("Total: %zu would be signalled, %zu refused.\n", n.done, n.refused);
            else
                output_printf("Total: %zu done, %zu refused or not ended, %zu still zombies.\n",
                              n.done, n.refused, n.other);
            reap_results_free(&res);
            rc = n.refused ? 3 : 0;
        }
    }
    rc = actcli_status(&a, rc, acted);
    reap_plan_free(&plan);
    actcli_free(&a);
    return rc;
}
