/* The plan calculator: dtypes, shape parsing, the arithmetic of the guide's
 * examples, the fit verdicts, and every bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/capacity.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* Parses shapes and computes; returns the rc of whichever step failed. */
static int run(struct capacity_input *in, const char *shape, const char *dtype, struct capacity_result *r,
               char **cause)
{
    *cause = NULL;
    int rc = capacity_parse_shapes(shape, dtype, in, cause);
    if (rc < 0)
        return rc;
    return capacity_compute(in, r, cause);
}

static void test_dtypes(void **state)
{
    (void)state;
    static const struct {
        const char *name, *canonical;
        unsigned size;
    } cases[] = {
        {"float32", "float32", 4}, {"float", "float32", 4},     {"float64", "float64", 8},
        {"double", "float64", 8},  {"float16", "float16", 2},   {"half", "float16", 2},
        {"bfloat16", "bfloat16", 2}, {"uint8", "uint8", 1},     {"int8", "int8", 1},
        {"int16", "int16", 2},     {"int32", "int32", 4},       {"int", "int32", 4},
        {"int64", "int64", 8},     {"long", "int64", 8},        {"bool", "bool", 1},
        {"torch.float16", "float16", 2}, {"FLOAT32", "float32", 4},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *c = NULL;
        unsigned s = 0;
        assert_true(capacity_dtype(cases[i].name, &c, &s));
        assert_string_equal(c, cases[i].canonical);
        assert_int_equal(s, cases[i].size);
    }
    const char *c;
    unsigned s;
    assert_false(capacity_dtype("float33", &c, &s));
    assert_false(capacity_dtype("", &c, &s));
    assert_false(capacity_dtype("torch.", &c, &s));
}

static void test_parse_shapes(void **state)
{
    (void)state;
    struct capacity_input in = {0};
    char *cause = NULL;
    assert_int_equal(capacity_parse_shapes("3x224x224,1:int64", "float16", &in, &cause), 0);
    assert_int_equal(in.ntensors, 2);
    assert_int_equal(in.tensors[0].ndims, 3);
    assert_int_equal(in.tensors[0].dims[0], 3);
    assert_int_equal(in.tensors[0].dims[1], 224);
    assert_int_equal(in.tensors[0].dims[2], 224);
    assert_string_equal(in.tensors[0].dtype, "float16");
    assert_int_equal(in.tensors[0].elem_size, 2);
    assert_int_equal(in.tensors[1].ndims, 1);
    assert_int_equal(in.tensors[1].dims[0], 1);
    assert_string_equal(in.tensors[1].dtype, "int64");
    assert_int_equal(in.tensors[1].elem_size, 8);

    assert_int_equal(capacity_parse_shapes("3X32X32, 1", "uint8", &in, &cause), 0);
    assert_int_equal(in.ntensors, 2);
    assert_int_equal(in.tensors[0].dims[2], 32);
    assert_int_equal(in.tensors[1].elem_size, 1);
    assert_null(cause);
}

static void expect_bad(const char *shape, const char *dtype, int want, const char *words)
{
    struct capacity_input in = {.batch_size = 1, .workers = 1};
    struct capacity_result r;
    char *cause = NULL;
    int rc = run(&in, shape, dtype, &r, &cause);
    assert_int_equal(rc, want);
    assert_non_null(cause);
    if (!strstr(cause, words))
        fail_msg("'%s' lacks '%s'", cause, words);
    free(cause);
}

static void test_bad_shapes(void **state)
{
    (void)state;
    expect_bad("", "float32", -EINVAL, "empty");
    expect_bad("3x0x224", "float32", -EINVAL, "whole number above 0");
    expect_bad("3x-1x224", "float32", -EINVAL, "whole number above 0");
    expect_bad("3x", "float32", -EINVAL, "whole number above 0");
    expect_bad("3xabc", "float32", -EINVAL, "whole number above 0");
    expect_bad("3x2.5", "float32", -EINVAL, "whole number above 0");
    expect_bad("3x224,,1", "float32", -EINVAL, "empty tensor");
    expect_bad(",1", "float32", -EINVAL, "empty tensor");
    expect_bad("1x1x1x1x1x1x1x1x1", "float32", -EINVAL, "more than 8 dimensions");
    expect_bad("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "float32", -EINVAL, "more than 16 tensors");
    expect_bad("3x224x224", "float33", -EINVAL, "unknown dtype 'float33'");
    expect_bad("3x224x224,1:long64", "float32", -EINVAL, "unknown dtype 'long64'");
    expect_bad("99999999999999999999999", "float32", -EOVERFLOW, "does not fit in 64 bits");
}

/* The user's text in a message is escaped: a newline or a terminal escape
 * in --sample-shape or --dtype must not break the one-line message (found
 * by fuzzing: "4\n,"). */
static void test_bad_shapes_escaped(void **state)
{
    (void)state;
    expect_bad("4\n,", "float32", -EINVAL, "bad sample shape '4\\n,'");
    expect_bad("4\n", "float32", -EINVAL, "bad sample shape '4\\n'");
    expect_bad("1x1x1x1x1x1x1x1x1\x1b[2J", "float32", -EINVAL, "'1x1x1x1x1x1x1x1x1\\e[2J' has more");
    expect_bad("3", "float\n32", -EINVAL, "unknown dtype 'float\\n32'");
    expect_bad("3:\x1b]0;t\a", "float32", -EINVAL, "unknown dtype '\\e]0;t\\x07'");
    expect_bad("3x\xff", "float32", -EINVAL, "bad sample shape '3x\\xff'");
}

static void test_overflow(void **state)
{
    (void)state;
    /* Each step that can pass 2^64 is caught. */
    expect_bad("4294967296x4294967296", "uint8", -EOVERFLOW, "sample shape");
    expect_bad("4294967296x2147483648", "float32", -EOVERFLOW, "sample size");

    struct capacity_input in = {.batch_size = UINT64_C(1) << 40, .workers = 1};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "16777216", "float32", &r, &cause), -EOVERFLOW);
    assert_non_null(strstr(cause, "batch size in bytes"));
    free(cause);

    /* A batch that fits, but not ten of them. */
    struct capacity_input in2 = {.batch_size = 1, .workers = 4};
    assert_int_equal(run(&in2, "4611686018427387904", "uint8", &r, &cause), -EOVERFLOW);
    assert_non_null(strstr(cause, "peak shared memory"));
    free(cause);

    struct capacity_input in3 = {.batch_size = 1, .workers = UINT64_MAX / 2, .prefetch = 3};
    assert_int_equal(run(&in3, "1", "uint8", &r, &cause), -EOVERFLOW);
    assert_non_null(strstr(cause, "batches in flight"));
    free(cause);
}

static void test_guide_example(void **state)
{
    (void)state;
    /* Batch 32 of 3x224x224 float32 is 19,267,584 bytes. */
    struct capacity_input in = {.batch_size = 32, .workers = 4};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_int_equal(r.t[0].elems, 150528);
    assert_int_equal(r.sample_bytes, 602112);
    assert_int_equal(r.batch_bytes, 19267584);
    assert_int_equal(r.batch_shm_bytes, 19267584); /* exactly 4704 pages */
    assert_int_equal(r.prefetch, 2);
    assert_int_equal(r.page_size, 4096);
    assert_int_equal(r.prefetched, 8);
    assert_int_equal(r.held, PLAN_MAIN_HELD);
    assert_int_equal(r.batches, 10);
    assert_int_equal(r.shm_peak, 192675840);
    assert_int_equal(r.shm_margin, 289013760);
    assert_int_equal(r.rec_shm_size, 276 * MiB); /* 275.6 MiB up */
    assert_false(r.shm_floored);
    assert_int_equal(r.verdict, PLAN_UNCHECKED);
    assert_string_equal(capacity_verdict_name(r.verdict), "unchecked");
}

static void test_label_pages(void **state)
{
    (void)state;
    /* The int64 label batch is 256 bytes but takes a whole page. */
    struct capacity_input in = {.batch_size = 32, .workers = 8, .prefetch = 4};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x224x224,1:int64", "float32", &r, &cause), 0);
    assert_int_equal(r.t[1].sample_bytes, 8);
    assert_int_equal(r.t[1].batch_bytes, 256);
    assert_int_equal(r.t[1].batch_shm_bytes, 4096);
    assert_int_equal(r.sample_bytes, 602120);
    assert_int_equal(r.batch_bytes, 19267840);
    assert_int_equal(r.batch_shm_bytes, 19271680);
    assert_int_equal(r.prefetched, 32);
    assert_int_equal(r.batches, 34);
    assert_int_equal(r.shm_peak, UINT64_C(655237120));
    /* 624.9 MiB x 1.5 = 937.3 MiB: below 1 GiB, so up to a whole MiB. */
    assert_int_equal(r.rec_shm_size, 938 * MiB);

    /* 64 KiB pages: the label takes 64 KiB; the images are 294 pages exactly. */
    in.page_size = 65536;
    assert_int_equal(run(&in, "3x224x224,1:int64", "float32", &r, &cause), 0);
    assert_int_equal(r.t[1].batch_shm_bytes, 65536);
    assert_int_equal(r.t[0].batch_shm_bytes, 19267584);
    assert_int_equal(r.batch_shm_bytes, 19267584 + 65536);
}

static void test_gib_rounding(void **state)
{
    (void)state;
    /* 64 x 3x512x512 float32 = 201,326,592 bytes a batch; 8 workers x 2 + 2 = 18. */
    struct capacity_input in = {.batch_size = 64, .workers = 8};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x512x512", "float32", &r, &cause), 0);
    assert_int_equal(r.batch_bytes, 201326592);
    assert_int_equal(r.batches, 18);
    assert_int_equal(r.shm_peak, UINT64_C(3623878656)); /* 3.375 GiB */
    assert_int_equal(r.rec_shm_size, 6 * GiB);          /* 5.06 GiB up to whole GiB */
}

static void test_no_workers(void **state)
{
    (void)state;
    struct capacity_input in = {.batch_size = 32, .workers = 0, .has_shm_size = true,
                            .shm_size = 64 * MiB};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_int_equal(r.batch_bytes, 19267584);
    assert_int_equal(r.batches, 0);
    assert_int_equal(r.held, 0);
    assert_int_equal(r.shm_peak, 0);
    /* Docker's default, the floor of every recommendation (the man page's
     * "never below"), not 0, which a script would pass on as --shm-size 0. */
    assert_int_equal(r.rec_shm_size, 64 * MiB);
    assert_true(r.shm_fits);
    assert_int_equal(r.verdict, PLAN_FITS);
    /* Against -m, the room left if /dev/shm filled is -m less that. */
    in = (struct capacity_input){.batch_size = 32, .workers = 0, .has_memory = true,
                                 .memory = 8 * GiB};
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_int_equal(r.rec_shm_size, 64 * MiB);
    assert_int_equal(r.app_room_peak, 8 * GiB);
    assert_int_equal(r.app_room_full, 8 * GiB - 64 * MiB);
    assert_int_equal(r.verdict, PLAN_FITS);
}

static void test_fit(void **state)
{
    (void)state;
    struct capacity_input in = {.batch_size = 32, .workers = 4, .has_memory = true,
                            .memory = 8 * GiB, .has_shm_size = true, .shm_size = 2 * GiB};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_true(r.shm_fits);
    assert_true(r.memory_fits);
    assert_false(r.shm_not_below_memory);
    assert_int_equal(r.planned_shm, 2 * GiB);
    assert_int_equal(r.app_room_peak, 8 * GiB - 192675840);
    assert_int_equal(r.app_room_full, 6 * GiB); /* 2 GiB of shm inside 8 GiB leaves 6 */
    assert_int_equal(r.verdict, PLAN_FITS);
    assert_string_equal(capacity_verdict_name(r.verdict), "fits");

    /* Docker's default 64 MiB: the peak does not fit. */
    in.shm_size = 64 * MiB;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_false(r.shm_fits);
    assert_false(r.shm_tight);
    assert_int_equal(r.verdict, PLAN_DOES_NOT_FIT);
    assert_string_equal(capacity_verdict_name(r.verdict), "does_not_fit");

    /* Within the peak x 1.5 rounded up (276 MiB): tightly. */
    in.shm_size = 200 * MiB;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_true(r.shm_fits);
    assert_true(r.shm_tight);

    /* Podman's default 62.5 MiB against a 2.3 MiB peak: it holds the peak
     * x 1.5 (4 MiB) with room, though the recommendation is floored at 64 MiB. */
    in.batch_size = 1;
    in.workers = 1;
    in.shm_size = 65536000;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_int_equal(r.rec_shm_size, 64 * MiB);
    assert_true(r.shm_fits);
    assert_false(r.shm_tight);
    in.batch_size = 32;
    in.workers = 4;
    in.shm_size = 64 * MiB;

    /* Without --shm-size the recommendation is what -m must hold. */
    in.has_shm_size = false;
    in.memory = 1 * GiB;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_int_equal(r.planned_shm, 276 * MiB);
    assert_int_equal(r.app_room_full, 1 * GiB - 276 * MiB);
    assert_int_equal(r.verdict, PLAN_FITS);

    /* --shm-size not below -m: fits the peak, but the OOM killer comes first. */
    in.has_shm_size = true;
    in.shm_size = 1 * GiB;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_true(r.shm_not_below_memory);
    assert_int_equal(r.app_room_full, 0);
    assert_int_equal(r.verdict, PLAN_FITS);

    /* The peak alone reaches the limit. */
    in.memory = 128 * MiB;
    in.has_shm_size = false;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), 0);
    assert_false(r.memory_fits);
    assert_int_equal(r.app_room_peak, 0);
    assert_int_equal(r.verdict, PLAN_DOES_NOT_FIT);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    struct capacity_input in = {.batch_size = 0, .workers = 1};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "3x224x224", "float32", &r, &cause), -EINVAL);
    assert_non_null(strstr(cause, "batch size must be at least 1"));
    free(cause);

    struct capacity_input empty = {.batch_size = 1};
    assert_int_equal(capacity_compute(&empty, &r, &cause), -EINVAL);
    assert_non_null(strstr(cause, "no tensors"));
    free(cause);
}

/* A loader that needs less than Docker's default is told to keep the
 * default, as the dashboard's budget says, never to shrink /dev/shm. */
/* plan --observe: a loader whose samples hold 26 one-page tensors reads as
 * 26 times more batches of one page each, and batches x batch would be less
 * than it holds; the peak is then what it holds, and says so. */
static void test_observed_floor(void **state)
{
    (void)state;
    struct capacity_input in = {
        .workers = 2, .prefetch = 2, .observed_batch_shm = 4096, .observed_held = 638976};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(capacity_compute(&in, &r, &cause), 0);
    assert_int_equal(r.batches, 6);
    assert_true(r.peak_held);
    assert_int_equal(r.shm_peak, 638976);
    /* Held less than the arithmetic: the arithmetic stands. */
    in.observed_held = 4 * 4096;
    assert_int_equal(capacity_compute(&in, &r, &cause), 0);
    assert_false(r.peak_held);
    assert_int_equal(r.shm_peak, 6 * 4096);
}

static void test_small_loader_keeps_docker_default(void **state)
{
    (void)state;
    struct capacity_input in = {.batch_size = 1, .workers = 1};
    struct capacity_result r;
    char *cause = NULL;
    assert_int_equal(run(&in, "10", "float32", &r, &cause), 0);
    assert_int_equal(r.shm_peak, 4 * 4096); /* 2 prefetched + 2 held, a page each */
    assert_int_equal(r.shm_margin, 6 * 4096);
    assert_true(r.shm_floored);
    assert_int_equal(r.rec_shm_size, 64 * MiB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_parse_shapes),
        cmocka_unit_test(test_bad_shapes),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_guide_example),
        cmocka_unit_test(test_label_pages),
        cmocka_unit_test(test_gib_rounding),
        cmocka_unit_test(test_no_workers),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_small_loader_keeps_docker_default),
        cmocka_unit_test(test_observed_floor),
        cmocka_unit_test(test_bad_shapes_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
