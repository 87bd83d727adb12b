#include "testutil.h"
#include "collect/sysv.h"
#include "util/buf.h"

static void test_parse_fixture(void **state)
{
    (void)state;
    struct buf path;
    buf_init(&path);
    buf_printf(&path, "%s/sysvipc/shm", fixtures_dir());
    struct sysv_list l = {0};
    struct sysroot sys = test_sysroot(fixtures_dir(), NULL);
    assert_int_equal(sysv_collect(&sys, &l), 0);
    sysroot_close(&sys);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.items[0].key, 0);
    assert_int_equal(l.items[0].shmid, 3);
    assert_int_equal(l.items[0].size, 524288);
    assert_int_equal(l.items[0].cpid, 1234);
    assert_int_equal(l.items[0].lpid, 1240);
    assert_int_equal(l.items[0].nattch, 2);
    assert_int_equal(l.items[0].uid, 1000);
    assert_int_equal(l.items[0].rss, 4096);
    assert_int_equal(l.items[1].key, 1627389951);
    assert_int_equal(l.items[1].size, 67108864);
    assert_int_equal(l.items[1].nattch, 0);
    sysv_free(&l);
    buf_free(&path);
}

static void test_old_kernel_columns(void **state)
{
    (void)state;
    /* No rss/swap columns, as older kernels print. */
    const char *text = "       key      shmid perms       size  cpid  lpid nattch   uid   gid  cuid  "
                       "cgid      atime      dtime      ctime\n"
                       "         0          7   600      8192   10    11      1     0     0     0 "
                       "    0          0          0 1700000000\n";
    struct sysv_list l = {0};
    assert_int_equal(sysv_parse(text, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.items[0].shmid, 7);
    assert_int_equal(l.items[0].size, 8192);
    assert_int_equal(l.items[0].rss, 0);
    sysv_free(&l);
}

static void test_bad_header(void **state)
{
    (void)state;
    struct sysv_list l = {0};
    assert_int_equal(sysv_parse("garbage\n1 2 3\n", &l), -22);
    assert_int_equal(l.n, 0);
    assert_int_equal(sysv_parse("", &l), -22);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_fixture),
        cmocka_unit_test(test_old_kernel_columns),
        cmocka_unit_test(test_bad_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
