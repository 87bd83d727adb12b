/* Config loading: every example and fixture file, each kind of error with its
 * exact file:line:column, command-line overrides, and where the file is found. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "config/config.h"
#include "config/theme.h"
#include "store/store.h"

static void assert_is_default(const struct config *c)
{
    assert_true(c->gauge_interval_s == 0.5);
    assert_true(c->scan_interval_s == 2.0);
    assert_int_equal(c->warn_pct, 80);
    assert_int_equal(c->crit_pct, 95);
    assert_string_equal(c->theme, "default");
    assert_null(c->theme_where);
    assert_int_equal(c->view, CONFIG_VIEW_TREE);
    assert_int_equal(c->sort, CONFIG_SORT_SIZE);
    assert_false(c->sort_reverse);
    assert_int_equal(c->mounts.n, 0);
    assert_int_equal(c->columns.n, 7);
    assert_int_equal(c->columns.col[0], CONFIG_COL_NAME);
    assert_int_equal(c->columns.col[6], CONFIG_COL_AGE);
    assert_true(c->min_age_s == 600.0);
    assert_false(c->read_only);
    assert_null(c->log_file);
    assert_false(c->ascii);
    assert_true(c->color);
    /* The recorder's, as the store's own defaults. */
    assert_true(c->record_max_size == STORE_MAX_SIZE_DEFAULT);
    assert_true(c->record_max_age_s == STORE_MAX_AGE_DEFAULT);
}

static void test_defaults(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    assert_is_default(&c);
    /* Every default is inside its own range. */
    for (size_t i = 0; i < config_noptions; i++) {
        const struct config_option *o = &config_options[i];
        assert_ptr_equal(config_option_find(o->name), o);
        if (o->type == CONFIG_INT || o->type == CONFIG_DURATION || o->type == CONFIG_SIZE) {
            assert_true(o->def_num >= o->min);
            assert_true(o->def_num <= o->max || (o->type == CONFIG_SIZE && o->max == 0));
        }
        assert_non_null(o->help);
    }
    assert_null(config_option_find("no_such_key"));
    config_free(&c);
}

/* Each kind of error, with where it must point (after "<path>:"). */
static const struct {
    const char *file, *error;
} bad_configs[] = {
    {"malformed.yaml",
     "3:9: did not find expected ',' or ']' (while parsing a flow sequence at 2:16)"},
    {"invalid_utf8.yaml", "2:12: invalid leading UTF-8 octet"},
    {"two_documents.yaml", "2:1: expected one YAML document, found a second one"},
    {"not_mapping.yaml", "1:1: settings: expected a mapping of keys to values, got a list"},
    {"unknown_key.yaml", "3:1: unknown key 'scan_intervall'"},
    {"duplicate_key.yaml", "3:1: duplicate key 'warn_pct'"},
    {"type_list.yaml", "1:11: warn_pct: expected a whole number, got a list"},
    {"type_bool.yaml", "1:12: read_only: expected true or false, got 'maybe'"},
    {"type_int.yaml", "1:11: warn_pct: expected a whole number, got '80.5'"},
    {"type_mounts.yaml", "1:9: mounts: expected a list, got a string"},
    {"type_item.yaml", "3:5: columns: expected a string in the list, got a mapping"},
    {"type_map.yaml", "1:11: log_file: expected a string, got a mapping"},
    {"null_value.yaml", "1:10: warn_pct: expected a whole number, got null"},
    {"empty_string.yaml", "1:8: theme: expected a non-empty string"},
    {"range_int.yaml", "2:11: crit_pct: 150 is out of range (1 to 100)"},
    {"range_duration.yaml", "1:19: gauge_interval: 10ms is out of range (50ms to 1m)"},
    {"bad_duration.yaml",
     "1:16: scan_interval: expected a duration such as 500ms, 2s or 10m, got 'fast'"},
    {"bad_enum.yaml", "1:7: view: expected one of tree, flat, processes; got 'forest'"},
    {"bad_size.yaml", "1:18: record_max_size: expected a size such as 256m or 2g, got '1 GB'"},
    {"plain_size.yaml", "1:18: record_max_size: '0x100000' is not a plain decimal size (such as "
                        "256m or 2g)"},
    {"range_size.yaml", "1:18: record_max_size: 512k is out of range (at least 1m)"},
    {"range_age.yaml", "1:17: record_max_age: 4000d is out of range (1m to 3650d)"},
    {"bad_column.yaml", "1:17: columns: expected one of name, state, kind, size, alloc, holders, "
                        "age, pid, group; got 'sizes'"},
    {"dup_column.yaml", "4:5: columns: 'size' is listed twice"},
    {"no_columns.yaml", "1:10: columns: expected at least 1 item"},
    {"thresholds.yaml", "2:11: warn_pct (90) must be below crit_pct (85)"},
    {"theme_name.yaml", "1:8: theme: 'my theme!' is neither a theme name (letters, digits, '-', "
                        "'_', '.') nor a .yaml file"},
    {"relative_mount.yaml", "1:20: mounts: 'run/shm' is not an absolute path"},
    /* 100 levels: refused at the 65th (the mapping, then 64 lists): libyaml
     * would parse a megabyte of them for half an hour. */
    {"deep.yaml", "2:73: nested more than 64 levels deep"},
    {"nul_string.yaml", "2:11: a NUL character (\\0) in a string"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_configs) / sizeof(bad_configs[0]); i++) {
        char path[4096], want[8192], rel[256];
        snprintf(rel, sizeof(rel), "bad/%s", bad_configs[i].file);
        fixture(path, sizeof(path), rel);
        struct config c;
        config_defaults(&c);
        char *err = NULL;
        assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), -EINVAL);
        snprintf(want, sizeof(want), "%s:%s", path, bad_configs[i].error);
        assert_non_null(err);
        assert_string_equal(err, want);
        free(err);
        assert_is_default(&c); /* untouched on error, even by the keys before it */
        config_free(&c);
    }
}

/* A new bad fixture needs its expected message above. */
static void test_bad_files_all_listed(void **state)
{
    (void)state;
    char pattern[4096];
    glob_t g;
    assert_int_equal(glob(fixture(pattern, sizeof(pattern), "bad/*.yaml"), 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, sizeof(bad_configs) / sizeof(bad_configs[0]));
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *base = strrchr(g.gl_pathv[i], '/') + 1;
        size_t j = 0;
        while (j < g.gl_pathc && strcmp(bad_configs[j].file, base) != 0)
            j++;
        if (j == g.gl_pathc)
            fail_msg("%s has no expected error in bad_configs", base);
    }
    globfree(&g);
}

static void load_all(const char *pattern, size_t min_files)
{
    glob_t g;
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= min_files);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct config c;
        config_defaults(&c);
        char *err = NULL;
        int rc = config_load_trusted(g.gl_pathv[i], CONFIG_TRUST_ANY, &c, &err, NULL);
        if (rc)
            fail_msg("%s: %s", g.gl_pathv[i], err);
        config_free(&c);
    }
    globfree(&g);
}

static void test_good_files(void **state)
{
    (void)state;
    char pattern[4096];
    load_all(fixture(pattern, sizeof(pattern), "good/*.yaml"), 4);
}

/* Every example under config/ loads; shmwatch.yaml names every key, each
 * set to its real default. */
static void test_examples(void **state)
{
    (void)state;
    char path[4096];
    load_all(source(path, sizeof(path), "config/*.yaml"), 1);

    source(path, sizeof(path), "config/shmwatch.yaml");
    struct config c;
    config_defaults(&c);
    char *err = NULL;
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), 0);
    free(c.theme_where); /* set because the file names the theme */
    c.theme_where = NULL;
    assert_is_default(&c);
    config_free(&c);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[16384];
    size_t n = fread(text + 1, 1, sizeof(text) - 2, f);
    fclose(f);
    text[0] = '\n';
    text[n + 1] = '\0';
    for (size_t i = 0; i < config_noptions; i++) {
        char key[64];
        snprintf(key, sizeof(key), "\n%s:", config_options[i].name);
        if (!strstr(text, key))
            fail_msg("config/shmwatch.yaml does not set %s", config_options[i].name);
    }
}

static void test_full(void **state)
{
    (void)state;
    char path[4096];
    fixture(path, sizeof(path), "good/full.yaml");
    struct config c;
    config_defaults(&c);
    char *err = NULL;
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), 0);
    assert_true(c.gauge_interval_s == 0.25);
    assert_true(c.scan_interval_s == 5.0);
    assert_int_equal(c.warn_pct, 60);
    assert_int_equal(c.crit_pct, 90);
    assert_string_equal(c.theme, "./mytheme.yaml");
    char where[4200];
    snprintf(where, sizeof(where), "%s:6:8", path);
    assert_string_equal(c.theme_where, where);
    assert_int_equal(c.view, CONFIG_VIEW_PROCESSES);
    assert_int_equal(c.sort, CONFIG_SORT_AGE);
    assert_true(c.sort_reverse);
    assert_int_equal(c.mounts.n, 2);
    assert_string_equal(c.mounts.item[0], "/dev/shm");
    assert_string_equal(c.mounts.item[1], "/mnt/ram disk");
    /* Each mount's place, for an error about it (not a tmpfs, missing). */
    assert_non_null(c.mounts_where);
    snprintf(where, sizeof(where), "%s:12:5", path);
    assert_string_equal(c.mounts_where[1], where);
    struct config two;
    config_copy(&two, &c);
    assert_string_equal(two.mounts_where[1], where);
    assert_int_equal(config_set(&two, "mounts", "/run/shm", &err), 0);
    assert_null(two.mounts_where); /* no longer from the file */
    config_free(&two);
    snprintf(where, sizeof(where), "%s:6:8", path);
    assert_int_equal(c.columns.n, 3);
    assert_int_equal(c.columns.col[0], CONFIG_COL_PID);
    assert_int_equal(c.columns.col[1], CONFIG_COL_NAME);
    assert_int_equal(c.columns.col[2], CONFIG_COL_GROUP);
    assert_true(c.min_age_s == 3600.0);
    assert_true(c.read_only);
    assert_string_equal(c.log_file, "/var/log/shmwatch.log");
    assert_true(c.ascii);
    assert_false(c.color);
    assert_true(c.record_max_size == 64ull << 20);
    assert_true(c.record_max_age_s == 86400.0);

    /* A second file applies on top: only what it names changes. */
    fixture(path, sizeof(path), "good/comments.yaml");
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), 0);
    assert_string_equal(c.theme_where, where); /* still from full.yaml */
    fixture(path, sizeof(path), "good/partial.yaml");
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), 0);
    assert_true(c.scan_interval_s == 0.75);
    assert_string_equal(c.theme, "light");
    snprintf(where, sizeof(where), "%s:2:8", path);
    assert_string_equal(c.theme_where, where);
    assert_int_equal(c.mounts.n, 0); /* `mounts:` with nothing: the empty list */
    assert_null(c.mounts_where);
    assert_int_equal(c.warn_pct, 60);
    assert_false(c.color);

    /* A copy owns its strings. */
    struct config copy;
    config_copy(&copy, &c);
    config_free(&c);
    assert_string_equal(copy.theme, "light");
    assert_string_equal(copy.log_file, "/var/log/shmwatch.log");
    config_free(&copy);
}

static void test_unreadable(void **state)
{
    (void)state;
    char path[4096], want[4200];
    fixture(path, sizeof(path), "no-such-file.yaml");
    struct config c;
    config_defaults(&c);
    char *err = NULL;
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_ANY, &c, &err, NULL), -ENOENT);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    assert_string_equal(err, want);
    free(err);
    assert_int_equal(config_load_trusted(fixtures_dir(), CONFIG_TRUST_ANY, &c, &err, NULL),
                     -EISDIR);
    free(err);
    assert_is_default(&c);
    config_free(&c);
}

/* Run as root, a settings file others could write is refused when found or
 * named by another file, and read with a warning when the command line
 * names it; a file root alone can write is read quietly. Not root: every
 * file is read. The same for themes. */
static void test_trust(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_config_trust.XXXXXX", path[64], theme[80];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/c.yaml", dir);
    snprintf(theme, sizeof(theme), "%s/t.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("warn_pct: 50\n", f);
    assert_int_equal(fclose(f), 0);
    f = fopen(theme, "w");
    assert_non_null(f);
    fputs("name: trusted\n", f);
    assert_int_equal(fclose(f), 0);
    bool root = geteuid() == 0;

    struct config c;
    config_defaults(&c);
    char *err = NULL, *warning = (char *)"unset", want[512];
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_REQUIRE, &c, &err, &warning), 0);
    assert_null(warning);
    assert_int_equal(c.warn_pct, 50);

    assert_int_equal(chmod(path, 0664), 0);
    config_free(&c);
    config_defaults(&c);
    int rc = config_load_trusted(path, CONFIG_TRUST_REQUIRE, &c, &err, &warning);
    if (root) {
        assert_int_equal(rc, -EPERM);
        snprintf(want, sizeof(want),
                 "%s: refused: writable by group or others (run as root, shmwatch reads "
                 "settings only from files that root owns and only root can write)",
                 path);
        assert_string_equal(err, want);
        free(err);
        assert_is_default(&c); /* nothing of the file is taken */
    } else {
        assert_int_equal(rc, 0);
    }
    assert_int_equal(config_load_trusted(path, CONFIG_TRUST_WARN, &c, &err, &warning), 0);
    assert_int_equal(c.warn_pct, 50);
    if (root) {
        snprintf(want, sizeof(want),
                 "%s is writable by group or others: read because the command line names it, "
                 "but whoever can write it decides what shmwatch does as root",
                 path);
        assert_string_equal(warning, want);
        free(warning);
        /* Another owner, even with no write bit for others. */
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(chown(path, 65534, 65534), 0);
        assert_int_equal(config_load_trusted(path, CONFIG_TRUST_REQUIRE, &c, &err, NULL), -EPERM);
        assert_non_null(strstr(err, ": refused: not owned by root ("));
        free(err);
    } else {
        assert_null(warning);
    }
    config_free(&c);

    struct theme t;
    assert_int_equal(chmod(theme, 0646), 0);
    rc = theme_load_trusted(theme, NULL, CONFIG_TRUST_REQUIRE, &t, &err, &warning);
    if (root) {
        assert_int_equal(rc, -EPERM);
        assert_non_null(strstr(err, "t.yaml: refused: writable by group or others ("));
        free(err);
    }
    assert_int_equal(theme_load_trusted(theme, NULL, CONFIG_TRUST_WARN, &t, &err, &warning), 0);
    assert_string_equal(t.name, "trusted");
    assert_true(root ? warning != NULL : warning == NULL);
    free(warning);
    /* By name, the file found is not the user's choice: refused even with WARN. */
    const char *dirs[] = {dir, NULL};
    rc = theme_load_trusted("t", dirs, CONFIG_TRUST_WARN, &t, &err, &warning);
    assert_int_equal(rc, root ? -EPERM : 0);
    if (root)
        free(err);
    unlink(path);
    unlink(theme);
    rmdir(dir);
}

/* Command-line flags go through the same validator. */
static void test_set(void **state)
{
    (void)state;
    struct config c;
    config_defaults(&c);
    char *err = NULL;
    assert_int_equal(config_set(&c, "scan_interval", "250ms", &err), 0);
    assert_true(c.scan_interval_s == 0.25);
    assert_int_equal(config_set(&c, "columns", "size, name,age", &err), 0);
    assert_int_equal(c.columns.n, 3);
    assert_int_equal(c.columns.col[0], CONFIG_COL_SIZE);
    assert_int_equal(c.columns.col[2], CONFIG_COL_AGE);
    assert_int_equal(config_set(&c, "mounts", "/dev/shm,/run/shm", &err), 0);
    assert_int_equal(c.mounts.n, 2);
    assert_string_equal(c.mounts.item[1], "/run/shm");
    assert_int_equal(config_set(&c, "log_file", "/tmp/a.log", &err), 0);
    assert_string_equal(c.log_file, "/tmp/a.log");
    assert_int_equal(config_set(&c, "log_file", NULL, &err), 0);
    assert_null(c.log_file);
    assert_int_equal(config_set(&c, "color", "NO", &err), 0);
    assert_false(c.color);
    assert_int_equal(config_set(&c, "view", "Flat", &err), 0);
    assert_int_equal(c.view, CONFIG_VIEW_FLAT);
    assert_int_equal(config_set(&c, "record_max_size", "1.5g", &err), 0);
    assert_true(c.record_max_size == 3ull << 29);
    assert_int_equal(config_set(&c, "record_max_size", "1048576", &err), 0);
    assert_true(c.record_max_size == 1ull << 20);
    assert_int_equal(config_set(&c, "record_max_age", "12h", &err), 0);
    assert_true(c.record_max_age_s == 43200.0);

    c.theme_where = strdup("file:1:1");
    assert_int_equal(config_set(&c, "theme", "mono", &err), 0);
    assert_string_equal(c.theme, "mono");
    assert_null(c.theme_where); /* no longer from the file */

    static const struct {
        const char *key, *value, *error;
    } bad[] = {
        {"scan_interval", "2x", "expected a duration such as 500ms, 2s or 10m, got '2x'"},
        {"scan_interval", "1e1",
         "'1e1' is not a plain decimal duration (such as 500ms, 2s or 10m)"},
        {"scan_interval", "0", "0 is out of range (100ms to 1h)"},
        {"warn_pct", "0", "0 is out of range (1 to 100)"},
        {"record_max_size", "1048575", "1048575 is out of range (at least 1m)"},
        {"record_max_size", "-1m", "expected a size such as 256m or 2g, got '-1m'"},
        {"record_max_size", "2.e3", "'2.e3' is not a plain decimal size (such as 256m or 2g)"},
        {"record_max_age", "59s", "59s is out of range (1m to 3650d)"},
        {"sort", "colour", "expected one of size, age, state, pid, name; got 'colour'"},
        {"columns", "", "expected at least 1 item"},
        {"mounts", "/dev/shm, shm", "'shm' is not an absolute path"},
        {"theme", "a\033[31m",
         "'a\\e[31m' is neither a theme name (letters, digits, '-', '_', "
         "'.') nor a .yaml file"},
        {"theme", NULL, "expected a string, got null"},
        {"nope", "1", "unknown setting 'nope'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = NULL;
        assert_int_equal(config_set(&c, bad[i].key, bad[i].value, &err), -EINVAL);
        assert_non_null(err);
        assert_string_equal(err, bad[i].error);
        free(err);
    }
    assert_string_equal(c.theme, "mono"); /* failures change nothing */
    assert_true(c.scan_interval_s == 0.25);
    assert_true(c.record_max_size == 1ull << 20);
    assert_true(c.record_max_age_s == 43200.0);

    assert_int_equal(config_check(&c, &err), 0);
    c.warn_pct = 95;
    assert_int_equal(config_check(&c, &err), -EINVAL);
    assert_string_equal(err, "warn_pct (95) must be below crit_pct (95)");
    free(err);
    config_free(&c);
}

static void touch(const char *dir, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
}

/* --config, then $XDG_CONFIG_HOME (or ~/.config), then /etc. */
static void test_find_path(void **state)
{
    (void)state;
    char tmp[] = "/tmp/shmwatch-test-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char xdg[256], home[256], etc[256], buf[4096], want[4096];
    snprintf(xdg, sizeof(xdg), "%s/xdg", tmp);
    snprintf(home, sizeof(home), "%s/home", tmp);
    snprintf(etc, sizeof(etc), "%s/etc", tmp);

    /* Nothing exists: none, but an explicit path is taken as is. */
    assert_null(config_find_path(NULL, xdg, home, etc, buf, sizeof(buf)));
    assert_string_equal(config_find_path("my.yaml", xdg, home, etc, buf, sizeof(buf)), "my.yaml");

    touch(tmp, "etc/shmwatch/config.yaml");
    snprintf(want, sizeof(want), "%s/shmwatch/config.yaml", etc);
    assert_string_equal(config_find_path(NULL, xdg, home, etc, buf, sizeof(buf)), want);

    touch(tmp, "home/.config/shmwatch/config.yaml");
    snprintf(want, sizeof(want), "%s/.config/shmwatch/config.yaml", home);
    assert_string_equal(config_find_path(NULL, NULL, home, etc, buf, sizeof(buf)), want);
    /* A relative XDG_CONFIG_HOME is ignored; a set one replaces ~/.config. */
    assert_string_equal(config_find_path(NULL, "rel", home, etc, buf, sizeof(buf)), want);
    snprintf(want, sizeof(want), "%s/shmwatch/config.yaml", etc);
    assert_string_equal(config_find_path(NULL, xdg, home, etc, buf, sizeof(buf)), want);

    touch(tmp, "xdg/shmwatch/config.yaml");
    snprintf(want, sizeof(want), "%s/shmwatch/config.yaml", xdg);
    assert_string_equal(config_find_path(NULL, xdg, home, etc, buf, sizeof(buf)), want);
    assert_string_equal(config_find_path("", xdg, home, etc, buf, sizeof(buf)), want);
    /* Too small a buffer finds nothing rather than a cut path. */
    assert_null(config_find_path(NULL, xdg, NULL, NULL, buf, 8));

    /* config_default_path reads the environment. */
    setenv("XDG_CONFIG_HOME", xdg, 1);
    assert_string_equal(config_default_path(buf, sizeof(buf)), want);

    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_bad_files_all_listed),
        cmocka_unit_test(test_good_files),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_trust),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_find_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
