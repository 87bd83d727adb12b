/* Colour roles, the built-in themes, and choosing colours for a terminal. */
#include "config/theme.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHMWATCH_DATA_THEMES_DIR
#define SHMWATCH_DATA_THEMES_DIR "/usr/share/shmwatch/themes"
#endif

const char *const theme_role_names[THEME_NROLES] = {
#define THEME_X_NAME(name, help) #name,
    THEME_ROLES(THEME_X_NAME)
#undef THEME_X_NAME
};

/* clang-format off */
/* Shorthands for the tables below: C(fg, bg, fg256, bg256, attrs). */
#define C(f, b, f256, b256, a) {THEME_##f, THEME_##b, f256, b256, a}
#define THEME_DEF THEME_COLOR_DEFAULT
#define BOLD THEME_ATTR_BOLD
#define DIM THEME_ATTR_DIM
#define REV THEME_ATTR_REVERSE
#define UNDER THEME_ATTR_UNDERLINE

/* themes/default.yaml says the same; a unit test keeps them equal. */
const struct theme theme_builtin_default = {
    .name = "default",
    .role = {
        [THEME_normal] = C(DEF, DEF, -1, -1, 0),
        [THEME_title] = C(BLACK, CYAN, -1, -1, 0),
        [THEME_header] = C(BLACK, GREEN, -1, -1, 0),
        [THEME_gauge_ok] = C(GREEN, DEF, -1, -1, 0),
        [THEME_gauge_warn] = C(YELLOW, DEF, 214, -1, BOLD),
        [THEME_gauge_crit] = C(RED, DEF, 196, -1, BOLD),
        [THEME_gauge_empty] = C(BRIGHT_BLACK, DEF, 240, -1, 0),
        [THEME_sparkline] = C(CYAN, DEF, -1, -1, 0),
        [THEME_state_in_use] = C(GREEN, DEF, -1, -1, 0),
        [THEME_state_hidden] = C(YELLOW, DEF, 214, -1, 0),
        [THEME_state_orphan] = C(RED, DEF, -1, -1, BOLD),
        [THEME_state_unheld] = C(MAGENTA, DEF, -1, -1, 0),
        [THEME_group] = C(CYAN, DEF, -1, -1, BOLD),
        [THEME_worker] = C(DEF, DEF, -1, -1, 0),
        [THEME_shm_manager] = C(BRIGHT_BLUE, DEF, 75, -1, 0),
        [THEME_zombie] = C(WHITE, RED, -1, -1, BOLD),
        [THEME_orphan_worker] = C(BLACK, YELLOW, -1, -1, 0),
        [THEME_muted] = C(BRIGHT_BLACK, DEF, 244, -1, 0),
        [THEME_selected] = C(BLACK, CYAN, -1, -1, 0),
        [THEME_marked] = C(YELLOW, DEF, -1, -1, BOLD),
        [THEME_filter] = C(BLACK, YELLOW, -1, -1, 0),
        [THEME_status] = C(BLACK, CYAN, -1, -1, 0),
        [THEME_help_key] = C(WHITE, BLACK, -1, -1, BOLD),
        [THEME_dialog] = C(BLACK, WHITE, -1, -1, 0),
        [THEME_warning] = C(YELLOW, DEF, -1, -1, 0),
        [THEME_error] = C(RED, DEF, -1, -1, BOLD),
        [THEME_verdict_ok] = C(GREEN, DEF, -1, -1, BOLD),
        [THEME_verdict_warn] = C(YELLOW, DEF, -1, -1, BOLD),
        [THEME_verdict_critical] = C(WHITE, RED, -1, -1, BOLD),
    },
};

/* Attributes only: NO_COLOR, --no-color and monochrome terminals. */
#define M(a) C(DEF, DEF, -1, -1, a)
const struct theme theme_builtin_mono = {
    .name = "mono",
    .role = {
        [THEME_normal] = M(0),
        [THEME_title] = M(REV),
        [THEME_header] = M(BOLD | UNDER),
        [THEME_gauge_ok] = M(0),
        [THEME_gauge_warn] = M(BOLD),
        [THEME_gauge_crit] = M(BOLD | REV),
        [THEME_gauge_empty] = M(DIM),
        [THEME_sparkline] = M(0),
        [THEME_state_in_use] = M(0),
        [THEME_state_hidden] = M(UNDER),
        [THEME_state_orphan] = M(BOLD),
        [THEME_state_unheld] = M(DIM),
        [THEME_group] = M(BOLD),
        [THEME_worker] = M(0),
        [THEME_shm_manager] = M(0),
        [THEME_zombie] = M(REV),
        [THEME_orphan_worker] = M(BOLD | UNDER),
        [THEME_muted] = M(DIM),
        [THEME_selected] = M(REV),
        [THEME_marked] = M(BOLD),
        [THEME_filter] = M(UNDER),
        [THEME_status] = M(REV),
        [THEME_help_key] = M(BOLD),
        [THEME_dialog] = M(0),
        [THEME_warning] = M(BOLD),
        [THEME_error] = M(BOLD | UNDER),
        [THEME_verdict_ok] = M(BOLD),
        [THEME_verdict_warn] = M(BOLD | UNDER),
        [THEME_verdict_critical] = M(BOLD | REV),
    },
};

/* clang-format on */

bool theme_is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0);
}

bool theme_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(((struct theme *)0)->name) || s[0] == '.')
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

const char *const *theme_dirs_default(struct theme_dirs *d)
{
    size_t n = 0;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int len = -1;
    if (xdg && xdg[0] == '/')
        len = snprintf(d->user, sizeof(d->user), "%s/shmwatch/themes", xdg);
    else if (home && *home)
        len = snprintf(d->user, sizeof(d->user), "%s/.config/shmwatch/themes", home);
    if (len > 0 && (size_t)len < sizeof(d->user))
        d->dir[n++] = d->user;
    d->dir[n++] = SHMWATCH_DATA_THEMES_DIR;
#ifdef SHMWATCH_THEMES_DIR
    d->dir[n++] = SHMWATCH_THEMES_DIR;
#endif
    d->dir[n] = NULL;
    return d->dir;
}

void theme_pick(const struct theme_color *c, int ncolors, short *fg, short *bg, unsigned *attrs)
{
    *attrs = c->attrs;
    *fg = *bg = THEME_COLOR_DEFAULT;
    if (ncolors < 8)
        return;
    *fg = ncolors >= 256 && c->fg256 >= 0 ? c->fg256 : c->fg;
    *bg = ncolors >= 256 && c->bg256 >= 0 ? c->bg256 : c->bg;
    if (ncolors < 16) {
        if (*fg >= 8) {
            *fg -= 8;
            *attrs |= THEME_ATTR_BOLD;
        }
        if (*bg >= 8)
            *bg -= 8;
    }
}

short theme_color16(int c)
{
    if (c < 0 || c > 255)
        return THEME_COLOR_DEFAULT;
    if (c < 16)
        return (short)c;
    if (c >= 232) { /* greyscale ramp */
        int level = c - 232;
        return level < 6    ? THEME_BLACK
               : level < 12 ? THEME_BRIGHT_BLACK
               : level < 18 ? THEME_WHITE
                            : THEME_BRIGHT_WHITE;
    }
    int i = c - 16, r = i / 36, g = (i / 6) % 6, b = i % 6;
    int max = r > g ? (r > b ? r : b) : (g > b ? g : b);
    if (max == 0)
        return THEME_BLACK;
    /* A component counts when it is at least half the strongest one. */
    int bits = (2 * r >= max ? 1 : 0) | (2 * g >= max ? 2 : 0) | (2 * b >= max ? 4 : 0);
    if (bits == 7) /* grey */
        return max <= 2 ? THEME_BRIGHT_BLACK : max <= 4 ? THEME_WHITE : THEME_BRIGHT_WHITE;
    return (short)(bits + (max >= 5 ? 8 : 0));
}
