/* shmwatch record: the foreground recorder. Opens the store (one recorder
 * per directory), writes its header, then runs the watch loop (src/watch.h)
 * with the store as its output until SIGTERM, SIGINT or SIGHUP. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/options.h"
#include "cli/settings.h"
#include "cli/subcommands.h"
#include "live/recwrite.h"
#include "store/store.h"
#include "watch.h"

int cmd_record(int argc, char **argv)
{
    struct options o;
    int rc;
    if (!usage_parse(CLI_RECORD, argc, argv, &o, &rc))
        return rc;
    if (!o.interval_set)
        o.interval = 10;
    o.interval_set = true;
    o.count = 0;
    o.mode = MODE_JSON;
    struct config cfg;
    char *err = NULL;
    rc = 2;
    if (settings_load(&o, &cfg, &err) != 0) {
        fprintf(stderr, "shmwatch record: %s\n", err);
        free(err);
        goto out;
    }
    char dflt[4096];
    const char *dir = o.dir ? o.dir : store_default_dir(dflt, sizeof(dflt));
    if (!dir) {
        fputs("shmwatch record: no directory for the store: HOME is not set; give --dir\n",
              stderr);
        goto out;
    }
    /* The settings record_max_size and record_max_age, which --max-size and
     * --max-age override (settings_load). */
    struct store_limits lim = {
        .max_size = cfg.record_max_size,
        .max_age_s = cfg.record_max_age_s,
    };
    char *header = recwrite_header(o.interval, o.pid, o.all);
    struct store *st = NULL;
    char msg[512];
    rc = store_open(dir, &lim, header, &st, msg, sizeof(msg));
    free(header);
    if (rc < 0) {
        fprintf(stderr, "shmwatch record: %s\n", msg); /* its names escaped already */
        rc = 1;
        goto out;
    }
    watch_catch_signals(true);
    rc = watch_run(&o, &cfg, st);
    store_close(st);
out:
    config_free(&cfg);
    options_free(&o);
    return rc;
}
