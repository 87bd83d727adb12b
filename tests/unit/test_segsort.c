/* The order of segments: by mount, then name bytes as strcmp compares them
 * (unsigned: invalid UTF-8 after ASCII), then inode; segsort's fast path is
 * checked against qsort with that comparison (segsort_cmp) on names built
 * to defeat its shortcut (shared prefixes, names that are prefixes of
 * others, ties in the first eight bytes past the prefix, high bytes). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_names),
        cmocka_unit_test(test_one_shared_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
