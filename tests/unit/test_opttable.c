/* The option table (src/cli/opttable.c) and the parser and --help made from
 * it (src/cli/cliparse.c): every row is complete, no command has a name
 * twice, every error is one line with status 2, values land in their
 * fields. */
#include "testutil.h"

#include "cli/opttable.h"
#include "cli/settings.h"
#include "config/config.h"

static bool takes(const struct cli_opt *r, enum cli_cmd cmd)
{
    return (r->cmds & CLI_IN(cmd)) != 0;
}

static bool has_value(const struct cli_opt *r)
{
    return r->type != CLI_FLAG && r->type != CLI_CHOICE;
}

/* Parses cmd's command line ("" ends args); returns the status, with the
 * message in *err (or NULL). */
static int parse(enum cli_cmd cmd, struct options *o, char **err, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)(cmd == CLI_MAIN ? "shmwatch" : cli_commands[cmd].name);
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return cli_parse(cmd, argc, argv, o, err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* cmd's command line must fail with status 2 and exactly the line want. */
static void expect_error(enum cli_cmd cmd, const char *want, const char *const *args)
{
    struct options o;
    char *err = NULL;
    int rc = parse(cmd, &o, &err, args);
    if (rc != 2 || !err || strcmp(err, want) != 0)
        fail_msg("%s %s...: status %d, message '%s', expected '%s'", cli_commands[cmd].name,
                 args[0], rc, err ? err : "(none)", want);
    options_free(&o);
    free(err);
}

/* A message is one line for the terminal: "shmwatch[ CMD]: ..." with no
 * newline, no control character. */
static void check_line(enum cli_cmd cmd, const char *err)
{
    assert_non_null(err);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "shmwatch%s%s: ", cmd == CLI_MAIN ? "" : " ",
             cli_commands[cmd].name);
    if (strncmp(err, prefix, strlen(prefix)) != 0)
        fail_msg("'%s' does not begin with '%s'", err, prefix);
    for (const char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            fail_msg("'%s' holds a control character", err);
}

static void test_rows_complete(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nopts; i++) {
        const struct cli_opt *r = &cli_opts[i];
        if (!r->name || !*r->name || !r->cmds || !r->help || !*r->help)
            fail_msg("row %zu (--%s): a name, its commands and a help line", i,
                     r->name ? r->name : "?");
        if (r->cmds >> CLI_NCMDS)
            fail_msg("--%s: a command that does not exist", r->name);
        if (has_value(r) != (r->metavar != NULL))
            fail_msg("--%s: a metavar exactly when it takes a value", r->name);
        if (r->help[strlen(r->help) - 1] == '\n' || strstr(r->help, "\n\n"))
            fail_msg("--%s: an empty help line", r->name);
        /* A check that can fail says so with the value in its message. */
        bool can_fail =
            !r->config_key &&
            (r->type == CLI_INT || r->type == CLI_SIZE || r->type == CLI_DURATION ||
             (r->type == CLI_PATH && r->absolute) || (r->type == CLI_CHOICE && !r->stop));
        if (can_fail && (!r->bad || (has_value(r) && !strstr(r->bad, "%s"))))
            fail_msg("--%s: no message for a bad value", r->name);
        if (r->repeat && r->type != CLI_PATH)
            fail_msg("--%s: only a path repeats", r->name);
        if (r->config_key) {
            if (!config_option_find(r->config_key))
                fail_msg("--%s: no setting %s", r->name, r->config_key);
            if (has_value(r) && (!r->config_bad || !strstr(r->config_bad, "%s")))
                fail_msg("--%s: no message for the setting's refusal", r->name);
        }
    }
}

static void test_no_name_twice(void **state)
{
    (void)state;
    for (int cmd = 0; cmd < CLI_NCMDS; cmd++) {
        bool help = false;
        for (size_t i = 0; i < cli_nopts; i++) {
            const struct cli_opt *a = &cli_opts[i];
            if (!takes(a, (enum cli_cmd)cmd))
                continue;
            help |= a->stop && a->value == MODE_HELP && a->short_name == 'h';
            for (size_t j = i + 1; j < cli_nopts; j++) {
                const struct cli_opt *b = &cli_opts[j];
                if (!takes(b, (enum cli_cmd)cmd))
                    continue;
                if (strcmp(a->name, b->name) == 0)
                    fail_msg("%s: --%s twice", cli_commands[cmd].name, a->name);
                if (a->short_name && a->short_name == b->short_name)
                    fail_msg("%s: -%c twice", cli_commands[cmd].name, a->short_name);
            }
        }
        if (!help)
            fail_msg("%s: no -h, --help", cli_commands[cmd].name);
    }
}

/* Every row, on every command that takes it: a missing value and a bad
 * one are each one line with status 2. */
static void test_every_row_refuses(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nopts; i++) {
        const struct cli_opt *r = &cli_opts[i];
        for (int c = 0; c < CLI_NCMDS; c++) {
            enum cli_cmd cmd = (enum cli_cmd)c;
            if (!takes(r, cmd))
                continue;
            char name[64];
            snprintf(name, sizeof(name), "--%s", r->name);
            struct options o;
            char *err = NULL;
            if (has_value(r) && !r->optional) { /* an optional value may be left out */
                assert_int_equal(parse(cmd, &o, &err, ARGS(name)), 2);
                check_line(cmd, err);
                assert_non_null(strstr(err, "needs a value"));
                options_free(&o);
                free(err);
                err = NULL;
            }
            const char *junk = r->type == CLI_PATH ? "rel\native" : "x\x1b[2J";
            const char *other = NULL; /* another choice of the same field */
            for (size_t j = 0; j < cli_nopts && r->type == CLI_CHOICE; j++)
                if (j != i && takes(&cli_opts[j], cmd) && cli_opts[j].type == CLI_CHOICE &&
                    !cli_opts[j].stop && cli_opts[j].offset == r->offset)
                    other = cli_opts[j].name;
            bool can_fail = !r->config_key && r->type != CLI_FLAG && r->type != CLI_STRING &&
                            !(r->type == CLI_PATH && !r->absolute) &&
                            !(r->type == CLI_CHOICE && (r->stop || !other));
            if (!can_fail)
                continue;
            char second[64];
            snprintf(second, sizeof(second), "--%s", other ? other : "");
            int rc = has_value(r) ? parse(cmd, &o, &err, ARGS(name, junk))
                                  : parse(cmd, &o, &err, ARGS(name, second));
            if (rc != 2)
                fail_msg("%s --%s: status %d", cli_commands[cmd].name, r->name, rc);
            check_line(cmd, err);
            if (!strstr(err, name))
                fail_msg("'%s' does not name %s", err, name);
            options_free(&o);
            free(err);
        }
    }
}

/* The generic errors, word for word, as doc/shmwatch.1 and the
 * integration tests know them. */
static void test_messages(void **state)
{
    (void)state;
    expect_error(CLI_MAIN, "shmwatch: unknown option '--bogus' (see --help)", ARGS("--bogus"));
    expect_error(CLI_MAIN, "shmwatch: --interval needs a value", ARGS("--interval"));
    expect_error(CLI_MAIN, "shmwatch: unexpected argument 'extra' (see --help)",
                 ARGS("--once", "extra"));
    expect_error(CLI_MAIN, "shmwatch: --once, --json and --prometheus exclude each other",
                 ARGS("--once", "--json"));
    expect_error(CLI_MAIN, "shmwatch: --count needs --interval", ARGS("--json", "--count", "3"));
    expect_error(CLI_MAIN, "shmwatch: --prometheus-file goes with Prometheus output only",
                 ARGS("--json", "--prometheus-file", "/x"));
    expect_error(CLI_MAIN, "shmwatch: --count: '5\\n\\e[31m' is not a whole number >= 0",
                 ARGS("--count", "5\n\x1b[31m"));
    expect_error(CLI_MAIN,
                 "shmwatch: option '--pro' is ambiguous: --prometheus, --prometheus-file (see "
                 "--help)",
                 ARGS("--pro"));
    expect_error(CLI_MAIN, "shmwatch: unknown option '--prox' (see --help)", ARGS("--prox"));
    expect_error(CLI_CLEAN, "shmwatch clean: unknown option '--bogus' (see shmwatch clean --help)",
                 ARGS("--bogus"));
    expect_error(CLI_CLEAN,
                 "shmwatch clean: --mount needs an absolute path, got 'rel' (see shmwatch clean "
                 "--help)",
                 ARGS("--mount", "rel"));
    expect_error(CLI_CLEAN, "shmwatch clean: unexpected argument 'x\\ny' (see shmwatch clean --help)",
                 ARGS("x\ny"));
    /* getopt's word: the whole cluster */
    expect_error(CLI_REAP, "shmwatch reap: -nt needs a value (see shmwatch reap --help)",
                 ARGS("-nt"));
    expect_error(CLI_REAP,
                 "shmwatch reap: --timeout: expected seconds (at most 3600), got '4000' (see "
                 "shmwatch reap --help)",
                 ARGS("-yt", "4000"));
    /* An exponent or a hexadecimal number: the form is refused, whatever
     * the range of the option. */
    expect_error(CLI_MAIN,
                 "shmwatch: --interval: '1e1' is not a plain decimal duration (such as 2, 0.5s "
                 "or 10m)",
                 ARGS("--json", "--interval", "1e1"));
    expect_error(CLI_CLEAN,
                 "shmwatch clean: --min-age: '0x3c' is not a plain decimal duration (such as "
                 "2, 0.5s or 10m) (see shmwatch clean --help)",
                 ARGS("--min-age", "0x3c"));
    expect_error(CLI_PLAN, "shmwatch plan: unknown option '--a\\e[2Jb' (see shmwatch plan --help)",
                 ARGS("--a\x1b[2Jb"));
    expect_error(CLI_PLAN, "shmwatch plan: --workers needs a whole number from 0 to 2^40, not '-1'",
                 ARGS("-w", "-1"));
    expect_error(CLI_PLAN,
                 "shmwatch plan: --memory needs a size above 0 such as 512m or 8g, "
                 "not '0'",
                 ARGS("--memory", "0"));
    /* A size past 64 bits is refused for its value, not its form. */
    expect_error(CLI_PLAN,
                 "shmwatch plan: --memory: 18446744073709551615 is out of range (below "
                 "16777216t)",
                 ARGS("--memory", "18446744073709551615"));
    expect_error(CLI_PLAN, "shmwatch plan: --shm-size: 16777216t is out of range (below 16777216t)",
                 ARGS("--shm-size", "16777216t"));
}

static void test_values(void **state)
{
    (void)state;
    struct options o;
    char *err = NULL;
    assert_int_equal(parse(CLI_MAIN, &o, &err,
                           ARGS("--json", "--interval", "500ms", "--mount", "/a", "--mount=/b",
                                "--pid", "42", "--orphan-min-age", "2m", "--trust-pids", "--asc")),
                     0);
    assert_null(err);
    assert_int_equal(o.cmd, CLI_MAIN);
    assert_int_equal(o.mode, MODE_JSON);
    assert_true(o.interval_set && o.interval == 0.5);
    assert_int_equal(o.count, 0); /* a stream: --interval without --count */
    assert_int_equal(o.mounts.n, 2);
    assert_string_equal(o.mounts.item[1], "/b");
    assert_int_equal(o.pid, 42);
    assert_string_equal(o.orphan_min_age, "2m"); /* the config layer checks it */
    assert_true(o.trust_pids && o.ascii && !o.read_only);
    options_free(&o);

    assert_int_equal(parse(CLI_MAIN, &o, &err, ARGS("--prometheus-file", "/p")), 0);
    assert_int_equal(o.mode, MODE_PROMETHEUS);
    assert_true(o.interval == 15 && o.count == 0);
    options_free(&o);

    /* --help and --version end the parsing: what follows is not read. */
    assert_int_equal(parse(CLI_MAIN, &o, &err, ARGS("--once", "--version", "--bogus")), 0);
    assert_int_equal(o.mode, MODE_VERSION);
    options_free(&o);
    assert_int_equal(parse(CLI_CLEAN, &o, &err, ARGS("-nyh", "extra")), 0);
    assert_int_equal(o.mode, MODE_HELP);
    assert_true(o.dry_run && o.yes);
    options_free(&o);

    assert_int_equal(parse(CLI_CLEAN, &o, &err,
                           ARGS("x", "--all-unheld", "--min-age", "10m", "--mount", "/dev/shm")),
                     2); /* arguments after options are still refused */
    free(err);
    options_free(&o);
    assert_int_equal(parse(CLI_CLEAN, &o, &err, ARGS("--all-unheld", "--min-age", "10m")), 0);
    assert_true(o.all_unheld && o.min_age_set && o.min_age == 600);
    options_free(&o);

    assert_int_equal(parse(CLI_REAP, &o, &err, ARGS("-nt2.5")), 0);
    assert_true(o.dry_run && o.timeout_set && o.timeout == 2.5);
    options_free(&o);

    assert_int_equal(parse(CLI_PLAN, &o, &err,
                           ARGS("-b8", "-s", "3x8x8", "-w", "0", "--shm-size", "2g", "--json")),
                     0);
    assert_true(o.batch_size_set && o.batch_size == 8 && o.workers_set && o.workers == 0);
    assert_string_equal(o.sample_shape, "3x8x8");
    assert_string_equal(o.dtype, "float32");
    assert_true(o.shm_size_set && o.shm_size == 2ull << 30 && !o.memory_set && o.json);
    assert_int_equal(o.mode, MODE_DASHBOARD);
    options_free(&o);

    /* A command does not take another's options. */
    expect_error(CLI_MAIN, "shmwatch: unknown option '--dry-run' (see --help)", ARGS("--dry-run"));
    expect_error(CLI_REAP, "shmwatch reap: unknown option '--mount' (see shmwatch reap --help)",
                 ARGS("--mount", "/x"));
}

/* The rows with a config key go through the config layer's setter. */
static void test_settings(void **state)
{
    (void)state;
    char path[4096];
    fixture(path, sizeof(path), "good/empty.yaml");
    struct options o;
    char *err = NULL;
    struct config cfg;
    assert_int_equal(parse(CLI_CLEAN, &o, &err,
                           ARGS("--config", path, "--orphan-min-age", "90", "--trust-pids", "--log",
                                "/tmp/x.log")),
                     0);
    assert_int_equal(settings_load(&o, &cfg, &err), 0);
    assert_true(cfg.orphan_min_age_s == 90 && cfg.trust_pids);
    assert_string_equal(cfg.log_file, "/tmp/x.log");
    config_free(&cfg);
    options_free(&o);

    assert_int_equal(parse(CLI_MAIN, &o, &err,
                           ARGS("--config", path, "--read-only", "--orphan-min-age", "soon",
                                "--theme", "bad name!")),
                     0);
    assert_int_equal(settings_load(&o, &cfg, &err), 2);
    /* The first in the config table's order: theme before orphan_min_age. */
    assert_non_null(strstr(err, "command line: "));
    assert_non_null(strstr(err, "theme name"));
    free(err);
    config_free(&cfg);
    options_free(&o);

    assert_int_equal(parse(CLI_MAIN, &o, &err, ARGS("--config", path, "--orphan-min-age", "soon")),
                     0);
    assert_int_equal(settings_load(&o, &cfg, &err), 2);
    assert_string_equal(err, "--orphan-min-age: expected a duration such as 500ms, 2s or 10m, "
                             "got 'soon'");
    free(err);
    config_free(&cfg);
    options_free(&o);

    assert_int_equal(parse(CLI_MAIN, &o, &err, ARGS("--config", path, "--orphan-min-age", "1e1")),
                     0);
    assert_int_equal(settings_load(&o, &cfg, &err), 2);
    assert_string_equal(err, "--orphan-min-age: '1e1' is not a plain decimal duration (such as "
                             "500ms, 2s or 10m)");
    free(err);
    config_free(&cfg);
    options_free(&o);
}

/* --help lists every row of the command once, with its help from the
 * command's column; a generated usage line fits its width. */
static void test_usage(void **state)
{
    (void)state;
    for (int c = 0; c < CLI_NCMDS; c++) {
        char *u = cli_usage((enum cli_cmd)c);
        assert_true(strncmp(u, "Usage: shmwatch", 15) == 0);
        assert_true(u[strlen(u) - 1] == '\n');
        for (size_t i = 0; i < cli_nopts; i++) {
            const struct cli_opt *r = &cli_opts[i];
            if (!takes(r, (enum cli_cmd)c))
                continue;
            char line[128];
            size_t first = strcspn(r->help, "\n");
            snprintf(line, sizeof(line), "--%s%s%s", r->name, r->metavar ? " " : "",
                     r->metavar ? r->metavar : "");
            const char *at = strstr(u, line);
            if (!at)
                fail_msg("%s --help lacks %s", cli_commands[c].name, line);
            char help[128];
            snprintf(help, sizeof(help), "%.*s\n", (int)first, r->help);
            if (!strstr(at, help))
                fail_msg("%s --help lacks the help of --%s", cli_commands[c].name, r->name);
        }
        if (c == CLI_CLEAN || c == CLI_REAP) /* made from the rows */
            for (const char *l = u; *l && strncmp(l, "\n", 1) != 0; l = strchr(l, '\n') + 1)
                assert_true(strcspn(l, "\n") <= CLI_USAGE_WIDTH);
        free(u);
    }
    char *u = cli_usage(CLI_CLEAN);
    const char *want = "Usage: shmwatch clean [--dry-run] [--yes] [--all-unheld] [--min-age DUR]\n"
                       "                      [--mount PATH]";
    assert_true(strncmp(u, want, strlen(want)) == 0);
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_complete),
        cmocka_unit_test(test_no_name_twice),
        cmocka_unit_test(test_every_row_refuses),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
