/* User names from a root's /etc/passwd (util/passwd.c): the Debian layout,
 * hostile and malformed lines, a link out of the root, a missing and a huge
 * file (tests/fixtures/passwd). */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/passwd.h"

static int open_root(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/passwd/%s", fixtures_dir(), name);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    return fd;
}

static void test_debian(void **state)
{
    (void)state;
    int fd = open_root("debian");
    char n[64];
    assert_int_equal(passwd_name_at(fd, 0, n, sizeof(n)), 0);
    assert_string_equal(n, "root");
    assert_int_equal(passwd_name_at(fd, 42, n, sizeof(n)), 0);
    assert_string_equal(n, "_apt");
    assert_int_equal(passwd_name_at(fd, 65534, n, sizeof(n)), 0);
    assert_string_equal(n, "nobody");
    /* Two lines for 1000: the first wins, as in glibc's files module. */
    assert_int_equal(passwd_name_at(fd, 1000, n, sizeof(n)), 0);
    assert_string_equal(n, "trainer");
    assert_int_equal(passwd_name_at(fd, 4294967294u, n, sizeof(n)), 0);
    assert_string_equal(n, "big");
    assert_int_equal(passwd_name_at(fd, 7, n, sizeof(n)), -ENOENT);
    /* A name that does not fit is an error, never a cut name. */
    assert_int_equal(passwd_name_at(fd, 0, n, 4), -ENAMETOOLONG);
    assert_int_equal(passwd_name_at(fd, 0, n, 5), 0);
    assert_string_equal(n, "root");
    close(fd);
}

static void test_hostile(void **state)
{
    (void)state;
    int fd = open_root("hostile");
    char n[64];
    /* NIS compat lines, an empty name, a missing, negative, hexadecimal,
     * overflowing or too long uid, the invalid uid: none is a match. */
    assert_int_equal(passwd_name_at(fd, 0, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_name_at(fd, 2000, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_name_at(fd, 2001, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_name_at(fd, 16, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_name_at(fd, 2002, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_name_at(fd, (uid_t)-1, n, sizeof(n)), -ENOENT);
    /* A line broken by a newline is two lines; control bytes come back as
     * they are (the dashboard escapes them). */
    assert_int_equal(passwd_name_at(fd, 3000, n, sizeof(n)), 0);
    assert_string_equal(n, "line");
    assert_int_equal(passwd_name_at(fd, 3003, n, sizeof(n)), 0);
    assert_string_equal(n, "esc\x1b[31mred");
    assert_int_equal(passwd_name_at(fd, 3001, n, sizeof(n)), 0);
    assert_string_equal(n, "cr\r");
    /* The last line without its newline still counts. */
    assert_int_equal(passwd_name_at(fd, 3002, n, sizeof(n)), 0);
    assert_string_equal(n, "noeol");
    close(fd);
}

static void test_text(void **state)
{
    (void)state;
    char n[16];
    /* A NUL inside a name refuses that line; text after it is still read. */
    static const char t[] = "a\0b:x:5:0::/:/bin/sh\nc:x:5:0::/:/bin/sh\n";
    assert_int_equal(passwd_find(t, sizeof(t) - 1, 5, n, sizeof(n)), 0);
    assert_string_equal(n, "c");
    assert_int_equal(passwd_find("", 0, 0, n, sizeof(n)), -ENOENT);
    assert_int_equal(passwd_find("x:y:1", 5, 1, n, sizeof(n)), 0);
    assert_string_equal(n, "x");
    /* len bounds the text: the match past it is not seen. */
    assert_int_equal(passwd_find("x:y:1\nz:y:2\n", 6, 2, n, sizeof(n)), -ENOENT);
}

static void test_link_missing_huge(void **state)
{
    (void)state;
    char n[64];
    /* etc/passwd -> /etc/passwd: never the host's file through a link. */
    int fd = open_root("link");
    int rc = passwd_name_at(fd, 0, n, sizeof(n));
    assert_true(rc == -ELOOP || rc == -ENOENT);
    close(fd);
    fd = open_root("none");
    assert_int_equal(passwd_name_at(fd, 0, n, sizeof(n)), -ENOENT);
    close(fd);

    /* A file over PASSWD_MAX is refused whole. */
    char dir[] = "/tmp/test_passwd.XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dfd >= 0);
    assert_int_equal(mkdirat(dfd, "etc", 0700), 0);
    int f = openat(dfd, "etc/passwd", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(f >= 0);
    const char line[] = "root:x:0:0::/:/bin/sh\n";
    assert_int_equal(write(f, line, sizeof(line) - 1), (ssize_t)(sizeof(line) - 1));
    assert_int_equal(ftruncate(f, PASSWD_MAX + 1), 0);
    close(f);
    assert_int_equal(passwd_name_at(dfd, 0, n, sizeof(n)), -EFBIG);
    char path[64];
    snprintf(path, sizeof(path), "%s/etc/passwd", dir);
    assert_int_equal(truncate(path, sizeof(line) - 1), 0);
    assert_int_equal(passwd_name_at(dfd, 0, n, sizeof(n)), 0);
    assert_string_equal(n, "root");
    unlinkat(dfd, "etc/passwd", 0);
    unlinkat(dfd, "etc", AT_REMOVEDIR);
    close(dfd);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debian),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_link_missing_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
