/* The settings a run uses: the config file (--config, else the XDG or /etc
 * one) with the command line's flags on top. */
#ifndef SHMWATCH_SETTINGS_H
#define SHMWATCH_SETTINGS_H

#include "cli/options.h"
#include "config/config.h"
#include "util/sysroot.h"

/* Fills cfg; returns 0, or 2 with a one-line message in err (malloc'd). */
int settings_load(const struct options *o, struct config *cfg, char **err);

/* The mounts named by --mount (or the setting mounts), checked below sys's
 * root (the host's, or --pid's) before any scan: each must be the root of a
 * tmpfs mount. Not with --all, whose paths are matched against every
 * namespace's mounts (collect/node.c). Returns 0, or 2 with a one-line
 * message naming the first path refused and what it is in err (malloc'd). */
int settings_check_mounts(const struct options *o, const struct config *cfg,
                          const struct sysroot *sys, char **err);

#endif
