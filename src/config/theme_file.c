/* Theme files: YAML with a name and a colour (fg, bg, fg256, bg256, attrs)
 * for each role, found by name in search directories or given as a path. */
#include "config/theme.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config/yamlfile.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"

static const char *const colour_names[] = {
    "black",        "red",           "green",       "yellow",         "blue",
    "magenta",      "cyan",          "white",       "bright_black",   "bright_red",
    "bright_green", "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan",
    "bright_white",
};

static const struct {
    const char *name;
    unsigned bit;
} attr_names[] = {
    {"bold", THEME_ATTR_BOLD},
    {"dim", THEME_ATTR_DIM},
    {"reverse", THEME_ATTR_REVERSE},
    {"underline", THEME_ATTR_UNDERLINE},
};

/* s quoted for a message, in q; a quote too long for q is cut on a
 * character boundary (never inside a UTF-8 sequence) and ends in "...". */
static const char *quote(char *q, size_t n, const char *s)
{
    struct buf b;
    buf_init(&b);
    yamlfile_quote(&b, s);
    if (b.len < n)
        snprintf(q, n, "%s", b.data);
    else
        snprintf(q, n, "%.*s...", (int)utf8_cut(b.data, n - 4), b.data);
    buf_free(&b);
    return q;
}

/* A message at node: "<where>.<key>: <fmt...>" (key may be NULL). */
__attribute__((format(printf, 6, 7))) static int fail(struct yamlfile *f, const yaml_node_t *node,
                                                      char **err, const char *where,
                                                      const char *key, const char *fmt, ...)
{
    struct buf b;
    buf_init(&b);
    buf_printf(&b, "%s%s%s: ", where, key ? "." : "", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    *err = yamlfile_error(f, node, "%s", b.data);
    buf_free(&b);
    return -EINVAL;
}

/* fg or bg: a name, "default", or 0-255 (which also sets the 256 value). */
static int parse_colour(struct yamlfile *f, yaml_node_t *v, const char *role, const char *key,
                        short *out, short *out256, char **err)
{
    const char *s = yamlfile_scalar(v);
    char q[128];
    if (!s || yamlfile_is_null(v))
        return fail(f, v, err, role, key, "expected a colour name or 0-255, got %s",
                    yamlfile_kind(v));
    long long n;
    if (parse_int(s, LLONG_MIN, LLONG_MAX, &n)) {
        if (n < 0 || n > 255)
            return fail(f, v, err, role, key, "colour %lld is out of range (0 to 255)", n);
        *out = theme_color16((int)n);
        if (n >= 16)
            *out256 = (short)n;
        return 0;
    }
    if (strcasecmp(s, "default") == 0) {
        *out = THEME_COLOR_DEFAULT;
        return 0;
    }
    for (size_t i = 0; i < sizeof(colour_names) / sizeof(colour_names[0]); i++) {
        if (strcasecmp(s, colour_names[i]) == 0) {
            *out = (short)i;
            return 0;
        }
    }
    return fail(f, v, err, role, key,
                "unknown colour %s (expected default, black, red, green, yellow, blue, magenta,"
                " cyan, white, bright_<colour> or 0-255)",
                quote(q, sizeof(q), s));
}

static int parse_256(struct yamlfile *f, yaml_node_t *v, const char *role, const char *key,
                     short *out, char **err)
{
    const char *s = yamlfile_scalar(v);
    char q[128];
    long long n;
    if (!s || yamlfile_is_null(v))
        return fail(f, v, err, role, key, "expected a colour number 0 to 255, got %s",
                    yamlfile_kind(v));
    if (!parse_int(s, 0, 255, &n))
        return fail(f, v, err, role, key, "expected a colour number 0 to 255, got %s",
                    quote(q, sizeof(q), s));
    *out = (short)n;
    return 0;
}

static int parse_attr(struct yamlfile *f, yaml_node_t *v, const char *role, unsigned *attrs,
                      char **err)
{
    const char *s = yamlfile_scalar(v);
    char q[128];
    if (!s || yamlfile_is_null(v))
        return fail(f, v, err, role, "attrs", "expected an attribute name, got %s",
                    yamlfile_kind(v));
    for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
        if (strcasecmp(s, attr_names[i].name) == 0) {
            *attrs |= attr_names[i].bit;
            return 0;
        }
    }
    return fail(f, v, err, role, "attrs",
                "unknown attribute %s (expected bold, dim, reverse or underline)",
                quote(q, sizeof(q), s));
}

/* One role's value: {fg, bg, fg256, bg256, attrs}, or null for plain text. */
static int parse_role(struct yamlfile *f, yaml_node_t *v, const char *role, struct theme_color *c,
                      char **err)
{
    *c = (struct theme_color){THEME_COLOR_DEFAULT, THEME_COLOR_DEFAULT, -1, -1, 0};
    if (yamlfile_is_null(v))
        return 0;
    int rc = yamlfile_check_mapping(f, v, role, err);
    if (rc)
        return rc;
    short fg256 = -1, bg256 = -1; /* -1 until the key is given */
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yamlfile_node(f, p->key), *vn = yamlfile_node(f, p->value);
        const char *k = yamlfile_scalar(kn);
        if (strcmp(k, "fg") == 0) {
            rc = parse_colour(f, vn, role, k, &c->fg, &c->fg256, err);
        } else if (strcmp(k, "bg") == 0) {
            rc = parse_colour(f, vn, role, k, &c->bg, &c->bg256, err);
        } else if (strcmp(k, "fg256") == 0) {
            rc = parse_256(f, vn, role, k, &fg256, err);
        } else if (strcmp(k, "bg256") == 0) {
            rc = parse_256(f, vn, role, k, &bg256, err);
        } else if (strcmp(k, "attrs") == 0 && vn->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = vn->data.sequence.items.start;
                 rc == 0 && it < vn->data.sequence.items.top; it++)
                rc = parse_attr(f, yamlfile_node(f, *it), role, &c->attrs, err);
        } else if (strcmp(k, "attrs") == 0) {
            rc = yamlfile_is_null(vn) ? 0 : parse_attr(f, vn, role, &c->attrs, err);
        } else {
            char q[128];
            rc = fail(f, kn, err, role, NULL,
                      "unknown key %s (expected fg, bg, fg256, bg256 or attrs)",
                      quote(q, sizeof(q), k));
        }
        if (rc)
            return rc;
    }
    /* An explicit fg256/bg256 wins over a number given as fg/bg. */
    if (fg256 >= 0)
        c->fg256 = fg256;
    if (bg256 >= 0)
        c->bg256 = bg256;
    return 0;
}

static int parse_colors(struct yamlfile *f, yaml_node_t *colors, struct theme *t, char **err)
{
    if (yamlfile_is_null(colors))
        return 0;
    int rc = yamlfile_check_mapping(f, colors, "colors", err);
    if (rc)
        return rc;
    bool set[THEME_NROLES] = {false};
    for (yaml_node_pair_t *p = colors->data.mapping.pairs.start; p < colors->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = yamlfile_node(f, p->key);
        const char *k = yamlfile_scalar(kn);
        int role = -1;
        for (int i = 0; i < THEME_NROLES && role < 0; i++)
            if (strcmp(k, theme_role_names[i]) == 0)
                role = i;
        char q[128];
        if (role < 0)
            return fail(f, kn, err, "colors", NULL, "unknown colour role %s",
                        quote(q, sizeof(q), k));
        rc = parse_role(f, yamlfile_node(f, p->value), k, &t->role[role], err);
        if (rc)
            return rc;
        set[role] = true;
    }
    for (int i = 0; i < THEME_NROLES; i++)
        if (!set[i])
            t->role[i] = t->role[THEME_normal];
    return 0;
}

static int parse_theme(struct yamlfile *f, struct theme *t, char **err)
{
    yaml_node_t *root = yaml_document_get_root_node(&f->doc);
    if (!root || yamlfile_is_null(root))
        return 0;
    int rc = yamlfile_check_mapping(f, root, "theme", err);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         rc == 0 && p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yamlfile_node(f, p->key), *vn = yamlfile_node(f, p->value);
        const char *k = yamlfile_scalar(kn), *v = yamlfile_scalar(vn);
        if (strcmp(k, "colors") == 0) {
            rc = parse_colors(f, vn, t, err);
        } else if (strcmp(k, "name") == 0 || strcmp(k, "description") == 0) {
            if (!v || yamlfile_is_null(vn))
                rc = fail(f, vn, err, k, NULL, "expected a string, got %s", yamlfile_kind(vn));
            else if (k[0] == 'n')
                snprintf(t->name, sizeof(t->name), "%s", v);
        } else {
            char q[128];
            rc = fail(f, kn, err, "theme", NULL,
                      "unknown key %s (expected name, description or colors)",
                      quote(q, sizeof(q), k));
        }
    }
    return rc;
}

static int load_file(const char *path, enum config_trust trust, struct theme *out, char **err,
                     char **warning)
{
    struct yamlfile f;
    int rc = yamlfile_load_trusted(&f, path, trust, err, warning);
    if (rc)
        return rc;
    struct theme t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < THEME_NROLES; i++)
        t.role[i] = (struct theme_color){THEME_COLOR_DEFAULT, THEME_COLOR_DEFAULT, -1, -1, 0};
    /* Without a name: the file's base name. */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".yaml") == 0)
        len -= 5;
    snprintf(t.name, sizeof(t.name), "%.*s", (int)len, base);
    rc = parse_theme(&f, &t, err);
    yaml_document_delete(&f.doc);
    if (rc == 0)
        *out = t;
    return rc;
}

int theme_load_trusted(const char *name_or_file, const char *const *search_dirs,
                       enum config_trust trust, struct theme *out, char **err, char **warning)
{
    const char *s = name_or_file;
    struct buf b;
    buf_init(&b);
    if (warning)
        *warning = NULL;
    if (theme_is_path(s))
        return load_file(s, trust, out, err, warning);
    /* A name: the file found by search was not named by the user. */
    if (trust == CONFIG_TRUST_WARN)
        trust = CONFIG_TRUST_REQUIRE;
    if (!theme_name_valid(s)) {
        buf_adds(&b, "invalid theme name ");
        yamlfile_quote(&b, s);
        buf_adds(&b, " (letters, digits, '-', '_', '.'; or a path to a .yaml file)");
        *err = buf_steal(&b);
        return -EINVAL;
    }
    for (size_t i = 0; search_dirs && search_dirs[i]; i++) {
        buf_reset(&b);
        buf_printf(&b, "%s/%s.yaml", search_dirs[i], s);
        if (access(b.data, F_OK) == 0) {
            int rc = load_file(b.data, trust, out, err, warning);
            buf_free(&b);
            return rc;
        }
    }
    const struct theme *builtin = strcmp(s, "default") == 0 ? &theme_builtin_default
                                  : strcmp(s, "mono") == 0  ? &theme_builtin_mono
                                                            : NULL;
    if (builtin) {
        *out = *builtin;
        buf_free(&b);
        return 0;
    }
    buf_reset(&b);
    buf_adds(&b, "theme ");
    yamlfile_quote(&b, s);
    buf_adds(&b, " not found in ");
    for (size_t i = 0; search_dirs && search_dirs[i]; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", search_dirs[i]);
    if (!search_dirs || !search_dirs[0])
        buf_adds(&b, "any theme directory");
    *err = buf_steal(&b);
    return -ENOENT;
}
