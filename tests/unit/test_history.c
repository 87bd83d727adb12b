#include <math.h>

#include "testutil.h"
#include "model/history.h"

#define MiB (1024ull * 1024ull)

static void test_ring_keeps_newest(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 4);
    for (int i = 0; i < 10; i++)
        history_add(&h, "/dev/shm", i, (uint64_t)i * MiB, 64 * MiB);
    const struct history_series *s = history_find(&h, "/dev/shm");
    assert_non_null(s);
    assert_int_equal(s->count, 4);
    assert_true(history_at(s, 0)->t == 6);
    assert_true(history_last(s)->t == 9);
    assert_int_equal(history_last(s)->used, 9 * MiB);
    assert_null(history_at(s, 4));
    assert_null(history_find(&h, "/run/shm"));
    history_free(&h);
}

static void test_time_never_runs_backwards(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 8);
    history_add(&h, "m", 10, 1, 100);
    history_add(&h, "m", 5, 7, 100); /* older: replaces the newest, keeps its time */
    const struct history_series *s = history_find(&h, "m");
    assert_int_equal(s->count, 1);
    assert_true(history_last(s)->t == 10);
    assert_int_equal(history_last(s)->used, 7);
    history_free(&h);
}

static void test_series_are_separate(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 8);
    history_add(&h, "a", 1, 10, 100);
    history_add(&h, "b", 1, 20, 100);
    history_add(&h, "a", 2, 30, 100);
    assert_int_equal(history_find(&h, "a")->count, 2);
    assert_int_equal(history_find(&h, "b")->count, 1);
    assert_int_equal(history_last(history_find(&h, "b"))->used, 20);
    history_free(&h);
}

static void test_peak(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 3);
    history_add(&h, "m", 1, 5 * MiB, 64 * MiB);
    history_add(&h, "m", 2, 40 * MiB, 64 * MiB);
    history_add(&h, "m", 3, 10 * MiB, 64 * MiB);
    history_add(&h, "m", 4, 11 * MiB, 64 * MiB);
    history_add(&h, "m", 5, 12 * MiB, 64 * MiB);
    const struct history_series *s = history_find(&h, "m");
    /* The peak outlives the sample it came from. */
    assert_int_equal(s->peak, 40 * MiB);
    history_free(&h);
}

static void test_rate_rising_and_falling(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 100);
    /* 1 MiB per second for 20 s, sampled twice a second. */
    for (int i = 0; i <= 40; i++)
        history_add(&h, "m", i * 0.5, (uint64_t)(i * 0.5 * MiB), 64 * MiB);
    const struct history_series *s = history_find(&h, "m");
    double r;
    assert_true(history_rate(s, 10, &r));
    assert_true(fabs(r - (double)MiB) < 1);
    double ttf;
    assert_true(history_time_to_full(s, 10, 1024, &ttf));
    assert_true(fabs(ttf - 44.0) < 0.01); /* 20 MiB used, 44 MiB left at 1 MiB/s */
    /* Then falling by 2 MiB per second: the rate follows the window. */
    for (int i = 1; i <= 10; i++)
        history_add(&h, "m", 20 + i, (uint64_t)(20 - 2 * i) * MiB, 64 * MiB);
    s = history_find(&h, "m");
    assert_true(history_rate(s, 5, &r));
    assert_true(fabs(r + 2.0 * (double)MiB) < 1);
    assert_false(history_time_to_full(s, 5, 1024, &ttf));
    history_free(&h);
}

static void test_rate_needs_two_samples(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 10);
    double r = 123, ttf;
    assert_false(history_rate(NULL, 10, &r));
    history_add(&h, "m", 1, 10, 100);
    const struct history_series *s = history_find(&h, "m");
    assert_false(history_rate(s, 10, &r));
    /* A second sample outside the window does not count either. */
    history_add(&h, "m", 100, 20, 100);
    s = history_find(&h, "m");
    assert_false(history_rate(s, 10, &r));
    assert_true(r == 123);
    assert_false(history_time_to_full(s, 10, 0, &ttf));
    history_free(&h);
}

static void test_flat_is_not_rising(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 10);
    for (int i = 0; i < 5; i++)
        history_add(&h, "m", i, 8 * MiB, 64 * MiB);
    const struct history_series *s = history_find(&h, "m");
    double r, ttf;
    assert_true(history_rate(s, 10, &r));
    assert_true(fabs(r) < 1e-6);
    assert_false(history_time_to_full(s, 10, 1, &ttf));
    /* Rising, but slower than min_rate: not reported. */
    history_add(&h, "m", 5, 8 * MiB + 100, 64 * MiB);
    assert_false(history_time_to_full(history_find(&h, "m"), 10, 4096, &ttf));
    history_free(&h);
}

static void test_full_mount_has_zero_time_left(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 10);
    history_add(&h, "m", 0, 60 * MiB, 64 * MiB);
    history_add(&h, "m", 1, 64 * MiB, 64 * MiB);
    double ttf = -1;
    assert_true(history_time_to_full(history_find(&h, "m"), 10, 1, &ttf));
    assert_true(ttf == 0);
    history_free(&h);
}

/* The dashboard's windows: the rate over 10 s, the time to full over 30 s. */
static void trend(struct history *h, struct history_trend *t)
{
    history_trend(history_find(h, "m"), 10, 30, 4096, t);
}

static void test_trend_full_in_only_while_rising(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 200);
    struct history_trend t;
    /* 1 MiB per second for 20 s: rising over both windows. */
    for (int i = 0; i <= 20; i++)
        history_add(&h, "m", i, (uint64_t)i * MiB, 64 * MiB);
    trend(&h, &t);
    assert_true(t.has_rate && t.has_ttf);
    assert_true(fabs(t.rate - (double)MiB) < 1);
    /* Then steady for 12 s: the 30 s window still rises, the gauge says
     * "steady" and so no time to full. */
    for (int i = 1; i <= 12; i++)
        history_add(&h, "m", 20 + i, 20 * MiB, 64 * MiB);
    trend(&h, &t);
    assert_true(t.has_rate);
    assert_true(fabs(t.rate) < 1024);
    assert_false(t.has_ttf);
    /* Then falling: the rate says so, and no time to full either. */
    for (int i = 1; i <= 12; i++)
        history_add(&h, "m", 32 + i, (uint64_t)(20 - i) * MiB, 64 * MiB);
    trend(&h, &t);
    assert_true(t.has_rate && t.rate < 0);
    assert_false(t.has_ttf);
    /* Rising again, but the 30 s window still falls: no time to full until
     * both agree. */
    for (int i = 1; i <= 10; i++)
        history_add(&h, "m", 44 + i, (uint64_t)(8 + i) * MiB, 64 * MiB);
    trend(&h, &t);
    assert_true(t.has_rate && t.rate > 4096);
    assert_false(t.has_ttf);
    for (int i = 11; i <= 40; i++)
        history_add(&h, "m", 44 + i, (uint64_t)(8 + i) * MiB, 64 * MiB);
    trend(&h, &t);
    assert_true(t.has_ttf);
    assert_true(fabs(t.ttf_s - 16.0) < 0.01); /* 48 MiB used, 16 left at 1 MiB/s */
    history_free(&h);
}

static void test_sparkline(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 100);
    /* Samples at t = 10, 20, 30, 40 (fill 10%, 50%, 20%, 100%). */
    history_add(&h, "m", 10, 10, 100);
    history_add(&h, "m", 20, 50, 100);
    history_add(&h, "m", 30, 20, 100);
    history_add(&h, "m", 40, 100, 100);
    const struct history_series *s = history_find(&h, "m");
    double c[8];
    /* Window [0, 40], 5 s per cell. */
    history_sparkline(s, 40, 40, c, 8);
    assert_true(c[0] == -1);  /* before the first sample */
    assert_true(c[1] == -1);
    assert_true(c[2] == 0.1); /* t = 10 */
    assert_true(c[3] == 0.1); /* carried */
    assert_true(c[4] == 0.5);
    assert_true(c[5] == 0.5);
    assert_true(c[6] == 0.2);
    assert_true(c[7] == 1.0); /* t = 40 lands in the last cell */
    /* Two samples in one cell (t = 20 and 30): the higher one shows. */
    history_sparkline(s, 35, 35, c, 2);
    assert_true(c[0] == 0.1);
    assert_true(c[1] == 0.5);
    /* A window that starts after some samples carries the one before it, and
     * invents nothing after the newest. */
    history_sparkline(s, 60, 20, c, 4);
    assert_true(c[0] == 1.0);
    assert_true(c[1] == -1);
    assert_true(c[3] == -1);
    history_sparkline(s, 35, 10, c, 2); /* cells [25, 30) and [30, 35] */
    assert_true(c[0] == 0.5);          /* t = 20, carried into the window */
    assert_true(c[1] == 0.2);
    history_free(&h);
}

static void test_sparkline_unknown_size(void **state)
{
    (void)state;
    struct history h;
    history_init(&h, 4);
    history_add(&h, "m", 1, 10, 0);
    double c[2];
    history_sparkline(history_find(&h, "m"), 1, 2, c, 2);
    assert_true(c[1] == 0);
    history_free(&h);
}

static void test_level(void **state)
{
    (void)state;
    assert_int_equal(history_level(-1, 8), 0);
    assert_int_equal(history_level(0, 8), 0);
    assert_int_equal(history_level(0.001, 8), 1); /* any use shows */
    assert_int_equal(history_level(0.5, 8), 4);
    assert_int_equal(history_level(0.99, 8), 7);
    assert_int_equal(history_level(1, 8), 7);
    assert_int_equal(history_level(2, 8), 7);
    assert_int_equal(history_level(0.5, 1), 0);
}

static void test_oom_watch(void **state)
{
    (void)state;
    struct oom_watch w = {0};
    /* The first count is the baseline, however high: kills from before. */
    assert_int_equal(oom_watch_add(&w, 10, true, 5), 0);
    assert_int_equal(oom_watch_recent(&w, 10), 0);
    assert_int_equal(oom_watch_add(&w, 12, true, 5), 0);
    /* A rise is new: recent until OOM_RECENT_S have passed. */
    assert_int_equal(oom_watch_add(&w, 14, true, 7), 2);
    assert_int_equal(oom_watch_recent(&w, 14), 2);
    assert_int_equal(oom_watch_add(&w, 16, true, 8), 1);
    assert_int_equal(oom_watch_recent(&w, 16), 3); /* close rises add up */
    assert_int_equal(oom_watch_add(&w, 16 + OOM_RECENT_S - 1, true, 8), 0);
    assert_int_equal(oom_watch_recent(&w, 16 + OOM_RECENT_S - 1), 3);
    assert_int_equal(oom_watch_recent(&w, 16 + OOM_RECENT_S), 0);
    /* After a quiet spell a rise starts a new count. */
    assert_int_equal(oom_watch_add(&w, 200, true, 9), 1);
    assert_int_equal(oom_watch_recent(&w, 200), 1);
    /* A count that falls (another cgroup) or turns unknown only resets the baseline. */
    struct oom_watch v = {0};
    oom_watch_add(&v, 1, true, 4);
    assert_int_equal(oom_watch_add(&v, 2, true, 1), 0);
    assert_int_equal(oom_watch_add(&v, 3, false, 0), 0);
    assert_int_equal(oom_watch_add(&v, 4, true, 6), 0);
    assert_int_equal(oom_watch_recent(&v, 4), 0);
    assert_int_equal(oom_watch_add(&v, 5, true, 7), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_keeps_newest),
        cmocka_unit_test(test_time_never_runs_backwards),
        cmocka_unit_test(test_series_are_separate),
        cmocka_unit_test(test_peak),
        cmocka_unit_test(test_rate_rising_and_falling),
        cmocka_unit_test(test_rate_needs_two_samples),
        cmocka_unit_test(test_flat_is_not_rising),
        cmocka_unit_test(test_full_mount_has_zero_time_left),
        cmocka_unit_test(test_trend_full_in_only_while_rising),
        cmocka_unit_test(test_sparkline),
        cmocka_unit_test(test_sparkline_unknown_size),
        cmocka_unit_test(test_level),
        cmocka_unit_test(test_oom_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
