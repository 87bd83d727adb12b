/* shmwatch replay: the dashboard on a recording (ui/replay.h). The command
 * line is read here; the recording is opened by the dashboard, which says
 * in one line why it cannot be shown. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/options.h"
#include "cli/settings.h"
#include "cli/subcommands.h"
#include "store/store.h"
#include "store/when.h"
#include "ui/ui.h"
#include "util/clock.h"

int cmd_replay(int argc, char **argv)
{
    struct options o;
    int rc;
    if (!usage_parse(CLI_REPLAY, argc, argv, &o, &rc))
        return rc;
    struct ui_flags uf = {.theme_given = o.theme != NULL, .replay_at_set = o.at != NULL};
    if (o.at && !when_parse(o.at, clock_wall(), &uf.replay_at)) {
        rc = usage_error("replay",
                         "--at: '%s' is not a time: RFC 3339 (2026-12-05T03:12:07Z), "
                         "HH:MM[:SS] today or -DUR ago (-10m)",
                         o.at);
        goto out;
    }
    char dir[4096];
    uf.replay_dir = o.dir ? o.dir : store_default_dir(dir, sizeof(dir));
    if (!uf.replay_dir) {
        rc = usage_error("replay", "no default recording directory (HOME is not set): give --dir");
        goto out;
    }
    struct config cfg;
    char *err = NULL;
    if (settings_load(&o, &cfg, &err) != 0) {
        fprintf(stderr, "shmwatch replay: %s\n", err);
        free(err);
        rc = 2;
    } else {
        rc = ui_main(&uf, &cfg);
    }
    config_free(&cfg);
out:
    options_free(&o);
    return rc;
}
