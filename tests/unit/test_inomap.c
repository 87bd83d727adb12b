/* The (device, inode) hash map: one inode number on two devices is two
 * keys, values survive growth, find-or-add inserts once. */
#include <sys/sysmacros.h>

#include "testutil.h"
#include "util/inomap.h"

static void test_put_get_grow(void **state)
{
    (void)state;
    struct inomap m;
    inomap_init(&m);
    dev_t a = makedev(0, 50), b = makedev(4095, 1048575); /* the largest Linux device */
    for (size_t i = 1; i <= 100000; i++) {
        inomap_put(&m, a, (ino_t)i, i * 2);
        inomap_put(&m, b, (ino_t)i, i * 3);
    }
    assert_int_equal(m.n, 200000);
    size_t v;
    for (size_t i = 1; i <= 100000; i += 997) {
        assert_true(inomap_get(&m, a, (ino_t)i, &v));
        assert_int_equal(v, i * 2);
        assert_true(inomap_get(&m, b, (ino_t)i, &v));
        assert_int_equal(v, i * 3);
    }
    assert_false(inomap_get(&m, a, 100001, &v));
    assert_false(inomap_get(&m, makedev(0, 51), 1, &v));
    inomap_put(&m, a, 7, 0); /* overwrite, with the value 0 */
    assert_true(inomap_get(&m, a, 7, &v));
    assert_int_equal(v, 0);
    assert_int_equal(m.n, 200000);
    inomap_free(&m);
}

static void test_add(void **state)
{
    (void)state;
    struct inomap m;
    inomap_init(&m);
    inomap_reserve(&m, 1000);
    size_t cap = m.cap, v;
    assert_true(cap >= 2002);
    assert_true(inomap_add(&m, 1, 10, 5, &v));
    assert_int_equal(v, 5);
    assert_false(inomap_add(&m, 1, 10, 6, &v)); /* already there: keeps 5 */
    assert_int_equal(v, 5);
    for (size_t i = 0; i < 999; i++)
        inomap_add(&m, 2, (ino_t)i, i, &v);
    assert_int_equal(m.cap, cap); /* reserved: no rehash */
    assert_int_equal(m.n, 1000);
    inomap_free(&m);
}

/* A node's many devices (one per container): more than the map's hints, so
 * that several share one and are found by the search; one inode number on
 * each is a key of its own, and a device never added is absent. */
static void test_many_devices(void **state)
{
    (void)state;
    struct inomap m;
    inomap_init(&m);
    enum { NDEV = 300 };
    for (unsigned d = 0; d < NDEV; d++)
        for (ino_t i = 1; i <= 5; i++)
            inomap_put(&m, makedev(0, 40 + d), i, d * 10 + (size_t)i);
    assert_int_equal(m.ndevs, NDEV);
    size_t v;
    for (unsigned d = 0; d < NDEV; d++)
        for (ino_t i = 1; i <= 5; i++) {
            assert_true(inomap_get(&m, makedev(0, 40 + d), i, &v));
            assert_int_equal(v, d * 10 + (size_t)i);
            assert_false(inomap_add(&m, makedev(0, 40 + d), i, 0, &v));
            assert_int_equal(v, d * 10 + (size_t)i);
        }
    for (unsigned d = NDEV; d < 2 * NDEV; d++)
        assert_false(inomap_get(&m, makedev(0, 40 + d), 1, &v));
    assert_int_equal(m.n, NDEV * 5);
    inomap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_grow),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_many_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
