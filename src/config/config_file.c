/* Settings from a YAML file, and where that file is. */
#include "config/config_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/yamlfile.h"
#include "util/escape.h"
#include "util/xalloc.h"

/* Sets one option from its YAML value; the error points at the value, or at
 * the list item at fault. */
static int set_node(struct yamlfile *f, const struct config_option *o, struct config *cfg,
                    yaml_node_t *v, char **err)
{
    struct buf msg;
    buf_init(&msg);
    yaml_node_t *at = v;
    int rc = -EINVAL;
    if (config_is_list(o) && v->type == YAML_SEQUENCE_NODE) {
        size_t n = 0, cap = 0, bad;
        const char **items = NULL;
        rc = 0;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            yaml_node_t *item = yamlfile_node(f, *it);
            if (!yamlfile_scalar(item) || yamlfile_is_null(item)) {
                buf_printf(&msg, "expected a string in the list, got %s", yamlfile_kind(item));
                at = item;
                rc = -EINVAL;
                break;
            }
            *VEC_PUSH(items, n, cap) = yamlfile_scalar(item);
        }
        if (rc == 0) {
            rc = config_set_items(o, cfg, items, n, &bad, &msg);
            if (rc && bad < n)
                at = yamlfile_node(f, v->data.sequence.items.start[bad]);
        }
        free(items);
    } else if (config_is_list(o) && yamlfile_is_null(v)) {
        size_t bad;
        rc = config_set_items(o, cfg, NULL, 0, &bad, &msg);
    } else if (config_is_list(o) || v->type != YAML_SCALAR_NODE) {
        buf_printf(&msg, "expected %s, got %s", config_expected(o), yamlfile_kind(v));
    } else {
        rc = config_set_value(o, cfg, yamlfile_scalar(v), yamlfile_is_null(v), &msg);
    }
    if (rc)
        *err = yamlfile_error(f, at, "%s: %s", o->name, msg.data);
    buf_free(&msg);
    return rc;
}

/* "file:line:column" of a node, the path escaped as in every error. */
static char *place(struct yamlfile *f, const yaml_node_t *node)
{
    char *path = esc_term_dup(f->path);
    char *s = str_printf("%s:%zu:%zu", path, node->start_mark.line + 1, node->start_mark.column + 1);
    free(path);
    return s;
}

static int apply_file(struct yamlfile *f, struct config *cfg, char **err)
{
    yaml_node_t *root = yaml_document_get_root_node(&f->doc);
    if (!root || yamlfile_is_null(root))
        return 0; /* an empty file: nothing changes */
    int rc = yamlfile_check_mapping(f, root, "settings", err);
    if (rc)
        return rc;
    yaml_node_t *where[CONFIG_NOPTIONS] = {NULL};
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = yamlfile_node(f, p->key);
        const struct config_option *o = config_option_find(yamlfile_scalar(key));
        if (!o) {
            *err = yamlfile_key_error(f, key, "unknown");
            return -EINVAL;
        }
        yaml_node_t *value = yamlfile_node(f, p->value);
        rc = set_node(f, o, cfg, value, err);
        if (rc)
            return rc;
        where[o - config_options] = value;
    }
    const yaml_node_t *theme = where[config_option_find("theme") - config_options];
    if (theme) {
        free(cfg->theme_where);
        cfg->theme_where = place(f, theme);
    }
    const yaml_node_t *mounts = where[config_option_find("mounts") - config_options];
    if (mounts && mounts->type == YAML_SEQUENCE_NODE && cfg->mounts.n) {
        cfg->mounts_where = xcalloc(cfg->mounts.n, sizeof(char *));
        for (size_t i = 0; i < cfg->mounts.n; i++)
            cfg->mounts_where[i] = place(f, yamlfile_node(f, mounts->data.sequence.items.start[i]));
    }
    char *msg;
    rc = config_check(cfg, &msg);
    if (rc) {
        const yaml_node_t *crit = where[config_option_find("crit_pct") - config_options];
        const yaml_node_t *warn = where[config_option_find("warn_pct") - config_options];
        *err = yamlfile_error(f, crit ? crit : warn, "%s", msg);
        free(msg);
    }
    return rc;
}

int config_load_trusted(const char *path, enum config_trust trust, struct config *cfg, char **err,
                        char **warning)
{
    struct yamlfile f;
    int rc = yamlfile_load_trusted(&f, path, trust, err, warning);
    if (rc)
        return rc;
    struct config tmp;
    config_copy(&tmp, cfg);
    rc = apply_file(&f, &tmp, err);
    yaml_document_delete(&f.doc);
    config_free(rc ? &tmp : cfg); /* the copy on failure, else what it replaces */
    if (rc == 0)
        *cfg = tmp;
    return rc;
}

static const char *try_path(char *buf, size_t n, const char *dir, const char *rest)
{
    int len = snprintf(buf, n, "%s%s", dir, rest);
    if (len < 0 || (size_t)len >= n)
        return NULL;
    return access(buf, F_OK) == 0 ? buf : NULL;
}

const char *config_find_path(const char *explicit_path, const char *xdg_config_home,
                             const char *home, const char *sysconfdir, char *buf, size_t n)
{
    if (explicit_path && *explicit_path)
        return explicit_path;
    const char *found = NULL;
    /* XDG: a relative XDG_CONFIG_HOME is invalid and ignored. */
    if (xdg_config_home && xdg_config_home[0] == '/')
        found = try_path(buf, n, xdg_config_home, "/shmwatch/config.yaml");
    else if (home && *home)
        found = try_path(buf, n, home, "/.config/shmwatch/config.yaml");
    if (!found && sysconfdir && *sysconfdir)
        found = try_path(buf, n, sysconfdir, "/shmwatch/config.yaml");
    return found;
}

const char *config_default_path(char *buf, size_t n)
{
    return config_find_path(NULL, getenv("XDG_CONFIG_HOME"), getenv("HOME"), "/etc", buf, n);
}
