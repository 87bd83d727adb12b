/* Colour themes: every colour role the dashboard draws with is declared once
 * in THEME_ROLES; a theme gives each role a foreground, a background and
 * attributes. Themes are YAML files (themes/default.yaml documents the
 * format); the built-in default and mono themes need no file. No ncurses
 * here: the UI maps these values to colour pairs and A_* attributes. */
#ifndef SHMWATCH_THEME_H
#define SHMWATCH_THEME_H

#include <stdbool.h>

#include "config/trust.h"

/* X(name, help): name is the key under `colors:` in a theme file. */
#define THEME_ROLES(X)                                                                             \
    X(normal, "ordinary text and the background of the screen")                                    \
    X(title, "top line: program name, host, paused state")                                         \
    X(header, "column headings and panel titles")                                                  \
    X(gauge_ok, "filled part of a gauge below warn_pct")                                           \
    X(gauge_warn, "filled part of a gauge at or above warn_pct")                                   \
    X(gauge_crit, "filled part of a gauge at or above crit_pct")                                   \
    X(gauge_empty, "unfilled part of a gauge")                                                     \
    X(sparkline, "fill history beside a gauge")                                                    \
    X(state_in_use, "segment held by a live process")                                              \
    X(state_hidden, "segment unlinked but still held: invisible to ls, still filling the mount")   \
    X(state_orphan, "segment nobody holds whose owner is known dead: safe to remove")              \
    X(state_unheld, "segment nobody holds, owner unknown")                                         \
    X(group, "DataLoader group row: main process and totals")                                      \
    X(worker, "DataLoader worker row")                                                             \
    X(shm_manager, "torch_shm_manager row")                                                        \
    X(zombie, "zombie process")                                                                    \
    X(orphan_worker, "worker whose main process is gone")                                          \
    X(muted, "secondary detail: pids, ages, tree lines, hints")                                    \
    X(selected, "row under the cursor")                                                            \
    X(marked, "rows marked for an action")                                                         \
    X(filter, "filter prompt and text")                                                            \
    X(status, "status line at the bottom")                                                         \
    X(help_key, "key names in the help screen and the status line")                                \
    X(dialog, "dialog boxes and the details page")                                                 \
    X(warning, "scan warnings and cautions")                                                       \
    X(error, "failed actions")                                                                     \
    X(verdict_ok, "budget verdict: fits")                                                          \
    X(verdict_warn, "budget verdict: tight")                                                       \
    X(verdict_critical, "budget verdict: will not fit")

/* clang-format off */
enum theme_role {
#define THEME_X_ENUM(name, help) THEME_##name,
    THEME_ROLES(THEME_X_ENUM)
#undef THEME_X_ENUM
    THEME_NROLES
};
/* clang-format on */

extern const char *const theme_role_names[THEME_NROLES];

/* Colour values: the terminal's default, the 8 basic colours and their
 * bright variants (as ncurses numbers them). */
enum theme_colour {
    THEME_COLOR_DEFAULT = -1,
    THEME_BLACK,
    THEME_RED,
    THEME_GREEN,
    THEME_YELLOW,
    THEME_BLUE,
    THEME_MAGENTA,
    THEME_CYAN,
    THEME_WHITE,
    THEME_BRIGHT_BLACK,
    THEME_BRIGHT_RED,
    THEME_BRIGHT_GREEN,
    THEME_BRIGHT_YELLOW,
    THEME_BRIGHT_BLUE,
    THEME_BRIGHT_MAGENTA,
    THEME_BRIGHT_CYAN,
    THEME_BRIGHT_WHITE,
};

enum theme_attr {
    THEME_ATTR_BOLD = 1u << 0,
    THEME_ATTR_DIM = 1u << 1,
    THEME_ATTR_REVERSE = 1u << 2,
    THEME_ATTR_UNDERLINE = 1u << 3,
};

struct theme_color {
    short fg, bg;       /* THEME_COLOR_DEFAULT or 0-15 */
    short fg256, bg256; /* 0-255 for 256-colour terminals; -1: use fg/bg */
    unsigned attrs;     /* THEME_ATTR_* */
};

struct theme {
    char name[64];
    struct theme_color role[THEME_NROLES];
};

/* Always available, without files: the default colours, and mono
 * (attributes only, for NO_COLOR, --no-color and monochrome terminals). */
extern const struct theme theme_builtin_default;
extern const struct theme theme_builtin_mono;

/* A name is [A-Za-z0-9_.-]+ not starting with '.'; a path contains '/' or
 * ends in ".yaml". */
bool theme_is_path(const char *s);
bool theme_name_valid(const char *s);

/* Loads a theme file, or a name as <dir>/<name>.yaml from the first of the
 * NULL-terminated search_dirs that has it; "default" and "mono" fall back to
 * the built-in themes when no file has them. Roles a file leaves out take
 * the `normal` role's colours. Returns 0; -ENOENT (not found), -EINVAL (bad
 * name or content) or -errno, with *err a malloc'd one-line message,
 * "file:line:column: message" for errors in the file. The trust rule of
 * config/trust.h applies to the file read: trust applies to a path; a file
 * found by name in search_dirs is never taken as named by the user
 * (CONFIG_TRUST_WARN becomes _REQUIRE). A refusal is -EPERM with *err =
 * "file: refused: ..."; *warning (malloc'd, else NULL; may be NULL unless
 * trust is CONFIG_TRUST_WARN) says why a file read anyway is risky. */
int theme_load_trusted(const char *name_or_file, const char *const *search_dirs,
                       enum config_trust trust, struct theme *out, char **err, char **warning);

/* Where themes are looked for: $XDG_CONFIG_HOME/shmwatch/themes (or
 * ~/.config/shmwatch/themes), the installed datadir, the source tree. */
struct theme_dirs {
    char user[4096];
    const char *dir[4]; /* NULL-terminated */
};
const char *const *theme_dirs_default(struct theme_dirs *d);

/* The colour and attributes to draw c with on a terminal of ncolors colours
 * (COLORS): 256-colour values when the terminal has them; bright colours
 * become basic ones plus bold on 8-colour terminals. */
void theme_pick(const struct theme_color *c, int ncolors, short *fg, short *bg, unsigned *attrs);

/* Nearest of the 16 basic colours to xterm colour c (0-255). */
short theme_color16(int c);

#endif
