/* The one validator for settings, from the file or the command line, and
 * the life cycle of struct config. */
#include "config/config_priv.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/yamlfile.h"
#include "util/units.h"
#include "util/xalloc.h"

static int find_choice(const char *const *choices, const char *v)
{
    for (int i = 0; choices[i]; i++)
        if (strcasecmp(choices[i], v) == 0)
            return i;
    return -1;
}

static void add_choices(struct buf *msg, const char *const *choices, const char *got)
{
    buf_adds(msg, "expected one of ");
    for (int i = 0; choices[i]; i++)
        buf_printf(msg, "%s%s", i ? ", " : "", choices[i]);
    buf_adds(msg, "; got ");
    yamlfile_quote(msg, got);
}

/* "50ms", "1m", "365d": a range bound as a user would write it. */
static void add_duration(struct buf *msg, double s)
{
    long long whole = (long long)s;
    if (s > 0 && s < 1)
        buf_printf(msg, "%gms", s * 1000);
    else if (whole != s)
        buf_printf(msg, "%gs", s);
    else if (whole >= 86400 && whole % 86400 == 0)
        buf_printf(msg, "%lldd", whole / 86400);
    else if (whole >= 3600 && whole % 3600 == 0)
        buf_printf(msg, "%lldh", whole / 3600);
    else if (whole >= 60 && whole % 60 == 0)
        buf_printf(msg, "%lldm", whole / 60);
    else
        buf_printf(msg, "%llds", whole);
}

/* "1m", "256m", "2g": a range bound as a user would write it. */
static void add_size(struct buf *msg, double bytes)
{
    static const char units[] = "kmgt";
    unsigned long long b = (unsigned long long)bytes;
    int u = -1;
    while (u < 3 && b >= 1024 && b % 1024 == 0) {
        b /= 1024;
        u++;
    }
    if (u < 0)
        buf_printf(msg, "%llu", b);
    else
        buf_printf(msg, "%llu%c", b, units[u]);
}

/* "expected <what o takes>, got 'v'" */
static int bad_value(const struct config_option *o, const char *v, struct buf *msg)
{
    buf_printf(msg, "expected %s, got ", config_expected(o));
    yamlfile_quote(msg, v);
    return -EINVAL;
}

/* A duration or size that did not parse: when only its form is at fault (a
 * unit or number written otherwise than plainly), what a plain one looks
 * like; else bad_value. */
static int bad_form(const struct config_option *o, const char *v, const char *plain,
                    struct buf *msg)
{
    if (!units_not_plain(v))
        return bad_value(o, v, msg);
    yamlfile_quote(msg, v);
    buf_printf(msg, " is not a plain decimal %s", plain);
    return -EINVAL;
}

static void free_strings(struct config_strings *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->item[i]);
    free(l->item);
    l->item = NULL;
    l->n = 0;
}

int config_set_value(const struct config_option *o, struct config *cfg, const char *v, bool null,
                     struct buf *msg)
{
    if (null && !(o->type == CONFIG_STRING && o->nullable)) {
        buf_printf(msg, "expected %s, got null", config_expected(o));
        return -EINVAL;
    }
    switch (o->type) {
    case CONFIG_BOOL: {
        static const char *const yes[] = {"true", "yes", "on", NULL};
        static const char *const no[] = {"false", "no", "off", NULL};
        if (find_choice(yes, v) >= 0)
            *CONFIG_FIELD(cfg, o, bool) = true;
        else if (find_choice(no, v) >= 0)
            *CONFIG_FIELD(cfg, o, bool) = false;
        else
            return bad_value(o, v, msg);
        return 0;
    }
    case CONFIG_INT: {
        long long n;
        if (!parse_int(v, LLONG_MIN, LLONG_MAX, &n))
            return bad_value(o, v, msg);
        if (n < o->min || n > o->max) {
            buf_printf(msg, "%lld is out of range (%g to %g)", n, o->min, o->max);
            return -EINVAL;
        }
        *CONFIG_FIELD(cfg, o, int) = (int)n;
        return 0;
    }
    case CONFIG_DURATION: {
        double s;
        if (!parse_duration(v, &s))
            return bad_form(o, v, "duration (such as 500ms, 2s or 10m)", msg);
        if (s < o->min || s > o->max) {
            buf_printf(msg, "%s is out of range (", v);
            add_duration(msg, o->min);
            buf_adds(msg, " to ");
            add_duration(msg, o->max);
            buf_adds(msg, ")");
            return -EINVAL;
        }
        *CONFIG_FIELD(cfg, o, double) = s;
        return 0;
    }
    case CONFIG_SIZE: {
        uint64_t b;
        if (!parse_size(v, &b))
            return bad_form(o, v, "size (such as 256m or 2g)", msg);
        if ((double)b < o->min) {
            buf_printf(msg, "%s is out of range (at least ", v);
            add_size(msg, o->min);
            buf_adds(msg, ")");
            return -EINVAL;
        }
        *CONFIG_FIELD(cfg, o, uint64_t) = b;
        return 0;
    }
    case CONFIG_ENUM: {
        int i = find_choice(o->choices, v);
        if (i < 0) {
            add_choices(msg, o->choices, v);
            return -EINVAL;
        }
        *CONFIG_FIELD(cfg, o, int) = i;
        return 0;
    }
    case CONFIG_STRING: {
        char **field = CONFIG_FIELD(cfg, o, char *);
        if (null) {
            free(*field);
            *field = NULL;
            return 0;
        }
        if (!*v) {
            buf_adds(msg, "expected a non-empty string");
            return -EINVAL;
        }
        const char *problem = o->check ? o->check(v) : NULL;
        if (problem) {
            yamlfile_quote(msg, v);
            buf_printf(msg, " %s", problem);
            return -EINVAL;
        }
        free(*field);
        *field = xstrdup(v);
        return 0;
    }
    default:
        buf_adds(msg, "expected a list");
        return -EINVAL;
    }
}

int config_set_items(const struct config_option *o, struct config *cfg, const char *const *items,
                     size_t n, size_t *bad, struct buf *msg)
{
    if (o->offset == offsetof(struct config, mounts))
        config_forget_mounts_where(cfg); /* before the list it counts changes */
    struct config_columns cols = {.n = 0};
    for (size_t i = 0; i < n; i++) {
        *bad = i;
        const char *problem = NULL;
        if (o->type == CONFIG_COLUMN_LIST) {
            int c = find_choice(o->choices, items[i]);
            if (c < 0) {
                add_choices(msg, o->choices, items[i]);
                return -EINVAL;
            }
            for (size_t j = 0; j < cols.n; j++)
                if (cols.col[j] == (enum config_column)c)
                    problem = "is listed twice";
            if (!problem)
                cols.col[cols.n++] = (enum config_column)c;
        } else {
            if (!*items[i]) {
                buf_adds(msg, "expected a non-empty string in the list");
                return -EINVAL;
            }
            problem = o->check ? o->check(items[i]) : NULL;
        }
        if (problem) {
            yamlfile_quote(msg, items[i]);
            buf_printf(msg, " %s", problem);
            return -EINVAL;
        }
    }
    *bad = n;
    if (n < o->min || n > o->max) {
        double limit = n < o->min ? o->min : o->max;
        buf_printf(msg, "expected at %s %g item%s", n < o->min ? "least" : "most", limit,
                   limit == 1 ? "" : "s");
        return -EINVAL;
    }
    if (o->type == CONFIG_COLUMN_LIST) {
        *CONFIG_FIELD(cfg, o, struct config_columns) = cols;
        return 0;
    }
    struct config_strings *l = CONFIG_FIELD(cfg, o, struct config_strings);
    free_strings(l);
    l->item = n ? xcalloc(n, sizeof(*l->item)) : NULL;
    for (l->n = 0; l->n < n; l->n++)
        l->item[l->n] = xstrdup(items[l->n]);
    return 0;
}

const char *config_expected(const struct config_option *o)
{
    switch (o->type) {
    case CONFIG_BOOL:
        return "true or false";
    case CONFIG_INT:
        return "a whole number";
    case CONFIG_DURATION:
        return "a duration such as 500ms, 2s or 10m";
    case CONFIG_SIZE:
        return "a size such as 256m or 2g";
    case CONFIG_STRING:
        return "a string";
    case CONFIG_ENUM:
        return "a single name";
    default:
        return "a list";
    }
}

bool config_is_list(const struct config_option *o)
{
    return o->type == CONFIG_STRING_LIST || o->type == CONFIG_COLUMN_LIST;
}

/* Splits "a, b,c" and sets the list; "" is the empty list. */
static int set_list_text(const struct config_option *o, struct config *cfg, const char *text,
                         struct buf *msg)
{
    char *copy = xstrdup(text);
    const char **items = NULL;
    size_t n = 0, cap = 0, bad;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        t += strspn(t, " \t");
        size_t len = strlen(t);
        while (len && (t[len - 1] == ' ' || t[len - 1] == '\t'))
            t[--len] = '\0';
        *VEC_PUSH(items, n, cap) = t;
    }
    int rc = config_set_items(o, cfg, items, n, &bad, msg);
    free(items);
    free(copy);
    return rc;
}

void config_defaults(struct config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    struct buf msg;
    buf_init(&msg);
    for (size_t i = 0; i < CONFIG_NOPTIONS; i++) {
        const struct config_option *o = &config_options[i];
        switch (o->type) {
        case CONFIG_BOOL:
            *CONFIG_FIELD(cfg, o, bool) = o->def_num != 0;
            break;
        case CONFIG_INT:
        case CONFIG_ENUM:
            *CONFIG_FIELD(cfg, o, int) = (int)o->def_num;
            break;
        case CONFIG_DURATION:
            *CONFIG_FIELD(cfg, o, double) = o->def_num;
            break;
        case CONFIG_SIZE:
            *CONFIG_FIELD(cfg, o, uint64_t) = (uint64_t)o->def_num;
            break;
        case CONFIG_STRING:
            *CONFIG_FIELD(cfg, o, char *) = o->def_str ? xstrdup(o->def_str) : NULL;
            break;
        case CONFIG_STRING_LIST:
        case CONFIG_COLUMN_LIST:
            set_list_text(o, cfg, o->def_str, &msg); /* the table's own defaults are valid */
            break;
        }
    }
    buf_free(&msg);
}

void config_free(struct config *cfg)
{
    config_forget_mounts_where(cfg); /* while mounts.n counts it */
    for (size_t i = 0; i < CONFIG_NOPTIONS; i++) {
        const struct config_option *o = &config_options[i];
        if (o->type == CONFIG_STRING)
            free(*CONFIG_FIELD(cfg, o, char *));
        else if (o->type == CONFIG_STRING_LIST)
            free_strings(CONFIG_FIELD(cfg, o, struct config_strings));
    }
    free(cfg->theme_where);
    memset(cfg, 0, sizeof(*cfg));
}

void config_forget_mounts_where(struct config *cfg)
{
    if (cfg->mounts_where)
        for (size_t i = 0; i < cfg->mounts.n; i++)
            free(cfg->mounts_where[i]);
    free(cfg->mounts_where);
    cfg->mounts_where = NULL;
}

void config_copy(struct config *dst, const struct config *src)
{
    *dst = *src;
    for (size_t i = 0; i < CONFIG_NOPTIONS; i++) {
        const struct config_option *o = &config_options[i];
        if (o->type == CONFIG_STRING) {
            char **s = CONFIG_FIELD(dst, o, char *);
            *s = *s ? xstrdup(*s) : NULL;
        } else if (o->type == CONFIG_STRING_LIST) {
            struct config_strings *l = CONFIG_FIELD(dst, o, struct config_strings);
            char **items = l->item;
            l->item = l->n ? xcalloc(l->n, sizeof(*l->item)) : NULL;
            for (size_t j = 0; j < l->n; j++)
                l->item[j] = xstrdup(items[j]);
        }
    }
    dst->theme_where = src->theme_where ? xstrdup(src->theme_where) : NULL;
    if (src->mounts_where) {
        dst->mounts_where = xcalloc(src->mounts.n, sizeof(char *));
        for (size_t i = 0; i < src->mounts.n; i++)
            dst->mounts_where[i] = src->mounts_where[i] ? xstrdup(src->mounts_where[i]) : NULL;
    }
}

int config_set(struct config *cfg, const char *key, const char *value, char **err)
{
    const struct config_option *o = config_option_find(key);
    struct buf msg;
    buf_init(&msg);
    int rc;
    if (!o) {
        buf_adds(&msg, "unknown setting ");
        yamlfile_quote(&msg, key);
        rc = -EINVAL;
    } else if (config_is_list(o)) {
        rc = set_list_text(o, cfg, value ? value : "", &msg);
    } else {
        rc = config_set_value(o, cfg, value ? value : "", value == NULL, &msg);
        if (rc == 0 && o->offset == offsetof(struct config, theme)) {
            free(cfg->theme_where);
            cfg->theme_where = NULL;
        }
    }
    if (rc)
        *err = buf_steal(&msg);
    buf_free(&msg);
    return rc;
}

int config_check(const struct config *cfg, char **err)
{
    if (cfg->warn_pct < cfg->crit_pct)
        return 0;
    *err = str_printf("warn_pct (%d) must be below crit_pct (%d)", cfg->warn_pct, cfg->crit_pct);
    return -EINVAL;
}
