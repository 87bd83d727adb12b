/* The budget model: which limit applies, the derived figures, and every
 * verdict and advice rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/budget.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* Index of the first advice sentence containing s, or -1. */
static int advice_with(const struct budget *b, const char *s)
{
    for (size_t i = 0; i < b->nadvice; i++)
        if (strstr(b->advice[i], s))
            return (int)i;
    return -1;
}

/* A quiet container: 8 GiB limit, 1 GiB app, 2 GiB /dev/shm with 100 MiB used. */
static struct cgroup_info container(void)
{
    struct cgroup_info cg = {
        .present = true, .version = 2, .path = "/", .has_limit = true, .limit = 8 * GiB,
        .anon = 1 * GiB, .shmem = 100 * MiB,
    };
    return cg;
}

static struct budget_input input(const struct cgroup_info *cg)
{
    struct budget_input in = {
        .cg = cg, .mem_total = 32 * GiB, .shm_size = 2 * GiB, .shm_used = 100 * MiB,
        .shm_avail = 2 * GiB - 100 * MiB, .rss_anon_sum = 700 * MiB,
    };
    return in;
}

static void test_helpers(void **state)
{
    (void)state;
    assert_int_equal(budget_scale_up(10, 3, 2), 15);
    assert_int_equal(budget_scale_up(11, 3, 2), 17); /* 16.5 up */
    assert_int_equal(budget_scale_up(UINT64_MAX / 2, 3, 2), UINT64_MAX);
    assert_int_equal(budget_round_up(1), MiB);
    assert_int_equal(budget_round_up(60 * MiB), 60 * MiB);
    assert_int_equal(budget_round_up(60 * MiB + 1), 61 * MiB);
    assert_int_equal(budget_round_up(GiB), GiB);
    assert_int_equal(budget_round_up(GiB + 1), 2 * GiB);
    assert_int_equal(budget_round_up(UINT64_MAX - 5), UINT64_MAX);
    char f[32];
    assert_string_equal(budget_flag_size(f, sizeof(f), 2 * GiB), "2g");
    assert_string_equal(budget_flag_size(f, sizeof(f), 276 * MiB), "276m");
    assert_string_equal(budget_flag_size(f, sizeof(f), GiB + MiB), "1025m");
    assert_string_equal(verdict_name(VERDICT_OK), "ok");
    assert_string_equal(verdict_name(VERDICT_WARN), "warn");
    assert_string_equal(verdict_name(VERDICT_CRITICAL), "critical");
    assert_string_equal(budget_fmt_step(f, sizeof(f), 512), "512 B");
    assert_string_equal(budget_fmt_step(f, sizeof(f), 192675840), "183.8 MiB");
    assert_string_equal(budget_fmt_step(f, sizeof(f), 1200 * MiB), "1.17 GiB");
}

static void test_cgroup_figures(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.limit_source, LIMIT_CGROUP);
    assert_int_equal(b.limit, 8 * GiB);
    assert_int_equal(b.app, 1 * GiB); /* cgroup anon, not the RssAnon sum */
    assert_int_equal(b.shm_size, 2 * GiB);
    assert_int_equal(b.shm_used, 100 * MiB);
    assert_int_equal(b.headroom, 8 * GiB - 1 * GiB - 100 * MiB);
    /* /dev/shm runs out before the limit. */
    assert_int_equal(b.shm_effective, 2 * GiB - 100 * MiB);
    assert_int_equal(b.verdict, VERDICT_OK);
    assert_int_equal(advice_with(&b, "MemTotal"), -1);
    budget_free(&b);

    /* A tight limit: the headroom is what can still be written. */
    cg.limit = 1200 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(b.headroom, 1200 * MiB - 1024 * MiB - 100 * MiB);
    assert_int_equal(b.shm_effective, 76 * MiB);
    budget_free(&b);

    /* Headroom never goes below zero. */
    cg.limit = 512 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(b.headroom, 0);
    assert_int_equal(b.shm_effective, 0);
    budget_free(&b);
}

static void test_memtotal_fallback(void **state)
{
    (void)state;
    struct budget_input in = input(NULL);
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(b.limit, 32 * GiB);
    assert_int_equal(b.app, 700 * MiB);
    assert_int_equal(b.headroom, 32 * GiB - 800 * MiB);
    assert_true(advice_with(&b, "No memory cgroup was found") >= 0);
    assert_true(advice_with(&b, "MemTotal 32.0 GiB") >= 0);
    assert_int_equal(b.verdict, VERDICT_OK);
    budget_free(&b);

    /* A cgroup that is present but not present-flagged counts as none. */
    struct cgroup_info absent = {0};
    in.cg = &absent;
    budget_compute(&in, &b);
    assert_int_equal(b.limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(b.app, 700 * MiB);
    budget_free(&b);

    /* An unlimited cgroup: MemTotal, but the cgroup's anon is the app. */
    struct cgroup_info cg = container();
    cg.has_limit = false;
    cg.path = "/user.slice";
    in.cg = &cg;
    budget_compute(&in, &b);
    assert_int_equal(b.limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(b.limit, 32 * GiB);
    assert_int_equal(b.app, 1 * GiB);
    assert_true(advice_with(&b, "/user.slice has no limit") >= 0);
    budget_free(&b);

    /* A limit above the machine's memory is not the binding one. */
    cg.has_limit = true;
    cg.limit = 64 * GiB;
    budget_compute(&in, &b);
    assert_int_equal(b.limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(b.limit, 32 * GiB);
    assert_true(advice_with(&b, "above the machine's memory") >= 0);
    budget_free(&b);
}

static void test_oom_first(void **state)
{
    (void)state;
    /* 512 MiB limit, 480 MiB app: only 32 MiB left for a 64 MiB /dev/shm. */
    struct cgroup_info cg = container();
    cg.limit = 512 * MiB;
    cg.anon = 480 * MiB;
    struct budget_input in = input(&cg);
    in.shm_size = 64 * MiB;
    in.shm_used = 0;
    in.shm_avail = 64 * MiB;
    struct budget b;
    budget_compute(&in, &b);
    int i = advice_with(&b, "OOM killer fires while 32.0 MiB of /dev/shm are still free");
    assert_true(i >= 0);
    assert_non_null(strstr(b.advice[i], "512 MiB - 480 MiB of app = 32.0 MiB"));
    assert_int_equal(b.verdict, VERDICT_WARN);
    assert_int_equal(b.shm_effective, 32 * MiB);
    budget_free(&b);

    /* Enough room: no such advice. */
    cg.limit = 1 * GiB;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "OOM killer fires"), -1);
    assert_int_equal(b.verdict, VERDICT_OK);
    budget_free(&b);
}

static void test_docker_default(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    in.shm_size = 64 * MiB;
    in.shm_used = 8 * MiB;
    in.shm_avail = 56 * MiB;
    in.workers_present = true;
    struct budget b;
    budget_compute(&in, &b);
    int i = advice_with(&b, "Docker's default, and DataLoader workers are running");
    assert_true(i >= 0);
    assert_non_null(strstr(b.advice[i], "The peak so far (8.0 MiB) fits"));
    assert_int_equal(b.verdict, VERDICT_WARN);
    budget_free(&b);

    /* A peak beyond 64 MiB / 1.5: the advice names the size to use. */
    in.peak_shm = 50 * MiB;
    budget_compute(&in, &b);
    i = advice_with(&b, "Docker's default, and DataLoader workers are running");
    assert_true(i >= 0);
    assert_non_null(strstr(b.advice[i], "their peak so far (50.0 MiB) needs --shm-size=75m"));
    assert_int_equal(b.verdict, VERDICT_WARN);
    budget_free(&b);

    in.peak_shm = 0;
    in.workers_present = false;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "Docker's default, and"), -1);
    assert_int_equal(b.verdict, VERDICT_OK);
    budget_free(&b);

    /* Any other size with workers is fine. */
    in.workers_present = true;
    in.shm_size = 65 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "Docker's default, and"), -1);
    budget_free(&b);
}

static void fill(struct budget_input *in, uint64_t used)
{
    in->shm_size = 100 * MiB;
    in->shm_used = used;
    in->shm_avail = 100 * MiB - used;
}

static void test_fill_thresholds(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    struct budget b;

    fill(&in, 79 * MiB);
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_OK);
    assert_int_equal(advice_with(&b, "% full"), -1);
    budget_free(&b);

    fill(&in, 80 * MiB);
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_WARN);
    assert_true(advice_with(&b, "/dev/shm is 80.0% full (80.0 MiB of 100 MiB; warning at 80%)") >= 0);
    budget_free(&b);

    fill(&in, 96 * MiB);
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    assert_true(advice_with(&b, "96.0% full (96.0 MiB of 100 MiB; critical at 95%)") >= 0);
    budget_free(&b);

    /* Thresholds from the configuration. */
    in.warn_pct = 50;
    in.crit_pct = 70;
    fill(&in, 60 * MiB);
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_WARN);
    assert_true(advice_with(&b, "warning at 50%") >= 0);
    budget_free(&b);
    fill(&in, 70 * MiB);
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    budget_free(&b);
}

static void test_pending(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    fill(&in, 50 * MiB);
    in.pending = 60 * MiB; /* more than the 50 MiB free */
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    int i = advice_with(&b, "SIGBUS");
    assert_true(i >= 0);
    assert_non_null(strstr(b.advice[i], "60.0 MiB reserved but not yet written, more than the "
                                        "50.0 MiB free"));
    budget_free(&b);

    in.pending = 40 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "SIGBUS"), -1);
    assert_int_equal(b.verdict, VERDICT_OK);
    budget_free(&b);

    /* Room on /dev/shm but not under the limit: the OOM killer instead. */
    cg.limit = 1 * GiB + 80 * MiB; /* headroom 30 MiB */
    budget_compute(&in, &b);
    assert_int_equal(b.headroom, 30 * MiB);
    assert_int_equal(advice_with(&b, "SIGBUS"), -1);
    assert_true(advice_with(&b, "writing them triggers the OOM killer") >= 0);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    budget_free(&b);
}

static void test_memory_thresholds(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    cg.limit = 1200 * MiB; /* app 1 GiB + shm 100 MiB = 93.7 % */
    struct budget_input in = input(&cg);
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_WARN);
    int k = advice_with(&b, "together use");
    assert_true(k >= 0);
    assert_string_equal(b.advice[k], "The application and /dev/shm together use 93.7% of the "
                                     "memory limit (1.0 GiB + 100 MiB of 1.2 GiB; warning at "
                                     "80%).");
    budget_free(&b);

    cg.limit = 1150 * MiB; /* 97.7 % */
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    k = advice_with(&b, "together use");
    assert_true(k >= 0);
    assert_string_equal(b.advice[k], "The application and /dev/shm together use 97.7% of the "
                                     "memory limit (1.0 GiB + 100 MiB of 1.1 GiB; critical at "
                                     "95%): the OOM killer is close.");
    budget_free(&b);

    /* Not applied against MemTotal, where the app figure is partial. */
    in.cg = NULL;
    in.mem_total = 850 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "together use"), -1);
    budget_free(&b);
}

/* Another shm mount of the same cgroup (a --tmpfs /run/shm with 6700 MiB
 * written) counts against the same limit: the headroom, the writable shm,
 * the memory verdict and the -m recommendation take it in, and each
 * sentence that adds figures up names its bytes; shm_used stays this
 * mount's. */
static void test_other_mount_of_the_cgroup(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    in.shm_other = 6700 * MiB;
    in.shm_other_rec = 6700 * MiB; /* as if /run/shm were recommended its current size */
    in.path = "/dev/shm";
    in.other = "/run/shm";
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.shm_used, 100 * MiB);
    assert_int_equal(b.shm_other, 6700 * MiB);
    assert_int_equal(b.headroom, 8 * GiB - 1 * GiB - 100 * MiB - 6700 * MiB); /* 368 MiB */
    assert_int_equal(b.shm_effective, 368 * MiB);
    assert_int_equal(b.verdict, VERDICT_CRITICAL); /* (1024 + 100 + 6700) / 8192 = 95.5 % */
    assert_true(advice_with(&b, "The application, /dev/shm and /run/shm, the shm mounts of one "
                                "cgroup, together use 95.5% of the memory limit (1.0 GiB + "
                                "100 MiB + 6.5 GiB of 8.0 GiB; critical at 95%): the OOM killer "
                                "is close.") >= 0);
    assert_true(advice_with(&b, "/dev/shm (2.0 GiB) is larger than the memory left for it under "
                                "the memory limit (8.0 GiB - 1.0 GiB of app - 6.5 GiB on "
                                "/run/shm, charged to the same cgroup, = 468 MiB)") >= 0);
    /* (1 GiB + 150 MiB + 6700 MiB) x 1.2 = 9.23 GiB: 10 GiB. */
    assert_int_equal(b.rec_memory, 10 * GiB);
    assert_true(advice_with(&b, "-m 10g ((app peak 1.00 GiB + shm 150.0 MiB + 6.54 GiB "
                                "recommended for /run/shm) x 1.2 = 9.23 GiB, rounded up to a "
                                "whole GiB; the current 8.0 GiB is too small)") >= 0);
    budget_free(&b);

    /* Less there: the limit fits, its spare room above the peaks and what
     * /run/shm holds now; -m counts /run/shm at its recommended size. */
    in.shm_other = 700 * MiB;
    in.shm_other_rec = 1050 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(b.headroom, 8 * GiB - 1 * GiB - 100 * MiB - 700 * MiB);
    /* (1 GiB + 150 MiB + 1050 MiB) x 1.2 = 2.58 GiB: 3 GiB. */
    assert_int_equal(b.rec_memory, 3 * GiB);
    assert_true(advice_with(&b, "+ 1.03 GiB recommended for /run/shm) x 1.2 = ") >= 0);
    assert_true(advice_with(&b, "; the current 8.0 GiB fits: keep it, 6.2 GiB spare above the "
                                "peaks and the 700.0 MiB now on /run/shm)") >= 0);
    assert_int_equal(advice_with(&b, "together use"), -1); /* 22.6 %: no warning */
    budget_free(&b);
}

static void test_recommendation(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    in.peak_shm = 800 * MiB; /* x 1.5 = 1200 MiB: above 1 GiB, so whole GiB */
    in.peak_app = 3 * GiB;
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.peak_shm, 800 * MiB);
    assert_int_equal(b.peak_app, 3 * GiB);
    assert_int_equal(b.rec_shm_size, 2 * GiB);
    assert_int_equal(b.rec_memory, 6 * GiB); /* (3 + 2) x 1.2 = 6 */
    int i = advice_with(&b, "Recommended: --shm-size at least 2g");
    assert_true(i >= 0);
    assert_string_equal(b.advice[i],
                        "Recommended: --shm-size at least 2g (peak shm 800.0 MiB x 1.5 = 1.17 GiB, "
                        "rounded up to a whole GiB; the current 2.0 GiB fits: keep it, 1.2 GiB "
                        "spare above the peak) and -m at least 6g ((app peak 3.00 GiB + shm 2.00 "
                        "GiB) x 1.2 = 6.00 GiB, rounded up to a whole GiB; the current 8.0 GiB "
                        "fits: keep it, 4.2 GiB spare above the peaks).");
    budget_free(&b);

    /* Small figures round to whole MiB; without peaks the current use counts. */
    in.peak_shm = 0;
    in.peak_app = 0;
    cg.anon = 100 * MiB;
    in.shm_used = 100 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(b.rec_shm_size, 150 * MiB);
    assert_int_equal(b.rec_memory, 300 * MiB); /* (100 + 150) x 1.2 */
    assert_true(advice_with(&b, "--shm-size at least 150m") >= 0);
    assert_true(advice_with(&b, "-m at least 300m") >= 0);
    assert_int_equal(advice_with(&b, "no less than"), -1);
    budget_free(&b);

    /* A peak below the current use is stale: the current use wins. */
    in.peak_shm = 10 * MiB;
    in.shm_used = 100 * MiB + 1; /* x 1.5 rounds up to 151 MiB */
    budget_compute(&in, &b);
    assert_int_equal(b.peak_shm, 100 * MiB + 1);
    assert_int_equal(b.rec_shm_size, 151 * MiB);
    budget_free(&b);

    /* Never below Docker's default: 40 MiB x 1.5 = 60 MiB becomes 64 MiB. */
    in.peak_shm = 0;
    in.shm_used = 40 * MiB;
    budget_compute(&in, &b);
    assert_int_equal(b.rec_shm_size, 64 * MiB);
    assert_int_equal(b.rec_memory, 197 * MiB); /* (100 + 64) x 1.2 = 196.8 */
    assert_true(advice_with(&b, "= 60.0 MiB, rounded up to a whole MiB, and no less than "
                                "Docker's default 64 MiB; the current 2.0 GiB fits") >= 0);
    assert_true(advice_with(&b, "-m at least 197m") >= 0);
    budget_free(&b);

    /* Nothing in /dev/shm yet: nothing to recommend. */
    in.peak_shm = 0;
    in.shm_used = 0;
    budget_compute(&in, &b);
    assert_int_equal(b.rec_shm_size, 0);
    assert_int_equal(b.rec_memory, 0);
    assert_int_equal(advice_with(&b, "Recommended"), -1);
    budget_free(&b);
}

/* A /dev/shm of size bytes with used of them in use, its peak so far. */
static void shm_in_use(struct budget_input *in, uint64_t size, uint64_t used)
{
    in->shm_size = size;
    in->shm_used = in->peak_shm = used;
    in->shm_avail = size - used;
}

/* b's advice of the recommended sizes. */
static const char *recommended(const struct budget *b)
{
    int i = advice_with(b, "Recommended: ");
    assert_true(i >= 0);
    return b->advice[i];
}

/* The budget of in recommends --shm-size rec, and one advice says says. */
static void expect_shm_rec(const struct budget_input *in, uint64_t rec, const char *says)
{
    struct budget b;
    budget_compute(in, &b);
    assert_int_equal(b.rec_shm_size, rec);
    assert_true(advice_with(&b, says) >= 0);
    budget_free(&b);
}

/* Podman's default /dev/shm, 65536k = 65,536,000 bytes = 62.5 MiB, with a
 * 1 MiB peak: it holds the peak x 1.5, so it is kept as it is, not raised
 * to Docker's 64 MiB; -m counts all of it. */
static void test_podman_default(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    shm_in_use(&in, 65536000, 1 * MiB);
    cg.limit = 512 * MiB; /* in.cg points at cg */
    cg.anon = 20 * MiB;
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.rec_shm_size, 65536000);
    assert_int_equal(b.rec_memory, 99 * MiB); /* (20 + 62.5) x 1.2 = 99 */
    assert_string_equal(recommended(&b),
                        "Recommended: --shm-size as it is (peak shm 1.0 MiB x 1.5 = 1.5 MiB, "
                        "rounded up to a whole MiB; the current 62.5 MiB fits: keep it, 61.5 MiB "
                        "spare above the peak) and -m at least 99m ((app peak 20.0 MiB + shm 62.5 "
                        "MiB) x 1.2 = 99.0 MiB, rounded up to a whole MiB; the current 512 MiB "
                        "fits: keep it, 491 MiB spare above the peaks).");
    assert_int_equal(advice_with(&b, "64m"), -1);
    assert_int_equal(advice_with(&b, "too small"), -1);
    budget_free(&b);

    /* A peak whose margin, rounded up, outgrows it: then 64 MiB, too small. */
    shm_in_use(&in, 65536000, 42 * MiB); /* x 1.5 = 63 MiB */
    expect_shm_rec(&in, 64 * MiB,
                   "Recommended: --shm-size=64m (peak shm 42.0 MiB x 1.5 = 63.0 MiB, rounded up "
                   "to a whole MiB, and no less than Docker's default 64 MiB; the current 62.5 "
                   "MiB holds the peak, not its margin)");

    /* Docker's own default with the same 1 MiB peak: at least 64m, as ever. */
    shm_in_use(&in, 64 * MiB, 1 * MiB);
    expect_shm_rec(&in, 64 * MiB,
                   "Recommended: --shm-size at least 64m (peak shm 1.0 MiB x 1.5 = 1.5 MiB, "
                   "rounded up to a whole MiB, and no less than Docker's default 64 MiB; the "
                   "current 64.0 MiB fits: keep it");
}

/* A size as the advice writes a flag's value ("276m", "2g"), at s. */
static bool flag_value(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || (*end != 'm' && *end != 'g'))
        return false;
    *out = (uint64_t)v * (*end == 'g' ? GiB : MiB);
    return true;
}

/* Every flag value a sentence names below the current one says "at least"
 * right before it; returns how many values were checked. */
static int check_no_cut(const struct budget *b, const char *sentence)
{
    static const struct {
        const char *flag;
        int which; /* 0: --shm-size, 1: -m */
    } flags[] = {{"--shm-size=", 0}, {"--shm-size at least ", 0}, {"-m ", 1},
                 {"-m at least ", 1}};
    int n = 0;
    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        for (const char *p = strstr(sentence, flags[f].flag); p;
             p = strstr(p + 1, flags[f].flag)) {
            uint64_t v;
            if (!flag_value(p + strlen(flags[f].flag), &v))
                continue;
            n++;
            uint64_t cur = flags[f].which == 0 ? b->shm_size
                           : b->limit_source == LIMIT_CGROUP ? b->limit
                                                             : 0;
            bool at_least = strstr(flags[f].flag, "at least") != NULL;
            if (cur && v < cur && !at_least)
                fail_msg("a cut of a limit that fits (current %llu): %s",
                         (unsigned long long)cur, sentence);
            if (cur && v > cur && at_least)
                fail_msg("\"at least\" a value above the current %llu: %s",
                         (unsigned long long)cur, sentence);
        }
    }
    return n;
}

/* Over a grid of limits, sizes, uses and peaks (the cases above among
 * them, and a container of -m 512m with 190 MiB in use): no advice
 * names a value below a current limit without "at least", the recommended
 * fields are the least that fits (peak x margin), and a limit that fits is
 * said to fit, with its spare room. */
static void test_never_cuts_a_limit_that_fits(void **state)
{
    (void)state;
    static const uint64_t limits[] = {0, 256 * MiB, 512 * MiB, 8 * GiB};
    static const uint64_t shm_sizes[] = {0, 64 * MiB, 512 * MiB, 2 * GiB};
    static const uint64_t apps[] = {0, 100 * MiB, 3 * GiB};
    static const uint64_t uses[] = {0, 40 * MiB, 90 * MiB, 190 * MiB, 800 * MiB};
    static const uint64_t peaks[] = {0, 300 * MiB};
    int checked = 0, fits_said = 0;
    for (size_t l = 0; l < 4; l++)
        for (size_t z = 0; z < 4; z++)
            for (size_t a = 0; a < 3; a++)
                for (size_t u = 0; u < 5; u++)
                    for (size_t k = 0; k < 2; k++) {
                        struct cgroup_info cg = container();
                        cg.has_limit = limits[l] != 0;
                        cg.limit = limits[l];
                        cg.anon = apps[a];
                        struct budget_input in = input(&cg);
                        in.shm_size = shm_sizes[z];
                        in.shm_used = uses[u] < shm_sizes[z] ? uses[u] : shm_sizes[z];
                        in.shm_avail = shm_sizes[z] - in.shm_used;
                        in.peak_shm = peaks[k];
                        in.workers_present = k;
                        struct budget b;
                        budget_compute(&in, &b);
                        for (size_t i = 0; i < b.nadvice; i++)
                            checked += check_no_cut(&b, b.advice[i]);
                        if (b.rec_shm_size) {
                            uint64_t peak = b.peak_shm;
                            assert_true(b.rec_shm_size >= peak + peak / 2);
                            assert_true(b.rec_shm_size >= DOCKER_DEFAULT_SHM);
                        }
                        if (b.rec_shm_size && b.shm_size >= b.rec_shm_size) {
                            assert_true(advice_with(&b, "fits: keep it") >= 0);
                            fits_said++;
                        }
                        budget_free(&b);
                    }
    assert_true(checked > 100);
    assert_true(fits_said > 10);

    /* A container of -m 512m, 190 MiB of /dev/shm in use, 1 GiB --shm-size. */
    struct cgroup_info cg = container();
    cg.limit = 512 * MiB;
    cg.anon = 40 * MiB;
    struct budget_input in = input(&cg);
    in.shm_size = GiB;
    in.shm_used = 190 * MiB;
    in.shm_avail = GiB - 190 * MiB;
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.rec_memory, 390 * MiB); /* (40 + 285) x 1.2: the least that fits */
    assert_int_equal(advice_with(&b, "-m 390m"), -1);
    assert_true(advice_with(&b, "-m at least 390m") >= 0);
    assert_true(advice_with(&b, "the current 512 MiB fits: keep it, 282 MiB spare") >= 0);
    budget_free(&b);
}

static void test_order(void **state)
{
    (void)state;
    /* Docker default (warn), full (critical), recommendation (info). */
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    in.shm_size = 64 * MiB;
    in.shm_used = 63 * MiB;
    in.shm_avail = 1 * MiB;
    in.workers_present = true;
    struct budget b;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    assert_int_equal(b.nadvice, 3);
    assert_non_null(strstr(b.advice[0], "% full"));
    assert_non_null(strstr(b.advice[1], "Docker's default"));
    assert_non_null(strstr(b.advice[2], "Recommended"));
    budget_free(&b);
    assert_null(b.advice);
    assert_int_equal(b.nadvice, 0);
}

static void test_oom_kills(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    struct budget b;

    /* Unknown, or none: nothing said. */
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "OOM kill"), -1);
    assert_int_equal(b.verdict, VERDICT_OK);
    budget_free(&b);
    cg.has_oom_kills = true;
    budget_compute(&in, &b);
    assert_int_equal(advice_with(&b, "OOM kill"), -1);
    budget_free(&b);

    /* Kills from before this watch began: information, the verdict unchanged. */
    cg.oom_kills = 3;
    budget_compute(&in, &b);
    int i = advice_with(&b, "has had 3 OOM kills since it was made");
    assert_true(i >= 0);
    assert_non_null(strstr(b.advice[i], "the memory limit (-m, 8.0 GiB) was hit at least once"));
    assert_int_equal(b.verdict, VERDICT_OK);
    assert_int_equal(b.oom_recent, 0);
    budget_free(&b);

    /* New kills seen between scans: critical, said first. */
    in.oom_recent = 1;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    assert_int_equal(b.oom_recent, 1);
    assert_non_null(strstr(b.advice[0], "has just ended 1 process in the memory cgroup (3 OOM "
                                        "kills since it was made): the memory limit (-m, 8.0 "
                                        "GiB) was hit"));
    budget_free(&b);

    /* No cgroup limit: the machine ran out, not -m. */
    cg.has_limit = false;
    in.oom_recent = 2;
    budget_compute(&in, &b);
    assert_non_null(strstr(b.advice[0], "ended 2 processes"));
    assert_non_null(strstr(b.advice[0], "the machine ran out of memory"));
    budget_free(&b);
}

/* A tmpfs mounted with nr_inodes: out of inodes with its bytes free, no
 * segment can be created ("No space left on device"): critical; nearly
 * out, a warning; no limit (inodes 0), nothing said. */
static void test_inodes(void **state)
{
    (void)state;
    struct cgroup_info cg = container();
    struct budget_input in = input(&cg);
    struct budget b;

    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_OK);
    assert_int_equal(advice_with(&b, "inodes"), -1);
    budget_free(&b);

    in.inodes = 1000;
    in.inodes_free = 0;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_CRITICAL);
    assert_true(advice_with(&b, "/dev/shm has 1000 of its 1000 inodes in use") >= 0);
    assert_true(advice_with(&b, "No space left on device") >= 0);
    budget_free(&b);

    in.inodes_free = 150;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_WARN);
    assert_true(advice_with(&b, "850 of its 1000 inodes in use (nr_inodes; warning at 80%)") >= 0);
    budget_free(&b);

    in.inodes_free = 500;
    budget_compute(&in, &b);
    assert_int_equal(b.verdict, VERDICT_OK);
    assert_int_equal(advice_with(&b, "inodes"), -1);
    budget_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),          cmocka_unit_test(test_cgroup_figures),
        cmocka_unit_test(test_memtotal_fallback), cmocka_unit_test(test_oom_first),
        cmocka_unit_test(test_docker_default),   cmocka_unit_test(test_fill_thresholds),
        cmocka_unit_test(test_pending),          cmocka_unit_test(test_memory_thresholds),
        cmocka_unit_test(test_recommendation),   cmocka_unit_test(test_order),
        cmocka_unit_test(test_never_cuts_a_limit_that_fits),
        cmocka_unit_test(test_podman_default),
        cmocka_unit_test(test_oom_kills),
        cmocka_unit_test(test_inodes),
        cmocka_unit_test(test_other_mount_of_the_cgroup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
