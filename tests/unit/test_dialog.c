/* The dialogs' pure parts (src/ui/dialog.c): where the confirmation's
 * buttons go in a box of any width, and which item the digits typed in a
 * numbered menu pick. No terminal is involved. */
#include "testutil.h"

#include "ui/dialog.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buttons_inside_the_box),
        cmocka_unit_test(test_buttons_at_20_columns),
        cmocka_unit_test(test_number_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
