#include <sys/sysmacros.h>

#include "testutil.h"
#include "collect/mounts.h"
#include "util/buf.h"

static void test_parse_line(void **state)
{
    (void)state;
    char line[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:2 - ext3 /dev/root "
                  "rw,errors=continue";
    struct mountinfo_entry e;
    assert_true(mountinfo_parse_line(line, &e));
    assert_int_equal(e.major, 98);
    assert_int_equal(e.minor, 0);
    assert_string_equal(e.root, "/mnt1");
    assert_string_equal(e.mountpoint, "/mnt2");
    assert_string_equal(e.fstype, "ext3");
    assert_string_equal(e.source, "/dev/root");
    assert_string_equal(e.options, "rw,noatime");
}

static void test_parse_escapes(void **state)
{
    (void)state;
    char line[] = "30 22 0:50 / /mnt/my\\040data\\011tab rw - tmpfs none rw";
    struct mountinfo_entry e;
    assert_true(mountinfo_parse_line(line, &e));
    assert_string_equal(e.mountpoint, "/mnt/my data\ttab");
    assert_string_equal(e.fstype, "tmpfs");
}

static void test_parse_malformed(void **state)
{
    (void)state;
    char a[] = "36 35 98:0 /mnt1 /mnt2 rw master:1";
    char b[] = "36 35 nodev / /x rw - tmpfs t rw";
    char c[] = "";
    struct mountinfo_entry e;
    assert_false(mountinfo_parse_line(a, &e));
    assert_false(mountinfo_parse_line(b, &e));
    assert_false(mountinfo_parse_line(c, &e));
}

static void path_of(struct buf *b, const char *rel)
{
    buf_reset(b);
    buf_printf(b, "%s/mounts/%s", fixtures_dir(), rel);
}

static void test_collect_default(void **state)
{
    (void)state;
    struct buf mi, root;
    buf_init(&mi);
    buf_init(&root);
    path_of(&mi, "mountinfo");
    path_of(&root, "root");
    struct mount_list ml = {0};
    struct warnings w;
    warn_init(&w);
    assert_int_equal(mounts_collect(mi.data, root.data, NULL, 0, &ml, &w), 0);
    /* The stacked /dev/shm: the top mount (0:45) wins; /run/shm is the same
     * device and is listed once. */
    assert_int_equal(ml.n, 1);
    assert_string_equal(ml.items[0].path, "/dev/shm");
    assert_int_equal(ml.items[0].dev, makedev(0, 45));
    assert_true(ml.items[0].stat_ok);
    assert_true(ml.items[0].size > 0);
    assert_non_null(strstr(ml.items[0].access, "/mounts/root/dev/shm"));
    assert_int_equal(mounts_find_dev(&ml, makedev(0, 45)), 0);
    assert_int_equal(mounts_find_dev(&ml, makedev(0, 23)), -1);
    mounts_free(&ml);
    warn_free(&w);
    buf_free(&mi);
    buf_free(&root);
}

static void test_collect_not_tmpfs(void **state)
{
    (void)state;
    struct buf mi;
    buf_init(&mi);
    path_of(&mi, "mountinfo-no-tmpfs");
    struct mount_list ml = {0};
    struct warnings w;
    warn_init(&w);
    assert_int_equal(mounts_collect(mi.data, "", NULL, 0, &ml, &w), 0);
    assert_int_equal(ml.n, 0);
    mounts_free(&ml);
    warn_free(&w);
    buf_free(&mi);
}

static void test_collect_extra_and_missing(void **state)
{
    (void)state;
    struct buf mi, root;
    buf_init(&mi);
    buf_init(&root);
    path_of(&mi, "mountinfo");
    path_of(&root, "root");
    const char *extra[] = {"/run/shm", "/does/not/exist", "/dev/shm/.keep"};
    struct mount_list ml = {0};
    struct warnings w;
    warn_init(&w);
    assert_int_equal(mounts_collect(mi.data, root.data, extra, 3, &ml, &w), 0);
    assert_int_equal(ml.n, 1);
    assert_string_equal(ml.items[0].path, "/run/shm");
    assert_string_equal(ml.items[0].fstype, "tmpfs");
    assert_int_equal(w.n, 2);
    assert_string_equal(w.msg[0], "--mount /does/not/exist: No such file or directory");
    assert_string_equal(w.msg[1], "--mount /dev/shm/.keep: not a directory");
    mounts_free(&ml);
    warn_free(&w);
    buf_free(&mi);
    buf_free(&root);
}

static void test_collect_unreadable(void **state)
{
    (void)state;
    struct mount_list ml = {0};
    struct warnings w;
    warn_init(&w);
    assert_true(mounts_collect("/nonexistent/mountinfo", "", NULL, 0, &ml, &w) < 0);
    assert_int_equal(w.n, 1);
    mounts_free(&ml);
    warn_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_line),
        cmocka_unit_test(test_parse_escapes),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_collect_default),
        cmocka_unit_test(test_collect_not_tmpfs),
        cmocka_unit_test(test_collect_extra_and_missing),
        cmocka_unit_test(test_collect_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
