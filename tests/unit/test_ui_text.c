/* Text the dashboard keeps in buffers of a fixed size (src/ui/ui.c: the
 * status-line message; src/ui/actions.c: the lines of an action's results):
 * text too long for the buffer is cut before the character that does not
 * fit whole, never inside it. No terminal is involved. */
#include "testutil.h"

#include "ui/actions_priv.h"
#include "ui/ui_priv.h"
#include "util/escape.h"

/* A text of pad ASCII bytes, then the character ch over and over, longer
 * than any buffer here. */
static char *long_text(size_t pad, const char *ch)
{
    size_t n = 1200, k = strlen(ch);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, 'a', pad);
    size_t len = pad;
    while (len + k <= n) {
        memcpy(s + len, ch, k);
        len += k;
    }
    s[len] = '\0';
    return s;
}

/* got is text cut to fit in size bytes: the longest start of text that
 * fits and ends at a character boundary, all of it valid UTF-8. */
static void assert_cut(const char *got, const char *text, size_t size)
{
    size_t want = utf8_cut(text, size - 1);
    assert_int_equal(strlen(got), want);
    assert_memory_equal(got, text, want);
    for (size_t i = 0; i < want;) {
        size_t k = utf8_valid_len((const unsigned char *)got + i, want - i);
        assert_int_not_equal(k, 0);
        i += k;
    }
}

/* "é", "€" and "😀" (two, three and four bytes) straddling the cut at each
 * of their inner bytes, and ending right at it. */
static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};

static void test_message_cut_between_characters(void **state)
{
    (void)state;
    struct ui *u = calloc(1, sizeof(*u));
    assert_non_null(u);
    for (size_t c = 0; c < sizeof(chars) / sizeof(chars[0]); c++)
        for (size_t back = 0; back <= 4; back++) {
            char *text = long_text(sizeof(u->message) - 1 - back, chars[c]);
            ui_message(u, 0, "%s", text);
            assert_cut(u->message, text, sizeof(u->message));
            free(text);
        }
    free(u);
}

static void test_action_line_cut_between_characters(void **state)
{
    (void)state;
    const size_t size = 512; /* actions_line's buffer */
    for (size_t c = 0; c < sizeof(chars) / sizeof(chars[0]); c++)
        for (size_t back = 0; back <= 4; back++) {
            char *text = long_text(size - 1 - back, chars[c]);
            struct actions_lines l = {0};
            actions_line(&l, "%s", text);
            assert_int_equal(l.n, 1);
            assert_cut(l.v[0], text, size);
            actions_lines_free(&l);
            free(text);
        }
}

/* Text that fits is kept whole. */
static void test_short_text_whole(void **state)
{
    (void)state;
    struct ui *u = calloc(1, sizeof(*u));
    assert_non_null(u);
    ui_message(u, 0, "%s: %d", "caf\xc3\xa9 \xe2\x82\xac", 42);
    assert_string_equal(u->message, "caf\xc3\xa9 \xe2\x82\xac: 42");
    free(u);
    struct actions_lines l = {0};
    actions_line(&l, "%s|", "\xf0\x9f\x98\x80");
    assert_string_equal(l.v[0], "\xf0\x9f\x98\x80|");
    actions_lines_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_cut_between_characters),
        cmocka_unit_test(test_action_line_cut_between_characters),
        cmocka_unit_test(test_short_text_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
