/* The dashboard's parts that need no terminal: the dialogs' pure parts
 * (src/ui/dialog.c: where the confirmation's buttons go in a box of any
 * width, and which item the digits typed in a numbered menu pick), and the
 * text it keeps in buffers of a fixed size (src/ui/ui.c: the status-line
 * message; src/ui/actions.c: the lines of an action's results), cut before
 * the character that does not fit whole, never inside it; and the cut of
 * a list's cell to its width (src/ui/term.c), never inside an escape. */
#include "testutil.h"

#include "ui/actions_priv.h"
#include "ui/dialog.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/escape.h"

/* Inside the box (its edge columns are margins), in order with a gap,
 * centred; full labels whenever they fit. Boxes from 12 columns (a 20x5
 * terminal gets an 18-column box) and at any offset. */
static void test_buttons_inside_the_box(void **state)
{
    (void)state;
    for (int bw = 12; bw <= 300; bw++)
        for (int bx = 0; bx <= 7; bx++) {
            struct dialog_buttons b;
            dialog_buttons(bx, bw, &b);
            int yes_w = (int)strlen(b.yes), no_w = (int)strlen(b.no);
            assert_true(b.x_yes >= bx + 1);
            assert_true(b.x_yes + yes_w < b.x_no);
            assert_true(b.x_no + no_w <= bx + bw - 1);
            assert_int_equal(b.right, bx + bw - 1);
            int left = b.x_yes - (bx + 1), right = bx + bw - 1 - (b.x_no + no_w);
            assert_true(left - right <= 1 && right - left <= 1);
            if (bw >= 2 + 15) /* "[ Yes ]  [ No ]" */
                assert_string_equal(b.yes, "[ Yes ]");
        }
}

static void test_buttons_at_20_columns(void **state)
{
    (void)state;
    struct dialog_buttons b;
    dialog_buttons(1, 18, &b); /* the box of a 20-column terminal */
    assert_string_equal(b.yes, "[ Yes ]");
    assert_string_equal(b.no, "[ No ]");
    assert_int_equal(b.x_yes, 2);
    assert_int_equal(b.x_no, 11);
}

/* The signal menu's numbers, in its order. */
static const int sigs[] = {15, 9, 2, 1, 17};

static int pick(const char *typed, int *hl)
{
    return dialog_number_pick(sigs, 5, typed, hl);
}

static void test_number_pick(void **state)
{
    (void)state;
    int hl;
    assert_int_equal(pick("2", &hl), 2); /* " 2 INT", the third line */
    assert_int_equal(pick("9", &hl), 1);
    assert_int_equal(pick("15", &hl), 0);
    assert_int_equal(pick("17", &hl), 4);
    /* 1 is HUP, and the start of 15 and 17: nothing yet, HUP selected. */
    assert_int_equal(pick("1", &hl), -1);
    assert_int_equal(hl, 3);
    /* No line prints 3, 5 or 19: nothing, nothing selected. */
    assert_int_equal(pick("3", &hl), -1);
    assert_int_equal(hl, -1);
    assert_int_equal(pick("5", &hl), -1);
    assert_int_equal(pick("19", &hl), -1);
    assert_int_equal(hl, -1);
    /* An item that prints no number is never typed. */
    const int some[] = {0, 4};
    assert_int_equal(dialog_number_pick(some, 2, "0", &hl), -1);
    assert_int_equal(dialog_number_pick(some, 2, "4", &hl), 1);
}

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

/* A cell cut to its width ends between two of esc_term's escapes, never
 * inside one: a name shows no "\x" before its ellipsis. */
static void test_cell_cut_between_escapes(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b);
    esc_term(&b, "ab\xff\xfe\\c\n\x1b[2J\xe2\x80\xaez", 0);
    const char *shown = "ab\\xff\\xfe\\\\c\\n\\e[2J\\u{202e}z";
    assert_string_equal(b.data, shown);
    /* Where a cut may fall: between two characters or escapes. */
    static const size_t ends[] = {0, 1, 2, 6, 10, 12, 13, 15, 17, 18, 19, 20, 28, 29};
    size_t k = 0;
    for (int w = 0; w <= 32; w++) {
        while (k + 1 < sizeof(ends) / sizeof(ends[0]) && ends[k + 1] <= (size_t)w)
            k++;
        if (term_fit(shown, w) != ends[k])
            fail_msg("%d columns: a cut after %zu bytes, not %zu", w, term_fit(shown, w), ends[k]);
    }
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buttons_inside_the_box),
        cmocka_unit_test(test_buttons_at_20_columns),
        cmocka_unit_test(test_number_pick),
        cmocka_unit_test(test_message_cut_between_characters),
        cmocka_unit_test(test_action_line_cut_between_characters),
        cmocka_unit_test(test_short_text_whole),
        cmocka_unit_test(test_cell_cut_between_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
