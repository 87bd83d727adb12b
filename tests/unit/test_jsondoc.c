/* util/jsondoc.c: a document read into a tree, and what it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/jsondoc.h"

static struct jd *parse(const char *text)
{
    char err[128];
    return jd_parse(text, strlen(text), err, sizeof err);
}

static void test_values(void **state)
{
    (void)state;
    struct jd *d = parse(" {\"schema\": 1, \"time\": \"2026-12-05T03:12:07Z\", \"pct\": 99.5,"
                         " \"big\": 68719476736, \"neg\": -3e2, \"ok\": true, \"no\": false,"
                         " \"none\": null, \"huge\": 1e20, \"list\": [1, \"two\", {\"x\": []}]} ");
    assert_non_null(d);
    assert_int_equal(jd_getint(d, "schema", -1), 1);
    assert_string_equal(jd_getstr(d, "time", ""), "2026-12-05T03:12:07Z");
    assert_true(jd_getnum(d, "pct", 0) == 99.5);
    assert_int_equal(jd_getint(d, "big", 0), 68719476736LL);
    assert_true(jd_getnum(d, "neg", 0) == -300);
    /* A count is a number from 0 to below 2^64; anything else is 0. */
    assert_int_equal(jd_getu64(d, "big"), 68719476736ULL);
    assert_int_equal(jd_getu64(d, "neg"), 0);
    assert_int_equal(jd_getu64(d, "time"), 0);
    assert_int_equal(jd_getu64(d, "huge"), 0);
    assert_true(jd_bool(jd_get(d, "ok"), false));
    assert_false(jd_bool(jd_get(d, "no"), true));
    assert_true(jd_is(jd_get(d, "none"), JD_NULL));
    assert_null(jd_get(d, "missing"));
    /* The wrong type gives the default. */
    assert_int_equal(jd_getint(d, "time", 7), 7);
    assert_string_equal(jd_getstr(d, "schema", "dflt"), "dflt");
    const struct jd *list = jd_get(d, "list");
    assert_int_equal(list->n, 3);
    assert_int_equal(jd_int(jd_at(list, 0), 0), 1);
    assert_string_equal(jd_str(jd_at(list, 1), ""), "two");
    assert_int_equal(jd_get(jd_at(list, 2), "x")->type, JD_ARR);
    assert_null(jd_at(list, 3));
    jd_free(d);
}

static void test_strings(void **state)
{
    (void)state;
    /* Escapes undone, a surrogate pair one character, a lone one U+FFFD,
     * raw bytes kept; the last of a key given twice counts. */
    struct jd *d = parse("{\"s\": \"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\\ud800x\", "
                         "\"raw\": \"\xff\xfe\", \"k\": 1, \"k\": 2, \"nul\": \"a\\u0000b\"}");
    assert_non_null(d);
    assert_string_equal(jd_getstr(d, "s", ""), "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
    assert_string_equal(jd_getstr(d, "raw", ""), "\xff\xfe");
    assert_int_equal(jd_getint(d, "k", 0), 2);
    /* A string that holds a NUL is no C string. */
    assert_null(jd_getstr(d, "nul", NULL));
    assert_int_equal(jd_get(d, "nul")->n, 3);
    jd_free(d);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", "{", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "01", "1.", "-", "tru", "\"a\tb\"",
        "\"\\x\"", "\"\\u12\"", "{} {}", "{\"a\": 1} x", "[nul]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[128] = "";
        struct jd *d = jd_parse(bad[i], strlen(bad[i]), err, sizeof err);
        if (d)
            fail_msg("parsed: %s", bad[i]);
        assert_non_null(strstr(err, "at byte "));
    }
    /* A NUL inside the text is not JSON either. */
    char err[128] = "";
    assert_null(jd_parse("[1]\0", 4, err, sizeof err));
}

static void test_depth(void **state)
{
    (void)state;
    char text[2 * (JSONDOC_MAX_DEPTH + 1) + 1];
    for (int depth = JSONDOC_MAX_DEPTH; depth <= JSONDOC_MAX_DEPTH + 1; depth++) {
        memset(text, '[', (size_t)depth);
        memset(text + depth, ']', (size_t)depth);
        text[2 * depth] = '\0';
        char err[128] = "";
        struct jd *d = jd_parse(text, strlen(text), err, sizeof err);
        if (depth == JSONDOC_MAX_DEPTH) {
            assert_non_null(d);
            jd_free(d);
        } else {
            assert_null(d);
            assert_non_null(strstr(err, "nested too deep"));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
