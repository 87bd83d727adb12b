/* The settings a run uses: the config file (--config, else the XDG or /etc
 * one) with the command line's flags on top. */
#ifndef SHMWATCH_SETTINGS_H
#define SHMWATCH_SETTINGS_H

#include "cli/options.h"
#include "config/config.h"

/* Fills cfg; returns 0, or 2 with a one-line message in err (malloc'd). */
int settings_load(const struct options *o, struct config *cfg, char **err);

#endif
