/* util/rfc3339.c: the one writer and reader of RFC 3339 times. */
#include "testutil.h"
#include "util/rfc3339.h"

static void test_parse(void **state)
{
    (void)state;
    double t;
    assert_true(rfc3339_parse("2026-12-05T03:12:07Z", &t));
    assert_true(t == 1796440327.0);
    assert_true(rfc3339_parse("2026-12-05T03:12:07.250Z", &t));
    assert_true(t == 1796440327.25);
    assert_true(rfc3339_parse("2026-12-05T05:12:07+02:00", &t));
    assert_true(t == 1796440327.0);
    assert_true(rfc3339_parse("2026-12-05T01:12:07-02:00", &t));
    assert_true(t == 1796440327.0);
    assert_true(rfc3339_parse("1970-01-01T00:00:00Z", &t) && t == 0);
    assert_true(rfc3339_parse("2000-02-29T00:00:00Z", &t) && t == 951782400.0);
    assert_true(rfc3339_parse("1969-12-31T23:59:59Z", &t) && t == -1);
    assert_false(rfc3339_parse("2026-12-05T03:12:07", &t));
    assert_false(rfc3339_parse("2026-13-05T03:12:07Z", &t));
    /* Days the month has not; February 29th of a leap year only. */
    assert_false(rfc3339_parse("2026-02-31T03:12:07Z", &t));
    assert_false(rfc3339_parse("2026-04-31T03:12:07Z", &t));
    assert_false(rfc3339_parse("2026-02-29T03:12:07Z", &t));
    assert_false(rfc3339_parse("1900-02-29T03:12:07Z", &t));
    assert_true(rfc3339_parse("2024-02-29T00:00:00Z", &t));
    assert_true(t == 1709164800.0);
    assert_true(rfc3339_parse("2000-02-29T00:00:00Z", &t));
    assert_true(rfc3339_parse("2026-12-31T23:59:59Z", &t));
    assert_false(rfc3339_parse("2026-12-05T24:12:07Z", &t));
    assert_false(rfc3339_parse("2026-12-05T03:12:07.Z", &t));
    assert_false(rfc3339_parse("2026-12-05T03:12:07Zjunk", &t));
    assert_false(rfc3339_parse("2026-12-05T03:12:07+0200", &t));
    assert_false(rfc3339_parse("yesterday", &t));
    assert_false(rfc3339_parse("", &t));
    assert_false(rfc3339_parse(NULL, &t));
}

static void test_format(void **state)
{
    (void)state;
    char b[RFC3339_LEN];
    assert_string_equal(rfc3339_format(b, sizeof(b), 1796440327.0), "2026-12-05T03:12:07Z");
    assert_string_equal(rfc3339_format(b, sizeof(b), 1796440327.25), "2026-12-05T03:12:07.250Z");
    assert_string_equal(rfc3339_format(b, sizeof(b), 0), "1970-01-01T00:00:00Z");
    assert_string_equal(rfc3339_format(b, sizeof(b), -0.5), "1969-12-31T23:59:59.500Z");
    /* To the nearest millisecond, carried into the seconds. */
    assert_string_equal(rfc3339_format(b, sizeof(b), 1796440327.9996), "2026-12-05T03:12:08Z");
    assert_string_equal(rfc3339_format(b, sizeof(b), 1796440327.0004), "2026-12-05T03:12:07Z");
    /* Four digits of year, as the parser reads them back (a file's mtime
     * can be set to any year). */
    assert_string_equal(rfc3339_format(b, sizeof(b), -59042995200.0), "0099-01-01T00:00:00Z");
    double t;
    assert_true(rfc3339_parse(b, &t));
    assert_true(t == -59042995200.0);
}

/* Every millisecond of a second is read and written back as it was. */
static void test_round_trip(void **state)
{
    (void)state;
    for (int ms = 1; ms < 1000; ms++) {
        char text[RFC3339_LEN], back[RFC3339_LEN];
        snprintf(text, sizeof(text), "2026-12-05T03:12:07.%03dZ", ms);
        double t;
        assert_true(rfc3339_parse(text, &t));
        assert_string_equal(rfc3339_format(back, sizeof(back), t), text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
