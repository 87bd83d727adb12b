/* The settings, declared once each: type, range, default and help text. */
#include "config/config_priv.h"

#include <stddef.h>
#include <string.h>

#include "config/theme.h"

const char *const config_view_names[] = {"tree", "flat", "processes", NULL};
const char *const config_sort_names[] = {"size", "age", "state", "pid", "name", NULL};
const char *const config_column_names[] = {"name",    "state", "kind", "size",  "alloc",
                                           "holders", "age",   "pid",  "group", NULL};

_Static_assert(sizeof(enum config_view) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(enum config_sort) == sizeof(int), "enums are stored as int");

static const char *check_theme(const char *v)
{
    return theme_name_valid(v) || theme_is_path(v)
               ? NULL
               : "is neither a theme name (letters, digits, '-', '_', '.') nor a .yaml file";
}

static const char *check_absolute(const char *v)
{
    return v[0] == '/' ? NULL : "is not an absolute path";
}

#define OFF(field) offsetof(struct config, field)

/* Every key, once: the file, config_set() and the commented example follow it. */
const struct config_option config_options[CONFIG_NOPTIONS] = {
    {"gauge_interval", CONFIG_DURATION, OFF(gauge_interval_s), .min = 0.05, .max = 60,
     .def_num = 0.5, .help = "how often the fill gauges refresh (statvfs only, cheap)"},
    {"scan_interval", CONFIG_DURATION, OFF(scan_interval_s), .min = 0.1, .max = 3600, .def_num = 2,
     .help = "how often holders are rescanned from /proc (the costly part)"},
    {"warn_pct", CONFIG_INT, OFF(warn_pct), .min = 1, .max = 100, .def_num = 80,
     .help = "fill percent at which a gauge turns to the warning colour"},
    {"crit_pct", CONFIG_INT, OFF(crit_pct), .min = 1, .max = 100, .def_num = 95,
     .help = "fill percent at which a gauge turns critical (above warn_pct)"},
    {"theme", CONFIG_STRING, OFF(theme), .check = check_theme, .def_str = "default",
     .help = "colour theme: a name from the theme directories, or a .yaml file"},
    {"view", CONFIG_ENUM, OFF(view), .choices = config_view_names, .def_num = CONFIG_VIEW_TREE,
     .help = "view shown at start"},
    {"sort", CONFIG_ENUM, OFF(sort), .choices = config_sort_names, .def_num = CONFIG_SORT_SIZE,
     .help = "sort key of the segment list"},
    {"sort_reverse", CONFIG_BOOL, OFF(sort_reverse), .def_num = 0,
     .help = "reverse the sort order"},
    {"mounts", CONFIG_STRING_LIST, OFF(mounts), .min = 0, .max = 64, .check = check_absolute,
     .def_str = "", .help = "tmpfs mounts to watch; empty: every tmpfs at /dev/shm and /run/shm"},
    {"columns", CONFIG_COLUMN_LIST, OFF(columns), .min = 1, .max = CONFIG_NCOLUMNS,
     .choices = config_column_names, .def_str = "name,state,kind,size,alloc,holders,age",
     .help = "columns of the segment list, in order"},
    {"min_age", CONFIG_DURATION, OFF(min_age_s), .min = 0, .max = 365 * 86400.0, .def_num = 600,
     .help = "unheld segments younger than this are never offered for cleanup"},
    {"orphan_min_age", CONFIG_DURATION, OFF(orphan_min_age_s), .min = 0, .max = 365 * 86400.0,
     .def_num = 60,
     .help = "a segment younger than this is never an orphan, whatever its creator: it may be a "
             "batch on its way between processes"},
    {"trust_pids", CONFIG_BOOL, OFF(trust_pids), .def_num = 0,
     .help = "inside a container, take the pids in segment names as this pid namespace's even "
             "when shmwatch cannot show that /dev/shm is private to it"},
    {"read_only", CONFIG_BOOL, OFF(read_only), .def_num = 0,
     .help = "refuse the unlink and signal keys"},
    {"log_file", CONFIG_STRING, OFF(log_file), .nullable = true,
     .help = "file to append every unlink and signal to; null: $XDG_STATE_HOME/shmwatch/actions.log"},
    {"ascii", CONFIG_BOOL, OFF(ascii), .def_num = 0,
     .help = "draw with ASCII only, no UTF-8 lines and blocks"},
    {"color", CONFIG_BOOL, OFF(color), .def_num = 1,
     .help = "use colours; false (or NO_COLOR set) draws with attributes only"},
    {"record_max_size", CONFIG_SIZE, OFF(record_max_size), .min = 1 << 20,
     .def_num = 256.0 * 1024 * 1024,
     .help = "a recording (shmwatch record, --record) drops its oldest files while it is larger"},
    {"record_max_age", CONFIG_DURATION, OFF(record_max_age_s), .min = 60,
     .max = 3650 * 86400.0, .def_num = 7 * 86400.0,
     .help = "a recording (shmwatch record, --record) drops its files older than this"},
};
const size_t config_noptions = CONFIG_NOPTIONS;

const struct config_option *config_option_find(const char *name)
{
    for (size_t i = 0; name && i < CONFIG_NOPTIONS; i++)
        if (strcmp(config_options[i].name, name) == 0)
            return &config_options[i];
    return NULL;
}
