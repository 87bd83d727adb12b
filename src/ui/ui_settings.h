/* What the dashboard runs with: the settings (config file with the flags
 * on top, cli/settings.c), the theme they name, and the dashboard's own
 * flags. */
#ifndef SHMWATCH_UI_SETTINGS_H
#define SHMWATCH_UI_SETTINGS_H

#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"
#include "config/theme.h"

struct ui_flags;

struct ui_settings {
    struct config cfg;   /* a copy of the settings */
    struct theme theme;  /* the mono theme when colour is off */
    const char **mounts; /* cfg.mounts as the scan takes them */
    size_t nmounts;
    pid_t pid; /* --pid, 0 for none */
    bool all;  /* --all: the node view */
    bool demo;
    bool record;            /* --record */
    const char *record_dir; /* its DIR, NULL: the default */
};

/* Returns 0, or 2 with a malloc'd one-line message in *err (a theme error
 * as file:line:column: message). */
int ui_settings_load(const struct ui_flags *f, const struct config *cfg, struct ui_settings *s,
                     char **err);
void ui_settings_free(struct ui_settings *s);

#endif
