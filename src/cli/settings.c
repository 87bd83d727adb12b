#include "cli/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opttable.h"
#include "collect/mounts.h"
#include "collect/procmap.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/xalloc.h"

/* The rows of o's command with a config key that were given: each goes
 * through the config layer's setter, which checks it as it checks the file,
 * in the order of the config table (so the first bad one is said). */
static int set_keys(const struct options *o, struct config *cfg, char **err)
{
    for (size_t k = 0; k < config_noptions; k++) {
        for (size_t i = 0; i < cli_nopts; i++) {
            const struct cli_opt *r = &cli_opts[i];
            if (!r->config_key || strcmp(r->config_key, config_options[k].name) != 0 ||
                !(r->cmds & CLI_IN(o->cmd)))
                continue;
            const char *v;
            if (r->type == CLI_FLAG)
                v = *(const bool *)((const char *)o + r->offset) ? "true" : NULL;
            else
                v = *(const char *const *)((const char *)o + r->offset);
            char *why = NULL;
            if (v && config_set(cfg, r->config_key, v, &why) != 0) {
                struct buf b;
                buf_init(&b);
                const char *at = strstr(r->config_bad, "%s");
                buf_add(&b, r->config_bad, (size_t)(at - r->config_bad));
                buf_adds(&b, why);
                buf_adds(&b, at + 2);
                *err = buf_steal(&b);
                free(why);
                return 2;
            }
        }
    }
    return 0;
}

/* SHMWATCH_MAPS: how processes' mappings are read: text, or query (the
 * default: PROCMAP_QUERY where the kernel answers it; collect/procmap.h). */
static int maps_way(char **err)
{
    const char *v = getenv("SHMWATCH_MAPS");
    if (!v || !*v)
        return 0;
    if (strcmp(v, "text") == 0) {
        procmap_force(PROCMAP_WAY_TEXT);
    } else if (strcmp(v, "query") == 0) {
        procmap_force(PROCMAP_WAY_QUERY);
    } else {
        char *shown = esc_term_dup(v);
        *err = str_printf("SHMWATCH_MAPS is \"%s\": text or query", shown);
        free(shown);
        return -1;
    }
    return 0;
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
    if (o->mounts.n) {
        config_forget_mounts_where(cfg);
        for (size_t i = 0; i < cfg->mounts.n; i++)
            free(cfg->mounts.item[i]);
        free(cfg->mounts.item);
        cfg->mounts.item = xcalloc(o->mounts.n, sizeof(char *));
        for (size_t i = 0; i < o->mounts.n; i++)
            cfg->mounts.item[i] = xstrdup(o->mounts.item[i]);
        cfg->mounts.n = o->mounts.n;
    }
    if (o->interval_set && o->mode == MODE_DASHBOARD) {
        cfg->scan_interval_s = o->interval;
        if (cfg->gauge_interval_s > o->interval)
            cfg->gauge_interval_s = o->interval;
    }
    if (set_keys(o, cfg, err))
        return 2;
    const char *no_color = getenv("NO_COLOR");
    if (o->no_color || (no_color && *no_color))
        cfg->color = false;
    if (maps_way(err) != 0)
        return 2;
    return config_check(cfg, err) == 0 ? 0 : 2;
}

int settings_check_mounts(const struct options *o, const struct config *cfg,
                          const struct sysroot *sys, char **err)
{
    if (o->all)
        return 0;
    for (size_t i = 0; i < cfg->mounts.n; i++) {
        char *why = NULL;
        if (mounts_check_named(sys, cfg->mounts.item[i], &why) == 0)
            continue;
        char *path = esc_term_dup(cfg->mounts.item[i]);
        char *in = sys->pid ? str_printf(" (in the root of pid %d)", (int)sys->pid) : xstrdup("");
        if (!o->mounts.n && cfg->mounts_where && cfg->mounts_where[i])
            *err = str_printf("%s: mounts: %s%s: %s", cfg->mounts_where[i], path, in, why);
        else
            *err = str_printf("%s %s%s: %s", o->mounts.n ? "--mount" : "the setting mounts:", path,
                              in, why);
        free(in);
        free(path);
        free(why);
        return 2;
    }
    return 0;
}
