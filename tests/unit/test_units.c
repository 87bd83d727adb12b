#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    /* 2^64 bytes and more are sizes too large, not junk. */
    assert_true(parse_size("16777215t", &v) && !units_too_large("16777215t"));
    assert_true(!parse_size("16777216t", &v) && units_too_large("16777216t"));
    assert_true(units_too_large("18446744073709551615"));
    assert_false(units_too_large("12q") || units_too_large("-1m") || units_too_large("1e30"));
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
    assert_true(parse_duration("1.5h", &d));
    assert_true(d == 5400.0);
    assert_true(parse_duration("1d", &d));
    assert_true(d == 86400.0);
    /* Plain decimal only: strtod's hexadecimal, exponents, infinity and
     * signs are no duration any document names. */
    assert_false(parse_duration("0x10", &d));
    assert_false(parse_duration("1e1", &d));
    assert_false(parse_duration("1E1s", &d));
    assert_false(parse_duration("0x1p4", &d));
    assert_false(parse_duration("inf", &d));
    assert_false(parse_duration("+3", &d));
    assert_false(parse_duration("1.", &d));
    assert_false(parse_duration(".5", &d));
    assert_false(parse_duration("", &d));
    char big[320]; /* 1 and 305 zeros days: a finite number, an infinite duration */
    memset(big, '0', sizeof(big));
    big[0] = '1';
    big[306] = 'd';
    big[307] = '\0';
    assert_false(parse_duration(big, &d));
    uint64_t v;
    assert_false(parse_size("1e3k", &v));
    assert_false(parse_size("0x10g", &v));
    assert_true(parse_size("1.5k", &v));
    assert_true(v == 1536);
}

/* The refusals that are the number's form, not its value or unit. */
static void test_units_not_plain(void **state)
{
    (void)state;
    static const char *const not_plain[] = {"1e1",   "1E3",   "1e1s", "5e-1", "0x10",
                                            "0x3cm", "0x1p4", "2.",   "2.s",  "1.e5"};
    for (size_t i = 0; i < sizeof(not_plain) / sizeof(not_plain[0]); i++)
        if (!units_not_plain(not_plain[i]))
            fail_msg("'%s' is plain decimal", not_plain[i]);
    static const char *const other[] = {"2",  "0.5s", "10m", "2x",   "1e", "0x", "-3s",
                                        "+3", ".5",   "inf", "soon", "",   NULL};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        if (units_not_plain(other[i]))
            fail_msg("'%s' is called no plain decimal", other[i] ? other[i] : "NULL");
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
    /* A sign is refused as sizes and durations refuse it; only a minus
     * makes a negative number. */
    assert_false(parse_int("+5", 0, 100, &v));
    assert_false(parse_int("+", 0, 100, &v));
    assert_false(parse_int("-", -100, 100, &v));
    assert_false(parse_int("--5", -100, 100, &v));
    assert_false(parse_int("-+5", -100, 100, &v));
    assert_false(parse_int("", 0, 100, &v));
    assert_true(parse_int("-5", -100, 100, &v));
    assert_int_equal(v, -5);
}

static void test_fmt(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(fmt_size(b, sizeof(b), 512), "512 B");
    assert_string_equal(fmt_size(b, sizeof(b), 67108864), "64.0 MiB");
    assert_string_equal(fmt_size(b, sizeof(b), 1610612736ull), "1.5 GiB");
    assert_string_equal(fmt_size(b, sizeof(b), 200ull << 20), "200 MiB");
    assert_string_equal(fmt_size_of(b, sizeof(b), 64ull << 20, 64ull << 20), "64.0 of 64.0 MiB");
    assert_string_equal(fmt_size_of(b, sizeof(b), 900 * 1024, 64ull << 20), "900 KiB of 64.0 MiB");
    assert_string_equal(fmt_size_of(b, sizeof(b), 0, 64ull << 20), "0 B of 64.0 MiB");
    assert_string_equal(fmt_size_of(b, sizeof(b), 512, 900), "512 B of 900 B");
    assert_string_equal(fmt_duration(b, sizeof(b), 5), "5s");
    assert_string_equal(fmt_duration(b, sizeof(b), 245), "4m05s");
    assert_string_equal(fmt_duration(b, sizeof(b), 7800), "2h10m");
    assert_string_equal(fmt_duration(b, sizeof(b), 90000), "1d1h");
}

/* A duration beyond 64 bits of seconds (clean --min-age 52 and 50 zeros) saturates
 * instead of converting out of range (found by fuzzing). */
static void test_fmt_duration_huge(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(fmt_duration(b, sizeof(b), 5.2e51), "213503982334601d7h");
    assert_string_equal(fmt_duration(b, sizeof(b), 18446744073709551616.0), "213503982334601d7h");
    double d;
    assert_true(parse_duration("52" "00000000000000000000000000000000000000000000000000", &d));
    assert_string_equal(fmt_duration(b, sizeof(b), d), "213503982334601d7h");
}

/* fmt_duration as it was written with snprintf: the oracle of its text and
 * of how a small buffer cuts it. */
static void duration_by_snprintf(char *dst, size_t n, double seconds)
{
    if (!(seconds >= 0))
        seconds = 0;
    unsigned long long s =
        seconds >= 18446744073709551616.0 ? ULLONG_MAX : (unsigned long long)seconds;
    if (s < 60)
        snprintf(dst, n, "%llus", s);
    else if (s < 3600)
        snprintf(dst, n, "%llum%02llus", s / 60, s % 60);
    else if (s < 86400)
        snprintf(dst, n, "%lluh%02llum", s / 3600, (s % 3600) / 60);
    else
        snprintf(dst, n, "%llud%lluh", s / 86400, (s % 86400) / 3600);
}

/* Every buffer size from 0 to past the text: the same bytes as snprintf
 * wrote, nothing written beyond n, and dst returned. */
static void check_duration(double seconds, const char *want)
{
    char b[40];
    assert_string_equal(fmt_duration(b, sizeof(b), seconds), want);
    for (size_t n = 0; n <= strlen(want) + 2; n++) {
        char got[40], ref[40];
        memset(got, '#', sizeof(got));
        memset(ref, '#', sizeof(ref));
        duration_by_snprintf(ref, n, seconds);
        assert_ptr_equal(fmt_duration(got, n, seconds), got);
        assert_memory_equal(got, ref, sizeof(got));
    }
}

static void test_fmt_duration_edges(void **state)
{
    (void)state;
    check_duration(0, "0s");
    check_duration(0.999, "0s");
    check_duration(1, "1s");
    check_duration(9, "9s");
    check_duration(10, "10s");
    check_duration(59, "59s");
    check_duration(59.99, "59s");
    check_duration(60, "1m00s");
    check_duration(61, "1m01s");
    check_duration(599, "9m59s");
    check_duration(600, "10m00s");
    check_duration(3599, "59m59s");
    check_duration(3600, "1h00m");
    check_duration(3659, "1h00m");
    check_duration(3660, "1h01m");
    check_duration(36000, "10h00m");
    check_duration(86399, "23h59m");
    check_duration(86400, "1d0h");
    check_duration(86400 + 3599, "1d0h");
    check_duration(86400 + 3600, "1d1h");
    check_duration(863999, "9d23h");
    check_duration(864000, "10d0h");
    check_duration(1e15, "11574074074d1h");
    /* The largest double below 2^64. */
    check_duration(18446744073709549568.0, "213503982334601d6h");
    check_duration(1e300, "213503982334601d7h");
    check_duration(INFINITY, "213503982334601d7h");
    check_duration(-1, "0s");
    check_duration(-1e300, "0s");
    check_duration(-INFINITY, "0s");
    check_duration(NAN, "0s");
    char b[4] = "abc";
    assert_ptr_equal(fmt_duration(NULL, 0, 5), NULL); /* n 0: dst is not touched */
    assert_ptr_equal(fmt_duration(b, 0, 5), b);
    assert_string_equal(b, "abc");
}

/* Every second of the first two days and a spread up to 2^64, against
 * snprintf. */
static void test_fmt_duration_spread(void **state)
{
    (void)state;
    char got[40], ref[40];
    for (unsigned s = 0; s <= 2 * 86400; s++) {
        fmt_duration(got, sizeof(got), s);
        duration_by_snprintf(ref, sizeof(ref), s);
        assert_string_equal(got, ref);
    }
    for (double d = 1; d < 2e19; d *= 1.37) {
        fmt_duration(got, sizeof(got), d);
        duration_by_snprintf(ref, sizeof(ref), d);
        assert_string_equal(got, ref);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_units_not_plain),
        cmocka_unit_test(test_parse_int),
        cmocka_unit_test(test_fmt_duration_huge),
        cmocka_unit_test(test_fmt_duration_edges),
        cmocka_unit_test(test_fmt_duration_spread),
        cmocka_unit_test(test_fmt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
