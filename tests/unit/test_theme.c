/* Themes: every file under themes/ loads and defines every role, the
 * built-ins match their files, each kind of error has its exact
 * file:line:column, names are searched in order, colours fit the terminal. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>

#include "testutil.h"
#include "config/theme.h"
#include "util/escape.h"

static void load_ok(const char *name_or_file, const char *const *dirs, struct theme *t)
{
    char *err = NULL;
    int rc = theme_load_trusted(name_or_file, dirs, CONFIG_TRUST_ANY, t, &err, NULL);
    if (rc)
        fail_msg("%s: %s", name_or_file, err);
}

static void assert_same_theme(const struct theme *a, const struct theme *b)
{
    assert_string_equal(a->name, b->name);
    for (int i = 0; i < THEME_NROLES; i++) {
        const struct theme_color *x = &a->role[i], *y = &b->role[i];
        if (x->fg != y->fg || x->bg != y->bg || x->fg256 != y->fg256 || x->bg256 != y->bg256 ||
            x->attrs != y->attrs)
            fail_msg("%s: role %s differs", a->name, theme_role_names[i]);
    }
}

static void assert_attrs_only(const struct theme *t)
{
    for (int i = 0; i < THEME_NROLES; i++) {
        const struct theme_color *c = &t->role[i];
        if (c->fg != THEME_COLOR_DEFAULT || c->bg != THEME_COLOR_DEFAULT || c->fg256 != -1 ||
            c->bg256 != -1)
            fail_msg("%s: role %s has a colour", t->name, theme_role_names[i]);
    }
}

/* Every file under themes/ loads and sets every role explicitly. */
static void test_shipped_themes(void **state)
{
    (void)state;
    char pattern[4096];
    glob_t g;
    assert_int_equal(glob(source(pattern, sizeof(pattern), "themes/*.yaml"), 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 4);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct theme t;
        load_ok(g.gl_pathv[i], NULL, &t);
        const char *base = strrchr(g.gl_pathv[i], '/') + 1;
        assert_int_equal(strncmp(base, t.name, strlen(t.name)), 0); /* name: matches file */

        FILE *f = fopen(g.gl_pathv[i], "r");
        assert_non_null(f);
        char text[16384];
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        for (int r = 0; r < THEME_NROLES; r++) {
            char key[64];
            snprintf(key, sizeof(key), "\n  %s:", theme_role_names[r]);
            if (!strstr(text, key))
                fail_msg("%s does not set %s", g.gl_pathv[i], theme_role_names[r]);
        }
    }
    globfree(&g);

    /* The ones the dashboard promises, by name from the source tree. */
    char dir[4096];
    const char *dirs[] = {source(dir, sizeof(dir), "themes"), NULL};
    struct theme t;
    static const char *const names[] = {"default", "mono", "light", "solarized-dark"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        load_ok(names[i], dirs, &t);
        assert_string_equal(t.name, names[i]);
    }
}

/* The built-ins say what themes/default.yaml and themes/mono.yaml say. */
static void test_builtins_match_files(void **state)
{
    (void)state;
    char path[4096];
    struct theme t;
    load_ok(source(path, sizeof(path), "themes/default.yaml"), NULL, &t);
    assert_same_theme(&t, &theme_builtin_default);
    load_ok(source(path, sizeof(path), "themes/mono.yaml"), NULL, &t);
    assert_same_theme(&t, &theme_builtin_mono);
    assert_attrs_only(&t);
    assert_attrs_only(&theme_builtin_mono);
    /* mono still tells states apart */
    assert_int_not_equal(t.role[THEME_selected].attrs, 0);
    assert_int_not_equal(t.role[THEME_state_orphan].attrs, t.role[THEME_state_in_use].attrs);

    /* Without any theme file, the two built-ins are still there by name. */
    load_ok("default", NULL, &t);
    assert_same_theme(&t, &theme_builtin_default);
    load_ok("mono", NULL, &t);
    assert_same_theme(&t, &theme_builtin_mono);
}

static void test_partial(void **state)
{
    (void)state;
    char path[4096];
    struct theme t;
    load_ok(fixture(path, sizeof(path), "themes/good/partial.yaml"), NULL, &t);
    assert_string_equal(t.name, "my-partial");
    const struct theme_color *n = &t.role[THEME_normal];
    assert_int_equal(n->fg, THEME_WHITE);
    assert_int_equal(n->bg, THEME_BLUE);
    /* Left out: like normal. */
    assert_int_equal(t.role[THEME_header].fg, THEME_WHITE);
    assert_int_equal(t.role[THEME_header].bg, THEME_BLUE);
    /* A 256-colour number as fg: the nearest basic colour as the fallback. */
    assert_int_equal(t.role[THEME_gauge_warn].fg256, 214);
    assert_int_equal(t.role[THEME_gauge_warn].fg, THEME_BRIGHT_YELLOW);
    assert_int_equal(t.role[THEME_gauge_warn].bg, THEME_COLOR_DEFAULT);
    /* An explicit fg256 wins; a single attribute needs no list. */
    assert_int_equal(t.role[THEME_gauge_crit].fg256, 160);
    assert_int_equal(t.role[THEME_gauge_crit].fg, THEME_BRIGHT_RED);
    assert_int_equal(t.role[THEME_gauge_crit].attrs, THEME_ATTR_BOLD);
    /* Block style, any case, and 0-15 as numbers. */
    assert_int_equal(t.role[THEME_selected].fg, THEME_BRIGHT_CYAN);
    assert_int_equal(t.role[THEME_selected].bg, THEME_BLUE);
    assert_int_equal(t.role[THEME_selected].bg256, -1);
    assert_int_equal(t.role[THEME_selected].attrs, THEME_ATTR_REVERSE | THEME_ATTR_UNDERLINE);
    /* Listed with no value: plain, not normal's colours. */
    assert_int_equal(t.role[THEME_zombie].fg, THEME_COLOR_DEFAULT);
    assert_int_equal(t.role[THEME_zombie].bg, THEME_COLOR_DEFAULT);

    load_ok(fixture(path, sizeof(path), "themes/good/noname.yaml"), NULL, &t);
    assert_string_equal(t.name, "noname");
    assert_int_equal(t.role[THEME_header].attrs, THEME_ATTR_BOLD);
    load_ok(fixture(path, sizeof(path), "themes/good/empty.yaml"), NULL, &t);
    assert_string_equal(t.name, "empty");
    assert_attrs_only(&t);
}

static const struct {
    const char *file, *error;
} bad_themes[] = {
    {"malformed.yaml",
     "4:9: did not find expected ',' or '}' (while parsing a flow mapping at 3:11)"},
    {"unknown_top_key.yaml", "2:1: theme: unknown key 'colours' (expected name, description or "
                             "colors)"},
    {"name_type.yaml", "1:7: name: expected a string, got a list"},
    {"colors_list.yaml", "1:9: colors: expected a mapping of keys to values, got a list"},
    {"unknown_role.yaml", "3:3: colors: unknown colour role 'gauge_okay'"},
    {"role_list.yaml", "2:11: normal: expected a mapping of keys to values, got a list"},
    {"unknown_colour_key.yaml", "2:21: normal: unknown key 'fgg' (expected fg, bg, fg256, bg256 "
                                "or attrs)"},
    {"bad_colour.yaml", "3:18: gauge_ok.fg: unknown colour 'orang' (expected default, black, red, "
                        "green, yellow, blue, magenta, cyan, white, bright_<colour> or 0-255)"},
    {"colour_range.yaml", "2:15: muted.fg: colour 300 is out of range (0 to 255)"},
    /* A long name is cut on a character boundary: 61 two-byte characters fit, not 62. */
    {"long_colour.yaml", "2:15: muted.fg: unknown colour 'xééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé... (expected default, "
                         "black, red, green, yellow, blue, magenta, cyan, white, "
                         "bright_<colour> or 0-255)"},
    {"bad_256.yaml", "2:29: muted.fg256: expected a colour number 0 to 255, got 'grey'"},
    {"bad_attr.yaml", "4:19: status.attrs: unknown attribute 'blink' (expected bold, dim, "
                      "reverse or underline)"},
};

static void test_bad_themes(void **state)
{
    (void)state;
    size_t n = sizeof(bad_themes) / sizeof(bad_themes[0]);
    for (size_t i = 0; i < n; i++) {
        char path[4096], want[8192], rel[256];
        snprintf(rel, sizeof(rel), "themes/bad/%s", bad_themes[i].file);
        fixture(path, sizeof(path), rel);
        struct theme t = {.name = "untouched"};
        char *err = NULL;
        assert_int_equal(theme_load_trusted(path, NULL, CONFIG_TRUST_ANY, &t, &err, NULL), -EINVAL);
        snprintf(want, sizeof(want), "%s:%s", path, bad_themes[i].error);
        assert_non_null(err);
        /* Whatever the file holds, the message is valid UTF-8. */
        for (size_t k = 0, len = strlen(err), step; k < len; k += step) {
            step = utf8_valid_len((const unsigned char *)err + k, len - k);
            if (!step)
                fail_msg("invalid UTF-8 at byte %zu of %s", k, err);
        }
        assert_string_equal(err, want);
        assert_string_equal(t.name, "untouched");
        free(err);
    }
    /* A new bad fixture needs its expected message above. */
    char pattern[4096];
    glob_t g;
    assert_int_equal(glob(fixture(pattern, sizeof(pattern), "themes/bad/*.yaml"), 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, n);
    globfree(&g);
}

/* Names: first directory that has NAME.yaml wins; bad names and missing
 * themes say so. */
static void test_search(void **state)
{
    (void)state;
    char a[4096], b[4096];
    const char *dirs[] = {fixture(a, sizeof(a), "themedirs/a"),
                          fixture(b, sizeof(b), "themedirs/b"), NULL};
    struct theme t;
    load_ok("shared", dirs, &t);
    assert_string_equal(t.name, "from-a");
    load_ok("only-b", dirs, &t);
    assert_string_equal(t.name, "only-b");
    assert_int_equal(t.role[THEME_title].fg, THEME_GREEN);

    char *err = NULL, want[9000];
    assert_int_equal(theme_load_trusted("nope", dirs, CONFIG_TRUST_ANY, &t, &err, NULL), -ENOENT);
    snprintf(want, sizeof(want), "theme 'nope' not found in %s, %s", a, b);
    assert_string_equal(err, want);
    free(err);
    assert_int_equal(theme_load_trusted("nope", NULL, CONFIG_TRUST_ANY, &t, &err, NULL), -ENOENT);
    assert_string_equal(err, "theme 'nope' not found in any theme directory");
    free(err);
    assert_int_equal(theme_load_trusted("bad name!", dirs, CONFIG_TRUST_ANY, &t, &err, NULL),
                     -EINVAL);
    assert_string_equal(err, "invalid theme name 'bad name!' (letters, digits, '-', '_', '.'; or "
                             "a path to a .yaml file)");
    free(err);
    assert_int_equal(theme_load_trusted("missing.yaml", dirs, CONFIG_TRUST_ANY, &t, &err, NULL),
                     -ENOENT);
    assert_string_equal(err, "missing.yaml: No such file or directory");
    free(err);

    assert_true(theme_name_valid("solarized-dark"));
    assert_true(theme_name_valid("my_theme.v2"));
    assert_false(theme_name_valid(""));
    assert_false(theme_name_valid(".hidden"));
    assert_false(theme_name_valid("a b"));
    assert_false(theme_name_valid("a/b"));
    assert_true(theme_is_path("./x"));
    assert_true(theme_is_path("x.yaml"));
    assert_false(theme_is_path("x"));

    struct theme_dirs d;
    const char *const *def = theme_dirs_default(&d);
    size_t n = 0;
    while (def[n])
        n++;
    assert_true(n >= 2 && n <= 3);
}

static void test_pick(void **state)
{
    (void)state;
    const struct theme_color warn = {THEME_BRIGHT_YELLOW, THEME_BLUE, 214, -1, THEME_ATTR_DIM};
    short fg, bg;
    unsigned attrs;
    theme_pick(&warn, 256, &fg, &bg, &attrs);
    assert_int_equal(fg, 214);
    assert_int_equal(bg, THEME_BLUE);
    assert_int_equal(attrs, THEME_ATTR_DIM);
    theme_pick(&warn, 16, &fg, &bg, &attrs);
    assert_int_equal(fg, THEME_BRIGHT_YELLOW);
    assert_int_equal(attrs, THEME_ATTR_DIM);
    /* 8 colours: bright becomes basic plus bold. */
    theme_pick(&warn, 8, &fg, &bg, &attrs);
    assert_int_equal(fg, THEME_YELLOW);
    assert_int_equal(bg, THEME_BLUE);
    assert_int_equal(attrs, THEME_ATTR_DIM | THEME_ATTR_BOLD);
    /* No colours: attributes only. */
    theme_pick(&warn, 0, &fg, &bg, &attrs);
    assert_int_equal(fg, THEME_COLOR_DEFAULT);
    assert_int_equal(bg, THEME_COLOR_DEFAULT);

    assert_int_equal(theme_color16(3), THEME_YELLOW);
    assert_int_equal(theme_color16(196), THEME_BRIGHT_RED);
    assert_int_equal(theme_color16(28), THEME_GREEN);
    assert_int_equal(theme_color16(16), THEME_BLACK);
    assert_int_equal(theme_color16(231), THEME_BRIGHT_WHITE);
    assert_int_equal(theme_color16(244), THEME_WHITE);
    assert_int_equal(theme_color16(234), THEME_BLACK);
    assert_int_equal(theme_color16(300), THEME_COLOR_DEFAULT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_themes), cmocka_unit_test(test_builtins_match_files),
        cmocka_unit_test(test_partial),        cmocka_unit_test(test_bad_themes),
        cmocka_unit_test(test_search),         cmocka_unit_test(test_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
