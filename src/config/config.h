/* Settings from a YAML file (config/shmwatch.yaml documents every key).
 * Each key is declared once in config_options[] with its type, range,
 * default and help text; one validator serves the file and the command line. */
#ifndef SHMWATCH_CONFIG_H
#define SHMWATCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/trust.h"

enum config_view { CONFIG_VIEW_TREE, CONFIG_VIEW_FLAT, CONFIG_VIEW_PROCESSES, CONFIG_NVIEWS };

enum config_sort {
    CONFIG_SORT_SIZE,
    CONFIG_SORT_AGE,
    CONFIG_SORT_STATE,
    CONFIG_SORT_PID,
    CONFIG_SORT_NAME,
    CONFIG_NSORTS
};

enum config_column {
    CONFIG_COL_NAME,
    CONFIG_COL_STATE,
    CONFIG_COL_KIND,
    CONFIG_COL_SIZE,
    CONFIG_COL_ALLOC,
    CONFIG_COL_HOLDERS,
    CONFIG_COL_AGE,
    CONFIG_COL_PID,
    CONFIG_COL_GROUP,
    CONFIG_NCOLUMNS
};

/* Names as written in the file, indexed by the enums above. */
extern const char *const config_view_names[CONFIG_NVIEWS + 1];
extern const char *const config_sort_names[CONFIG_NSORTS + 1];
extern const char *const config_column_names[CONFIG_NCOLUMNS + 1];

struct config_strings {
    char **item;
    size_t n;
};

struct config_columns {
    enum config_column col[CONFIG_NCOLUMNS]; /* each at most once */
    size_t n;
};

/* Plain fields: command-line flags override by assignment (strings are
 * malloc'd and owned: free before replacing) or through config_set(). */
struct config {
    double gauge_interval_s; /* key gauge_interval */
    double scan_interval_s;  /* key scan_interval */
    int warn_pct;
    int crit_pct; /* > warn_pct */
    char *theme;  /* name or path to a .yaml file */
    /* "file:line:column" of the theme value when the file set it, else NULL:
     * prefix for a theme_load_trusted() error. */
    char *theme_where;
    enum config_view view;
    enum config_sort sort;
    bool sort_reverse;
    struct config_strings mounts; /* empty: every tmpfs at /dev/shm and /run/shm */
    /* "file:line:column" of each item of mounts (mounts.n of them) when the
     * file set them, else NULL: prefix for an error about that mount. */
    char **mounts_where;
    struct config_columns columns;
    double min_age_s; /* key min_age */
    double orphan_min_age_s; /* key orphan_min_age: younger segments are never orphans */
    bool trust_pids;  /* key trust_pids: inside a pid namespace, take creator pids as its own */
    bool read_only;
    char *log_file; /* NULL: the default, $XDG_STATE_HOME/shmwatch/actions.log */
    bool ascii;
    bool color;
    /* The recording store's limits (shmwatch record, the dashboard's
     * --record): the oldest files dropped past them. */
    uint64_t record_max_size; /* key record_max_size */
    double record_max_age_s;  /* key record_max_age */
};

enum config_type {
    CONFIG_BOOL,
    CONFIG_INT,
    CONFIG_DURATION,    /* seconds as a double: 0.5, "500ms", "2s", "10m" */
    CONFIG_SIZE,        /* bytes as a uint64_t: "256m", "2g" (no upper bound) */
    CONFIG_STRING,      /* char *, malloc'd */
    CONFIG_ENUM,        /* an enum stored as int, one of choices */
    CONFIG_STRING_LIST, /* struct config_strings */
    CONFIG_COLUMN_LIST, /* struct config_columns, items from choices */
};

struct config_option {
    const char *name;
    enum config_type type;
    size_t offset;
    double min, max;            /* INT, DURATION: value range; SIZE: min; lists: item count */
    const char *const *choices; /* ENUM, COLUMN_LIST: NULL-terminated names */
    bool nullable;              /* STRING: null allowed (stored as NULL) */
    /* STRING and STRING_LIST items: returns what is wrong with v, or NULL. */
    const char *(*check)(const char *v);
    double def_num;      /* BOOL, INT, DURATION, SIZE, ENUM (index) */
    const char *def_str; /* STRING, and lists as comma-separated items */
    const char *help;
};

extern const struct config_option config_options[];
extern const size_t config_noptions;

const struct config_option *config_option_find(const char *name);

void config_defaults(struct config *cfg);
void config_free(struct config *cfg);
/* Deep copy into *dst (which is overwritten, not freed). */
void config_copy(struct config *dst, const struct config *src);
/* Drops mounts_where; call it before the mounts list changes. */
void config_forget_mounts_where(struct config *cfg);

/* Applies the file's settings on top of *cfg (start from config_defaults).
 * Returns 0; or -EINVAL for malformed YAML, an unknown key, a wrong type or
 * an out-of-range value, -errno when unreadable; then *err is a malloc'd
 * one-line "file:line:column: message" and *cfg is unchanged. The trust rule
 * of config/trust.h applies: run as root, a file not owned by root or
 * writable by group or others is refused (-EPERM, "file: refused: ...") with
 * CONFIG_TRUST_REQUIRE, read with *warning set (malloc'd; else NULL) with
 * CONFIG_TRUST_WARN (warning may be NULL unless trust is that). */
int config_load_trusted(const char *path, enum config_trust trust, struct config *cfg, char **err,
                        char **warning);

/* Sets one key from text, as a command-line flag would: the same checks as
 * the file (lists take comma-separated items). Returns 0 or -EINVAL with
 * *err = "message" (no position: the caller names the flag). */
int config_set(struct config *cfg, const char *key, const char *value, char **err);

/* Rules between keys (warn_pct below crit_pct), for after command-line
 * overrides: 0, or -EINVAL with a malloc'd *err. */
int config_check(const struct config *cfg, char **err);

/* Which file to read without --config: $XDG_CONFIG_HOME/shmwatch/config.yaml
 * (or ~/.config/... when XDG_CONFIG_HOME is unset or relative), else
 * /etc/shmwatch/config.yaml. Returns buf, or NULL when none exists. */
const char *config_default_path(char *buf, size_t n);

/* The same search with its inputs explicit (NULL or "" skips one):
 * explicit_path (--config) is returned as is, even if missing, so that
 * loading reports it; then xdg_config_home, home, sysconfdir in turn. */
const char *config_find_path(const char *explicit_path, const char *xdg_config_home,
                             const char *home, const char *sysconfdir, char *buf, size_t n);

#endif
