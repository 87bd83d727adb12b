#include <stdio.h>

#include "testutil.h"
#include "report/jsonw.h"
#include "util/escape.h"

static char *json_of(const char *s)
{
    struct buf b;
    buf_init(&b);
    esc_json(&b, s);
    return buf_steal(&b);
}

/* esc_term of s gives want. */
static void assert_term(const char *s, int ascii, const char *want)
{
    struct buf b;
    buf_init(&b);
    esc_term(&b, s, ascii);
    assert_string_equal(b.data ? b.data : "", want);
    buf_free(&b);
}

static void test_json_plain_and_quotes(void **state)
{
    (void)state;
    char *s = json_of("torch_1_2 \"q\" \\");
    assert_string_equal(s, "\"torch_1_2 \\\"q\\\" \\\\\"");
    free(s);
}

static void test_json_controls(void **state)
{
    (void)state;
    char *s = json_of("a\nb\tc\x1b[31m\x7f");
    assert_string_equal(s, "\"a\\nb\\tc\\u001b[31m\\u007f\"");
    free(s);
}

static void test_json_invalid_utf8(void **state)
{
    (void)state;
    char *s = json_of("x\xff\xfey\xc3\xa9\xe2\x82");
    assert_string_equal(s, "\"x\\ufffd\\ufffdy\xc3\xa9\\ufffd\\ufffd\"");
    free(s);
    s = json_of("\xc0\xaf\xed\xa0\x80"); /* overlong '/', a surrogate */
    assert_string_equal(s, "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(s);
}

static void test_json_every_ascii(void **state)
{
    (void)state;
    for (int c = 1; c < 0x80; c++) {
        char in[2] = {(char)c, 0}, want[16];
        if (c == '"' || c == '\\')
            snprintf(want, sizeof(want), "\"\\%c\"", c);
        else if (c == '\n' || c == '\t' || c == '\r')
            snprintf(want, sizeof(want), "\"\\%c\"", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        else if (c < 0x20 || c == 0x7f)
            snprintf(want, sizeof(want), "\"\\u%04x\"", c);
        else
            snprintf(want, sizeof(want), "\"%c\"", c);
        char *s = json_of(in);
        assert_string_equal(s, want);
        free(s);
    }
}

static void test_json_numbers(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b);
    struct jsonw w;
    jw_init(&w, &b);
    jw_arr(&w, NULL);
    jw_u64(&w, NULL, 0);
    jw_u64(&w, NULL, UINT64_MAX);
    jw_i64(&w, NULL, -1);
    jw_i64(&w, NULL, INT64_MIN);
    jw_i64(&w, NULL, 1234567890123);
    jw_arr_end(&w);
    assert_string_equal(b.data, "[0,18446744073709551615,-1,-9223372036854775808,1234567890123]");
    buf_free(&b);
}

static void test_term(void **state)
{
    (void)state;
    assert_term("evil\x1b[2J\n\xff name\\", 0, "evil\\e[2J\\n\\xff name\\\\");
    assert_term("caf\xc3\xa9 \xc2\x9b", 0, "caf\xc3\xa9 \\u{9b}"); /* U+009B is a C1 CSI */
    assert_term("caf\xc3\xa9", 1, "caf\\u{e9}");
    /* Invisible and reordering characters are shown by number: a bidi
     * override (U+202E), zero-width spaces (U+200B), a BOM (U+FEFF), a tag
     * (U+E0041); visible ones beside them stay as they are. */
    assert_term("rtl_\xe2\x80\xaegpj.exe zw_\xe2\x80\x8bZ \xef\xbb\xbf\xf3\xa0\x81\x81 \xe2\x82\xac", 0,
                "rtl_\\u{202e}gpj.exe zw_\\u{200b}Z \\u{feff}\\u{e0041} \xe2\x82\xac");
}

/* A name's first character that a terminal draws over the cell before (a
 * combining acute, U+0301; a combining ring, U+20DD) is shown by number,
 * whatever this program's locale; after a letter it is that letter's
 * accent, shown as it is. */
static void test_term_leading_mark(void **state)
{
    (void)state;
    assert_term("\xcc\x81start", 0, "\\u{301}start");
    assert_term("\xe2\x83\x9d", 0, "\\u{20dd}");
    assert_term("e\xcc\x81\xcc\x81", 0, "e\xcc\x81\xcc\x81");
}

/* A name begins past a '/' ("NAMESPACE/NAME", a path) and past a space (a
 * sentence that names it): its leading mark there is shown by number too,
 * and so is one after an escape, which would land on the escape's last
 * character; after a letter it stays that letter's accent. */
static void test_term_mark_after_separator(void **state)
{
    (void)state;
    assert_term("probe/\xcc\x81mark", 0, "probe/\\u{301}mark");
    assert_term("the /dev/shm of \xcc\x81mark held", 0, "the /dev/shm of \\u{301}mark held");
    assert_term("a\x1b\xcc\x81 b\\\xcc\x81", 0, "a\\e\\u{301} b\\\\\\u{301}");
    assert_term("probe/e\xcc\x81", 0, "probe/e\xcc\x81");
}

/* A cut never lands inside a character: "aé€" is a, c3 a9, e2 82 ac. */
static void test_utf8_cut(void **state)
{
    (void)state;
    const char *s = "a\xc3\xa9\xe2\x82\xac";
    assert_int_equal(utf8_cut(s, 0), 0);
    assert_int_equal(utf8_cut(s, 1), 1);
    assert_int_equal(utf8_cut(s, 2), 1);
    assert_int_equal(utf8_cut(s, 3), 3);
    assert_int_equal(utf8_cut(s, 4), 3);
    assert_int_equal(utf8_cut(s, 5), 3);
    assert_int_equal(utf8_cut(s, 6), 6);
}

/* A cut of esc_term's text lands between two characters or escapes: in
 * a\u{202e}\xff€\\ they are a (1 byte), \u{202e} (8), \xff (4), € (3), \\ (2). */
static void test_esc_term_cut(void **state)
{
    (void)state;
    const char *s = "a\\u{202e}\\xff\xe2\x82\xac\\\\";
    static const size_t cuts[][2] = {/* len, the cut at or before it */
                                     {0, 0},   {1, 1},   {8, 1},   {9, 9},   {12, 9},  {13, 13},
                                     {15, 13}, {16, 16}, {17, 16}, {18, 18}, {100, 18}};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
        assert_int_equal(esc_term_cut(s, cuts[i][0]), cuts[i][1]);
}

static void test_utf8_valid_len(void **state)
{
    (void)state;
    assert_int_equal(utf8_valid_len((const unsigned char *)"a", 1), 1);
    assert_int_equal(utf8_valid_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
    assert_int_equal(utf8_valid_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
    assert_int_equal(utf8_valid_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
    assert_int_equal(utf8_valid_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_plain_and_quotes),
        cmocka_unit_test(test_json_controls),
        cmocka_unit_test(test_json_invalid_utf8),
        cmocka_unit_test(test_json_every_ascii),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_term),
        cmocka_unit_test(test_term_leading_mark),
        cmocka_unit_test(test_term_mark_after_separator),
        cmocka_unit_test(test_utf8_valid_len),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_esc_term_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
