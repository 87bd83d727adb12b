/* shmwatch clean: removes orphan segments (and, when asked, old unheld ones),
 * each proven unused right before its unlink. Prints the plan, every action
 * and a total. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act/targets.h"
#include "act/unlink.h"
#include "cli/actcli.h"
#include "cli/subcommands.h"
#include "cli/options.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

static const char usage[] =
    "Usage: shmwatch clean [--dry-run] [--yes] [--all-unheld] [--min-age DUR]\n"
    "                      [--mount PATH] [--orphan-min-age DUR] [--trust-pids]\n"
    "                      [--log FILE] [--config FILE]\n"
    "\n"
    "Removes orphan shared-memory segments: named, held by nobody, and left by a\n"
    "creator that is gone (a killed PyTorch job's torch_* files), and older than\n"
    "orphan_min_age (a younger one may be a batch in flight). A mount reached from\n"
    "several pid namespaces (docker --ipc=host) has no orphans: the pid in a name\n"
    "is ambiguous there; remove its leftovers with --all-unheld. Right before each\n"
    "unlink it checks again that the name is the same regular file that was scanned,\n"
    "not written to since, that you own it (unless root) and that no process holds\n"
    "it open or mapped.\n"
    "Symbolic links, directories and FIFOs are never followed or removed, except a\n"
    "joblib memmapping folder of a dead creator: removed whole when every entry in\n"
    "it is a regular file of this file system that nobody holds.\n"
    "\n"
    "  -n, --dry-run      check everything, remove nothing\n"
    "  -y, --yes          do not ask\n"
    "      --all-unheld   also remove unheld segments (owner unknown) that are\n"
    "                     older than --min-age\n"
    "      --min-age DUR  minimum age of an unheld segment (default: the setting\n"
    "                     min_age, 10m)\n"
    "      --mount PATH   only this mount (repeatable; default: the setting mounts,\n"
    "                     else /dev/shm, /run/shm)\n"
    "      --orphan-min-age DUR\n"
    "                     never call a segment younger than DUR an orphan (default:\n"
    "                     the setting orphan_min_age, 60s)\n"
    "      --trust-pids   inside a container, prove orphans by the pids in their\n"
    "                     names even when /dev/shm cannot be shown private to it\n"
    "      --log FILE     action log (default: the setting log_file, else\n"
    "                     $XDG_STATE_HOME/shmwatch/actions.log)\n"
    "      --config FILE  configuration file (default: as for the dashboard)\n"
    "  -h, --help         print this help\n"
    "\n"
    "Settings come from the configuration file, as for the dashboard.\n"
    "Without --yes it asks on a terminal; without a terminal it only shows the plan.\n"
    "Exit status: 0 everything asked was done, 3 something was refused or failed,\n"
    "2 usage or configuration error, 1 the scan failed or the output could not be\n"
    "written (the actions told to happen still happen, and are logged; a log that\n"
    "cannot be written is said on stderr).\n";

enum { OPT_ALL_UNHELD = 256, OPT_MIN_AGE, OPT_MOUNT, OPT_LOG, OPT_CONFIG, OPT_ORPHAN_MIN_AGE,
       OPT_TRUST_PIDS };

static const struct option longopts[] = {
    {"dry-run", no_argument, NULL, 'n'},
    {"yes", no_argument, NULL, 'y'},
    {"all-unheld", no_argument, NULL, OPT_ALL_UNHELD},
    {"min-age", required_argument, NULL, OPT_MIN_AGE},
    {"mount", required_argument, NULL, OPT_MOUNT},
    {"log", required_argument, NULL, OPT_LOG},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"orphan-min-age", required_argument, NULL, OPT_ORPHAN_MIN_AGE},
    {"trust-pids", no_argument, NULL, OPT_TRUST_PIDS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *H(char *b, uint64_t v)
{
    return fmt_size(b, 32, v);
}

static void put_path(struct buf *out, const struct unlink_target *t)
{
    esc_term(out, t->mount, 0);
    buf_addc(out, '/');
    esc_term(out, t->name, 0);
}

static void print_plan(const struct unlink_plan *p, const struct clean_policy *pol,
                       const struct model *m)
{
    char b1[32];
    struct buf out;
    buf_init(&out);
    if (p->n == 0) {
        buf_printf(&out, "Nothing to clean: no orphan%s segments.\n",
                   pol->all_unheld ? " or old unheld" : "");
    } else if (p->ntry == 0) {
        buf_printf(&out, "Nothing to remove; %zu entr%s named like segments will be refused:\n",
                   p->n, p->n == 1 ? "y" : "ies");
    } else {
        buf_printf(&out, "%zu segment%s to remove, %s allocated:\n", p->ntry,
                   p->ntry == 1 ? "" : "s", H(b1, p->bytes));
        for (size_t i = 0; i < p->n; i++) {
            const struct unlink_target *t = &p->items[i];
            buf_adds(&out, "  ");
            put_path(&out, t);
            if (t->refuse)
                buf_printf(&out, "  (will be refused: %s)\n", t->refuse);
            else
                buf_printf(&out, "  %s  %s\n", H(b1, t->alloc), t->why);
        }
    }
    if (p->held)
        buf_printf(&out, "Kept: %zu segment%s of a dead creator that a live process still "
                         "holds.\n",
                   p->held, p->held == 1 ? "" : "s");
    if (p->inflight)
        buf_printf(&out, "Kept: %zu segment%s of a dead creator younger than orphan_min_age "
                         "%s: %s be in flight.\n",
                   p->inflight, p->inflight == 1 ? "" : "s",
                   fmt_duration(b1, sizeof(b1), m->orphan_min_age_s),
                   p->inflight == 1 ? "it may" : "they may");
    if (p->doubtful)
        buf_printf(&out, "Kept: %zu unheld segment%s whose creator pid proves nothing; the "
                         "mount is %s.\n",
                   p->doubtful, p->doubtful == 1 ? "" : "s",
                   p->doubt ? p->doubt : "reached from several pid namespaces");
    if (p->young) {
        char age[32];
        fmt_duration(age, sizeof(age), pol->min_age_s);
        buf_printf(&out, "Kept: %zu unheld segment%s younger than %s.\n", p->young,
                   p->young == 1 ? "" : "s", age);
    }
    output_write(&out);
    buf_free(&out);
}

static void print_result(const struct unlink_target *t, const struct unlink_result *r)
{
    char b1[32];
    struct buf out;
    buf_init(&out);
    buf_printf(&out, "%-12s ", unlink_outcome_name(r->outcome));
    put_path(&out, t);
    if (r->outcome == UNLINK_REMOVED)
        buf_printf(&out, "  %s freed", H(b1, r->freed));
    if (r->outcome != UNLINK_REMOVED || r->caveat)
        buf_printf(&out, "  %s", r->reason);
    buf_addc(&out, '\n');
    output_write(&out);
    buf_free(&out);
}

/* A mount's use for "used: before -> after", both from statvfs
 * (mounts_refresh) right before and after the unlinks: the user may have
 * answered the question long after the scan. */
struct mount_use {
    size_t mount; /* index in the scan's mount list */
    bool known;   /* statvfs succeeded before the unlinks */
    uint64_t before;
};

/* Each mount of the scan that an item of the plan is on, with its use as
 * last refreshed. */
static size_t mounts_of(const struct mount_list *ml, const struct unlink_plan *p,
                        struct mount_use **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    for (size_t m = 0; m < ml->n; m++) {
        const struct shm_mount *mt = &ml->items[m];
        bool in_plan = false;
        for (size_t i = 0; i < p->n && !in_plan; i++)
            in_plan = strcmp(p->items[i].mount, mt->path) == 0;
        if (!in_plan)
            continue;
        struct mount_use *u = VEC_PUSH(*out, n, cap);
        u->mount = m;
        u->known = mt->stat_ok;
        u->before = mt->used;
    }
    return n;
}

static const char *used_text(char *b, bool known, uint64_t used)
{
    return known ? H(b, used) : "unknown";
}

static int run(struct actcli *a, struct unlink_plan *plan, bool dry)
{
    struct unlink_opts uo = {.proc_dir = "/proc", .uid = geteuid(), .dry_run = dry,
                             .log = &a->log};
    struct unlink_run r;
    struct unlink_result res;
    size_t idx;
    struct mount_list *ml = &a->scan.mounts;
    struct mount_use *mounts = NULL;
    size_t nmounts = 0;
    if (!dry) {
        mounts_refresh(&a->sys, ml);
        nmounts = mounts_of(ml, plan, &mounts);
    }
    unlink_begin(&r, plan, &uo);
    while (unlink_step(&r, &res, &idx))
        print_result(&plan->items[idx], &res);
    char b1[32], b2[32], b3[32];
    if (dry) {
        output_printf("Total: would remove %zu (%s); %zu refused, %zu already gone.\n", r.would,
                      H(b1, r.removed_alloc), r.refused, r.gone);
    } else {
        output_printf("Total: %zu removed, %s freed; %zu refused, %zu failed, %zu already gone.\n",
                      r.removed, H(b1, r.freed), r.refused, r.failed, r.gone);
        mounts_refresh(&a->sys, ml);
        for (size_t i = 0; i < nmounts; i++) {
            const struct shm_mount *mt = &ml->items[mounts[i].mount];
            struct buf out;
            buf_init(&out);
            esc_term(&out, mt->path, 0);
            output_printf("%s used: %s -> %s\n", out.data,
                          used_text(b2, mounts[i].known, mounts[i].before),
                          used_text(b3, mt->stat_ok, mt->used));
            buf_free(&out);
        }
    }
    free(mounts);
    int rc = r.refused || r.failed ? 3 : 0;
    unlink_end(&r);
    return rc;
}

int cmd_clean(int argc, char **argv)
{
    bool dry = false, yes = false, min_age_set = false;
    struct clean_policy pol;
    clean_policy_default(&pol);
    const char *log = NULL, *config = NULL, *orphan_min_age = NULL;
    bool trust_pids = false;
    const char **mounts = NULL;
    size_t nmounts = 0, mcap = 0;
    int c, rc = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":nyh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': dry = true; break;
        case 'y': yes = true; break;
        case OPT_ALL_UNHELD: pol.all_unheld = true; break;
        case OPT_MIN_AGE:
            min_age_set = true;
            if (!parse_duration(optarg, &pol.min_age_s))
                rc = usage_error("clean",
                                 "--min-age: expected a duration such as 10m, 1h or 90, got %s",
                                 optarg);
            break;
        case OPT_MOUNT:
            if (optarg[0] != '/')
                rc = usage_error("clean", "--mount needs an absolute path, got %s", optarg);
            *(const char **)VEC_PUSH(mounts, nmounts, mcap) = optarg;
            break;
        case OPT_LOG: log = optarg; break;
        case OPT_CONFIG: config = optarg; break;
        case OPT_ORPHAN_MIN_AGE: orphan_min_age = optarg; break;
        case OPT_TRUST_PIDS: trust_pids = true; break;
        case 'h':
            free(mounts);
            output_printf("%s", usage);
            return output_status("clean", NULL);
        case ':': rc = usage_error("clean", "%s needs a value", argv[optind - 1]); break;
        default: rc = usage_error("clean", "unknown option %s", argv[optind - 1]); break;
        }
        if (rc) {
            free(mounts);
            return rc;
        }
    }
    if (optind < argc) {
        free(mounts);
        return usage_error("clean", "unexpected argument %s", argv[optind]);
    }
    struct actcli a = {.cmd = "clean"};
    struct options o = {.mounts = mounts,
                        .nmounts = nmounts,
                        .log_file = log,
                        .config = config,
                        .orphan_min_age = orphan_min_age,
                        .trust_pids = trust_pids};
    rc = actcli_scan(&a, &o);
    free(mounts);
    if (rc != 0)
        return rc;
    if (!min_age_set)
        pol.min_age_s = a.cfg.min_age_s;
    struct unlink_plan plan;
    actplan_clean(&a.model, &pol, &plan);
    actplan_add_dirs(&a.model, &pol, &plan);
    print_plan(&plan, &pol, &a.model);
    bool acted = false;
    if (plan.n) {
        bool declined;
        enum actcli_mode mode =
            actcli_decide(dry, yes, plan.ntry ? "Remove them?" : "Report them?", &declined);
        if (!declined) {
            acted = mode == ACTCLI_ACT;
            if (acted)
                actcli_open_log(&a);
            rc = run(&a, &plan, !acted);
        }
    }
    rc = actcli_status(&a, rc, acted);
    unlink_plan_free(&plan);
    actcli_free(&a);
    return rc;
}
