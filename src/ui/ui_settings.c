#include "ui/ui_settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

static int load_theme(struct ui_settings *s, bool from_flag, char **err)
{
    if (!s->cfg.color) {
        s->theme = theme_builtin_mono;
        return 0;
    }
    struct theme_dirs dirs;
    char *terr = NULL, *warning = NULL;
    /* A theme file named by --theme is read even if others could write it
     * (with a warning); one the configuration names or found by name must
     * be root's alone when run as root. */
    int rc = theme_load_trusted(s->cfg.theme, theme_dirs_default(&dirs),
                                from_flag ? CONFIG_TRUST_WARN : CONFIG_TRUST_REQUIRE, &s->theme,
                                &terr, &warning);
    if (warning)
        fprintf(stderr, "shmwatch: warning: %s\n", warning);
    free(warning);
    if (rc == 0)
        return 0;
    const char *where = s->cfg.theme_where ? s->cfg.theme_where : from_flag ? "--theme" : "theme";
    *err = str_printf("%s: %s", where, terr ? terr : strerror(-rc));
    free(terr);
    return 2;
}

/* The demo's in-flight minimum (its batches are seconds old when a worker
 * crashes). */
#define DEMO_ORPHAN_MIN_AGE_S 3.0

int ui_settings_load(const struct ui_flags *f, const struct config *cfg, struct ui_settings *s,
                     char **err)
{
    memset(s, 0, sizeof(*s));
    *err = NULL;
    config_copy(&s->cfg, cfg);
    s->mounts = (const char **)s->cfg.mounts.item;
    s->nmounts = s->cfg.mounts.n;
    s->flags = *f;
    if (f->demo && (f->pid || f->mounts_given)) {
        *err = xstrdup("--demo watches its own scene: it excludes --pid and --mount");
        return 2;
    }
    if (f->demo) {
        s->nmounts = 0; /* the scene's /dev/shm, whatever the file says */
        /* A crashed worker's batches are removed by the scene within an
         * epoch: past a few seconds they show as the orphans they are. */
        if (s->cfg.orphan_min_age_s > DEMO_ORPHAN_MIN_AGE_S)
            s->cfg.orphan_min_age_s = DEMO_ORPHAN_MIN_AGE_S;
    }
    return load_theme(s, f->theme_given, err);
}

void ui_settings_free(struct ui_settings *s)
{
    config_free(&s->cfg);
    memset(s, 0, sizeof(*s));
}
