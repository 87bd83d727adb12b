/* The times replay takes (store/when.c): RFC 3339, a time of today in
 * local time, a duration ago; anything else refused. */
#include <time.h>

#include "testutil.h"
#include "store/when.h"

static void test_forms(void **state)
{
    (void)state;
    setenv("TZ", "Europe/Berlin", 1);
    tzset();
    double now = 1796440327.5; /* 2026-12-05T03:12:07.5Z, 04:12:07 in Berlin */
    double t;
    assert_true(when_parse("2026-12-05T03:12:07Z", now, &t));
    assert_true(t == 1796440327);
    assert_true(when_parse("2026-12-05T04:12:07.25+01:00", now, &t));
    assert_true(t == 1796440327.25);
    assert_true(when_parse("-10m", now, &t));
    assert_true(t == now - 600);
    assert_true(when_parse("-90", now, &t));
    assert_true(t == now - 90);
    assert_true(when_parse("-0s", now, &t));
    assert_true(t == now);
    assert_true(when_parse("04:00", now, &t)); /* local: 03:00Z */
    assert_true(t == 1796440327 - 12 * 60 - 7);
    assert_true(when_parse("04:12:07", now, &t));
    assert_true(t == 1796440327);
    assert_true(when_parse("23:59:59", now, &t)); /* later today: still today */
    assert_true(t > now);
    unsetenv("TZ");
    tzset();
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "soon", "25:00", "12:60", "4:00", "04:00:60", "04:00:0", "04 00", "-", "--5m",
        "-5 m", "-5x", "+5m", "2026-12-05", "2026-12-05T03:12", "2026-13-05T03:12:07Z",
        "2026-12-05T03:12:07", "12:00junk", "-1e3",
        "-99999999999999999999999s", /* before year 0000, past a time_t */
    };
    double t;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (when_parse(bad[i], 1796440327, &t))
            fail_msg("'%s' was taken as a time", bad[i]);
    assert_false(when_parse(NULL, 0, &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
