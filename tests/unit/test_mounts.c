#include <errno.h>
#include <fcntl.h>
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
    /* A device is MAJ:MIN in decimal, each below 2^32, nothing else. */
    char d[] = "36 35 98: / /x rw - tmpfs t rw";
    char f[] = "36 35 :0 / /x rw - tmpfs t rw";
    char g[] = "36 35 4294967296:0 / /x rw - tmpfs t rw";
    char h[] = "36 35 8:1x / /x rw - tmpfs t rw";
    char k[] = "36 35 4294967295:1048575 / /x rw - tmpfs t rw";
    struct mountinfo_entry e;
    assert_false(mountinfo_parse_line(a, &e));
    assert_false(mountinfo_parse_line(b, &e));
    assert_false(mountinfo_parse_line(c, &e));
    assert_false(mountinfo_parse_line(d, &e));
    assert_false(mountinfo_parse_line(f, &e));
    assert_false(mountinfo_parse_line(g, &e));
    assert_false(mountinfo_parse_line(h, &e));
    assert_true(mountinfo_parse_line(k, &e));
    assert_int_equal(e.major, 4294967295u);
    assert_int_equal(e.minor, 1048575);
}

static void path_of(struct buf *b, const char *rel)
{
    buf_reset(b);
    buf_printf(b, "%s/mounts/%s", fixtures_dir(), rel);
}

/* Reads the fixture mountinfo at path and collects from it, the mounts
 * reached below root (a seam opened on it). */
static void collect(const char *path, const char *root, const char *const *extra, size_t nextra,
                    struct mount_list *ml, struct warnings *w)
{
    struct mountinfo mi;
    assert_int_equal(mountinfo_read(AT_FDCWD, path, &mi), 0);
    struct sysroot sys;
    assert_int_equal(sysroot_open(&sys, fixtures_dir(), "/", root), 0);
    mounts_collect(&sys, &mi, extra, nextra, ml, w);
    sysroot_close(&sys);
    mountinfo_free(&mi);
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
    collect(mi.data, root.data, NULL, 0, &ml, &w);
    /* The stacked /dev/shm: the top mount (0:45) wins; /run/shm is the same
     * device and is listed once. */
    assert_int_equal(ml.n, 1);
    assert_string_equal(ml.items[0].path, "/dev/shm");
    assert_int_equal(ml.items[0].dev, makedev(0, 45));
    assert_true(ml.items[0].stat_ok);
    assert_true(ml.items[0].size > 0);
    /* Reached below the seam's root: from a root without it, the size is
     * unknown. */
    struct buf other;
    buf_init(&other);
    path_of(&other, "");
    struct sysroot sys;
    assert_int_equal(sysroot_open(&sys, fixtures_dir(), "/", other.data), 0);
    mounts_refresh(&sys, &ml);
    assert_false(ml.items[0].stat_ok);
    assert_int_equal(ml.items[0].stat_err, ENOENT);
    assert_int_equal(ml.items[0].size, 0);
    sysroot_close(&sys);
    buf_free(&other);
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
    collect(mi.data, "/", NULL, 0, &ml, &w);
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
    collect(mi.data, root.data, extra, 3, &ml, &w);
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

static void test_read_unreadable(void **state)
{
    (void)state;
    struct mountinfo mi;
    assert_int_equal(mountinfo_read(AT_FDCWD, "/nonexistent/mountinfo", &mi), -ENOENT);
    assert_int_equal(mi.n, 0);
    assert_null(mountinfo_find(&mi, "/dev/shm"));
    mountinfo_free(&mi);
}

/* Of two mounts stacked on one point, the later (the top one) is found. */
static void test_read_and_find(void **state)
{
    (void)state;
    struct buf mi_path;
    buf_init(&mi_path);
    path_of(&mi_path, "mountinfo");
    struct mountinfo mi;
    assert_int_equal(mountinfo_read(AT_FDCWD, mi_path.data, &mi), 0);
    assert_true(mi.n >= 3);
    const struct mountinfo_entry *e = mountinfo_find(&mi, "/dev/shm");
    assert_non_null(e);
    assert_int_equal(e->major, 0);
    assert_int_equal(e->minor, 45);
    assert_string_equal(e->fstype, "tmpfs");
    assert_null(mountinfo_find(&mi, "/dev/sh"));
    mountinfo_free(&mi);
    buf_free(&mi_path);
}

/* One rule hides a mount: another stacked on it at the same path. The order
 * of the lines decides nothing (a mount slid beneath the top one is listed
 * after it), and a mount covered by one on a parent directory is not hidden
 * by it (its path leads elsewhere: the reader finds that by the device). */
static void test_hidden_rule(void **state)
{
    (void)state;
    struct mountinfo mi;
    mountinfo_parse(strdup("22 1 254:0 / / rw - ext4 /dev/vda rw\n"
                           "26 41 0:45 / /dev/shm rw - tmpfs shm rw\n"
                           "41 22 0:46 / /dev/shm rw - tmpfs shm rw\n"
                           "50 22 0:47 / /run/shm rw - tmpfs shm rw\n"
                           "51 22 0:48 / /run rw - tmpfs run rw\n"
                           "52 51 0:49 / /run/shm rw - tmpfs shm rw\n"),
                    &mi);
    assert_int_equal(mi.n, 6);
    assert_int_equal(mi.malformed, 0);
    assert_false(mountinfo_hidden(&mi, 1));
    assert_true(mountinfo_hidden(&mi, 2)); /* beneath 26, listed after it */
    const struct mountinfo_entry *e = mountinfo_find(&mi, "/dev/shm");
    assert_non_null(e);
    assert_int_equal(e->minor, 45);
    assert_int_equal(e->id, 26);
    assert_int_equal(e->parent, 41);
    /* 50 is covered by /run (51), not stacked on: neither /run/shm is hidden,
     * and the last listed is found. */
    assert_false(mountinfo_hidden(&mi, 3));
    assert_false(mountinfo_hidden(&mi, 5));
    assert_int_equal(mountinfo_find(&mi, "/run/shm")->minor, 49);
    mountinfo_free(&mi);

    mountinfo_parse(strdup("x\n22 1 254:0 / / rw - ext4 /dev/vda rw\n4294967296 1 0:1 / /a rw - "
                           "tmpfs t rw\n"),
                    &mi);
    assert_int_equal(mi.n, 1);
    assert_int_equal(mi.malformed, 2);
    mountinfo_free(&mi);
}

static void test_parse_super_opts(void **state)
{
    (void)state;
    char v1[] = "416 407 0:33 /docker/abc /sys/fs/cgroup/memory ro,nosuid master:17 - cgroup "
                "cgroup rw,memory";
    struct mountinfo_entry e;
    assert_true(mountinfo_parse_line(v1, &e));
    assert_string_equal(e.root, "/docker/abc");
    assert_string_equal(e.mountpoint, "/sys/fs/cgroup/memory");
    assert_string_equal(e.fstype, "cgroup");
    assert_string_equal(e.super_opts, "rw,memory");

    char esc[] = "40 31 0:37 /a\\040b /mnt/my\\040cgroups rw - cgroup2 none";
    assert_true(mountinfo_parse_line(esc, &e));
    assert_string_equal(e.root, "/a b");
    assert_string_equal(e.mountpoint, "/mnt/my cgroups");
    assert_string_equal(e.super_opts, "");

    char shortl[] = "40 31 0:37 /";
    assert_false(mountinfo_parse_line(shortl, &e));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_line),        cmocka_unit_test(test_parse_escapes),
        cmocka_unit_test(test_parse_malformed),   cmocka_unit_test(test_collect_default),
        cmocka_unit_test(test_collect_not_tmpfs), cmocka_unit_test(test_collect_extra_and_missing),
        cmocka_unit_test(test_read_unreadable),   cmocka_unit_test(test_read_and_find),
        cmocka_unit_test(test_parse_super_opts),  cmocka_unit_test(test_hidden_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
