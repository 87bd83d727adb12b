#include "testutil.h"
#include "util/units.h"

static void test_parse_size(void **state)
{
    (void)state;
    uint64_t v;
    assert_true(parse_size("64m", &v));
    assert_int_equal(v, 67108864);
    assert_true(parse_size("64MiB", &v));
    assert_int_equal(v, 67108864);
    assert_true(parse_size("2G", &v));
    assert_int_equal(v, 2147483648ull);
    assert_true(parse_size("1.5g", &v));
    assert_int_equal(v, 1610612736ull);
    assert_true(parse_size("512Mi", &v));
    assert_int_equal(v, 536870912);
    assert_true(parse_size("4096", &v));
    assert_int_equal(v, 4096);
    assert_false(parse_size("-1m", &v));
    assert_false(parse_size("12q", &v));
    assert_false(parse_size("", &v));
    assert_false(parse_size("99999999999999999999999t", &v));
}

static void test_parse_duration(void **state)
{
    (void)state;
    double d;
    assert_true(parse_duration("10m", &d));
    assert_true(d == 600.0);
    assert_true(parse_duration("500ms", &d));
    assert_true(d == 0.5);
    assert_true(parse_duration("2", &d));
    assert_true(d == 2.0);
    assert_false(parse_duration("2x", &d));
    assert_false(parse_duration("-3s", &d));
    assert_false(parse_duration("1e308d", &d)); /* finite number, infinite duration */
}

static void test_parse_int(void **state)
{
    (void)state;
    long long v;
    assert_true(parse_int("42", 0, 100, &v));
    assert_int_equal(v, 42);
    assert_false(parse_int("101", 0, 100, &v));
    assert_false(parse_int("4 2", 0, 100, &v));
    assert_false(parse_int(" 4", 0, 100, &v));
}

static void test_fmt(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(fmt_size(b, sizeof(b), 512), "512 B");
    assert_string_equal(fmt_size(b, sizeof(b), 67108864), "64.0 MiB");
    assert_string_equal(fmt_size(b, sizeof(b), 1610612736ull), "1.5 GiB");
    assert_string_equal(fmt_size(b, sizeof(b), 200ull << 20), "200 MiB");
    assert_string_equal(fmt_duration(b, sizeof(b), 5), "5s");
    assert_string_equal(fmt_duration(b, sizeof(b), 245), "4m05s");
    assert_string_equal(fmt_duration(b, sizeof(b), 7800), "2h10m");
    assert_string_equal(fmt_duration(b, sizeof(b), 90000), "1d1h");
}

/* A duration beyond 64 bits of seconds (clean --min-age 52E50) saturates
 * instead of converting out of range (found by fuzzing). */
static void test_fmt_duration_huge(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(fmt_duration(b, sizeof(b), 5.2e51), "213503982334601d7h");
    assert_string_equal(fmt_duration(b, sizeof(b), 18446744073709551616.0), "213503982334601d7h");
    double d;
    assert_true(parse_duration("52E50", &d));
    assert_string_equal(fmt_duration(b, sizeof(b), d), "213503982334601d7h");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_int),
        cmocka_unit_test(test_fmt_duration_huge),
        cmocka_unit_test(test_fmt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
