/* shmwatch: watch POSIX shared memory (/dev/shm) the way PyTorch's DataLoader
 * uses it. shmwatch_main parses the command line and runs one mode: a
 * snapshot (text, JSON, Prometheus), a stream of them, a subcommand, or the
 * dashboard. The program's main (src/shmwatch.c) only calls it; the tests'
 * tests/helpers/shmwatch_hooked.c calls it after setting the test hooks. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/subcommands.h"
#include "cli/options.h"
#include "cli/settings.h"
#include "ui/ui.h"
#include "util/sysroot.h"
#include "watch.h"

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
    {"plan", cmd_plan},
    {"clean", cmd_clean},
    {"reap", cmd_reap},
    {"record", cmd_record},
    {"replay", cmd_replay},
    {"why", cmd_why},
};

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
    /* --help and --version read no settings. */
    bool runs = o.mode != MODE_HELP && o.mode != MODE_VERSION;
    struct config cfg;
    int rc = 2;
    if (runs && settings_load(&o, &cfg, &err) != 0) {
        fprintf(stderr, "shmwatch: %s\n", err);
        free(err);
        goto out;
    }
    watch_catch_signals(false);
    if (runs && !mounts_usable(&o, &cfg))
        goto out;

    rc = 0;
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
        rc = watch_run(&o, &cfg, NULL);
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
                .record = o.record,
                .record_dir = o.record_dir,
            };
            rc = ui_main(&uf, &cfg);
        }
        break;
    }
out:
    if (runs)
        config_free(&cfg);
    options_free(&o);
    return rc;
}
