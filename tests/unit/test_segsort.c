/* The order of segments: by mount, then name bytes as strcmp compares them
 * (unsigned: invalid UTF-8 after ASCII, a name before the longer names it
 * begins), then inode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/segsort.h"
#include "testutil.h"

static void test_order(void **state)
{
    (void)state;
    /* Given in reverse of the order they must come in. */
    static const struct {
        size_t mount;
        const char *name;
        ino_t ino;
    } want[] = {
        {0, "psm_01", 9},           {0, "torch_4711_1", 3},
        {0, "torch_4711_1", 7},     {0, "torch_4711_10", 1},
        {0, "torch_4711_2", 2},     {0, "torch_4711_\x80", 5},
        {1, "", 4},                 {1, "a", 1},
        {2, "torch_1_1", 2},
    };
    enum { N = sizeof(want) / sizeof(want[0]) };
    struct segment segs[N];
    memset(segs, 0, sizeof(segs));
    for (size_t i = 0; i < N; i++) {
        segs[N - 1 - i].mount = (uint32_t)want[i].mount;
        segs[N - 1 - i].name = want[i].name;
        segs[N - 1 - i].ino = want[i].ino;
        segs[N - 1 - i].size = i; /* the whole record moves with it */
    }
    segsort(segs, N);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(segs[i].mount, want[i].mount);
        assert_string_equal(segs[i].name, want[i].name);
        assert_int_equal(segs[i].ino, want[i].ino);
        assert_int_equal(segs[i].size, i);
    }
    segsort(segs, 1); /* one segment: nothing to do */
    assert_string_equal(segs[0].name, "psm_01");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
