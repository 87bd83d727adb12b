/* What the dashboard runs with: the settings (config file with the flags
 * on top, cli/settings.c), the theme they name, and the dashboard's own
 * flags. */
#ifndef SHMWATCH_UI_SETTINGS_H
#define SHMWATCH_UI_SETTINGS_H

#include "config/config.h"
#include "config/theme.h"
#include "ui/ui.h"

struct ui_settings {
    struct config cfg;   /* a copy of the settings */
    struct theme theme;  /* the mono theme when colour is off */
    const char **mounts; /* cfg.mounts as the scan takes them */
    size_t nmounts;
    struct ui_flags flags; /* a copy of ui_main's */
};

/* Returns 0, or 2 with a malloc'd one-line message in *err (a theme error
 * as file:line:column: message). */
int ui_settings_load(const struct ui_flags *f, const struct config *cfg, struct ui_settings *s,
                     char **err);
void ui_settings_free(struct ui_settings *s);

#endif
