/* The order of segments: by mount, then name bytes as strcmp compares them
 * (unsigned: invalid UTF-8 after ASCII), then inode; segsort's fast path is
 * checked against qsort with that comparison (segsort_cmp) on names built
 * to defeat its shortcut (shared prefixes, names that are prefixes of
 * others, ties in the first eight bytes past the prefix, high bytes), and
 * on the orders a snapshot brings (a tmpfs lists newest first, a process's
 * mappings oldest first: runs up and down), which the sort merges as runs;
 * equal segments keep the order they came in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/segsort.h"
#include "testutil.h"

static void check_against_qsort(struct segment *segs, size_t n)
{
    struct segment *want = malloc(n * sizeof(*want));
    assert_non_null(want);
    memcpy(want, segs, n * sizeof(*want));
    qsort(want, n, sizeof(*want), segsort_cmp);
    struct segment *got = malloc(n * sizeof(*got));
    assert_non_null(got);
    memcpy(got, segs, n * sizeof(*got));
    segsort(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i].mount, want[i].mount);
        assert_string_equal(got[i].name, want[i].name);
        assert_int_equal(got[i].ino, want[i].ino);
        assert_int_equal(got[i].size, want[i].size); /* the whole record moved */
    }
    free(got);
    free(want);
}

static void test_random_names(void **state)
{
    (void)state;
    enum { N = 3001 };
    static char names[N][40];
    static const char *const prefixes[] = {"torch_4711_", "torch_4712_", "psm_", "", "torch_"};
    struct segment *segs = calloc(N, sizeof(*segs));
    assert_non_null(segs);
    srand(15);
    for (size_t i = 0; i < N; i++) {
        const char *pre = prefixes[rand() % 5];
        size_t len = strlen(pre);
        memcpy(names[i], pre, len);
        size_t extra = (size_t)(rand() % 14); /* 0: the bare prefix */
        for (size_t k = 0; k < extra; k++) {
            int r = rand() % 8;
            names[i][len++] = (char)(r == 0 ? 0x80 + rand() % 128 : r == 1 ? 'a' : '0' + rand() % 3);
        }
        names[i][len] = '\0';
        segs[i].name = names[i];
        segs[i].mount = (size_t)(rand() % 3);
        segs[i].ino = (ino_t)(rand() % 4);
        segs[i].size = i;
    }
    check_against_qsort(segs, N);
    free(segs);
}

static void test_one_shared_prefix(void **state)
{
    (void)state;
    /* Every name shares "unheld_0000"; some end inside the eight bytes, one is the
     * prefix itself, two are equal and told apart by their inodes. */
    static const char *const names[] = {"unheld_00009", "unheld_0000", "unheld_000010000000001",
                                        "unheld_000010000000000", "unheld_00001", "unheld_00001",
                                        "unheld_0000\xff", "unheld_00000"};
    enum { N = sizeof(names) / sizeof(names[0]) };
    struct segment segs[N];
    memset(segs, 0, sizeof(segs));
    for (size_t i = 0; i < N; i++) {
        segs[i].name = names[i];
        segs[i].ino = (ino_t)(N - i);
        segs[i].size = i;
    }
    check_against_qsort(segs, N);
    struct segment *one = malloc(sizeof(*one));
    assert_non_null(one);
    *one = segs[0];
    segsort(one, 1); /* one segment: nothing to do */
    assert_string_equal(one->name, names[0]);
    free(one);
}

/* n names "<prefix><i>" (decimal, so byte order is not number order)
 * numbered by order(i), on mount mount_of(i), inode i % 3, size i: the
 * size tells where each segment came from. */
struct gen {
    struct segment *segs;
    char (*names)[32];
};

static struct gen gen_make(size_t n, const char *prefix, size_t (*order)(size_t, size_t),
                           size_t mounts)
{
    struct gen g = {calloc(n ? n : 1, sizeof(*g.segs)), calloc(n ? n : 1, sizeof(*g.names))};
    assert_non_null(g.segs);
    assert_non_null(g.names);
    for (size_t i = 0; i < n; i++) {
        snprintf(g.names[i], sizeof(g.names[i]), "%s%zu", prefix, order(i, n));
        g.segs[i].name = g.names[i];
        g.segs[i].mount = mounts ? i % mounts : 0;
        g.segs[i].ino = (ino_t)(i % 3);
        g.segs[i].size = i;
    }
    return g;
}

static void gen_free(struct gen *g)
{
    free(g->segs);
    free(g->names);
}

static size_t order_up(size_t i, size_t n)
{
    (void)n;
    return 100000 + i; /* as many digits each: byte order is number order */
}

static size_t order_down(size_t i, size_t n)
{
    return 100000 + n - i;
}

static size_t order_creation_down(size_t i, size_t n)
{
    return n - i; /* newest first, as a tmpfs lists: runs cut where digits change */
}

static size_t order_sawtooth(size_t i, size_t n)
{
    (void)n;
    return (i / 37) % 2 ? 100000 + 37 - i % 37 : 100000 + i % 37; /* up, down, up, ... */
}

static size_t order_random(size_t i, size_t n)
{
    (void)i;
    return (size_t)rand() % (n ? n : 1);
}

static size_t order_same(size_t i, size_t n)
{
    (void)i;
    (void)n;
    return 7; /* every name equal: only inode and input order tell them apart */
}

static void check_order(size_t n, const char *prefix, size_t (*order)(size_t, size_t),
                        size_t mounts)
{
    struct gen g = gen_make(n, prefix, order, mounts);
    check_against_qsort(g.segs, n);
    gen_free(&g);
}

static void test_runs(void **state)
{
    (void)state;
    srand(15);
    static const size_t sizes[] = {1, 2, 3, 4, 5, 31, 32, 33, 1000, 4097};
    static const char *const prefixes[] = {"torch_4711_", "", "psm_0000000000"};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (size_t p = 0; p < 3; p++) {
            for (size_t mounts = 1; mounts <= 3; mounts += 2) {
                check_order(sizes[s], prefixes[p], order_up, mounts);
                check_order(sizes[s], prefixes[p], order_down, mounts);
                check_order(sizes[s], prefixes[p], order_creation_down, mounts);
                check_order(sizes[s], prefixes[p], order_sawtooth, mounts);
                check_order(sizes[s], prefixes[p], order_random, mounts);
                check_order(sizes[s], prefixes[p], order_same, mounts);
            }
        }
    }
}

/* Segments equal in mount, name and inode keep their input order, in a
 * run going up, one going down and a shuffle. */
static void test_stable(void **state)
{
    (void)state;
    enum { N = 600 };
    static const char *const names[] = {"torch_1_1", "torch_1_2", "torch_1_3"};
    struct segment *segs = calloc(N, sizeof(*segs));
    assert_non_null(segs);
    srand(16);
    for (size_t i = 0; i < N; i++) {
        size_t k = i < 200 ? i * 3 / 200 : i < 400 ? 2 - (i - 200) * 3 / 200 : (size_t)rand() % 3;
        segs[i].name = names[k];
        segs[i].size = i;
    }
    segsort(segs, N);
    for (size_t i = 1; i < N; i++) {
        int c = strcmp(segs[i - 1].name, segs[i].name);
        assert_true(c < 0 || (c == 0 && segs[i - 1].size < segs[i].size));
    }
    free(segs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_names),
        cmocka_unit_test(test_one_shared_prefix),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
