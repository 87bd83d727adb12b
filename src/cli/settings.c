#include "cli/settings.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/xalloc.h"

static int set(struct config *cfg, const char *key, const char *value, char **err)
{
    char *why = NULL;
    if (config_set(cfg, key, value, &why) == 0)
        return 0;
    *err = str_printf("command line: %s", why ? why : key);
    free(why);
    return 2;
}

int settings_load(const struct options *o, struct config *cfg, char **err)
{
    config_defaults(cfg);
    char path[4096];
    const char *file = o->config ? o->config : config_default_path(path, sizeof(path));
    /* Run as root, a file found by search must be root's alone; one named
     * with --config is read, with a warning when others could write it. */
    char *warning = NULL;
    if (file && config_load_trusted(file, o->config ? CONFIG_TRUST_WARN : CONFIG_TRUST_REQUIRE, cfg,
                                    err, &warning) != 0)
        return 2;
    if (warning)
        fprintf(stderr, "shmwatch: warning: %s\n", warning);
    free(warning);

    /* Flags override the file. */
    if (o->nmounts) {
        for (size_t i = 0; i < cfg->mounts.n; i++)
            free(cfg->mounts.item[i]);
        free(cfg->mounts.item);
        cfg->mounts.item = xcalloc(o->nmounts, sizeof(char *));
        for (size_t i = 0; i < o->nmounts; i++)
            cfg->mounts.item[i] = xstrdup(o->mounts[i]);
        cfg->mounts.n = o->nmounts;
    }
    if (o->interval_set && o->mode == MODE_DASHBOARD) {
        cfg->scan_interval_s = o->interval;
        if (cfg->gauge_interval_s > o->interval)
            cfg->gauge_interval_s = o->interval;
    }
    if (o->theme && set(cfg, "theme", o->theme, err))
        return 2;
    if (o->log_file && set(cfg, "log_file", o->log_file, err))
        return 2;
    if (o->orphan_min_age) {
        char *why = NULL;
        if (config_set(cfg, "orphan_min_age", o->orphan_min_age, &why) != 0) {
            *err = str_printf("--orphan-min-age: %s", why ? why : "bad duration");
            free(why);
            return 2;
        }
    }
    if (o->trust_pids)
        cfg->trust_pids = true;
    const char *no_color = getenv("NO_COLOR");
    if (o->no_color || (no_color && *no_color))
        cfg->color = false;
    if (o->ascii)
        cfg->ascii = true;
    if (o->read_only)
        cfg->read_only = true;
    return config_check(cfg, err) == 0 ? 0 : 2;
}
