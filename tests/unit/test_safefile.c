/* util/safefile.c on real files in a fresh temporary directory: planted
 * symbolic links, hard links, FIFOs and other users' files are refused and
 * left as they were; the trust rule of settings files on made-up stats. */
#include "testutil.h"
#include "util/safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct dir {
    char path[64];
    char a[128], b[128];
};

static int setup(void **state)
{
    struct dir *d = calloc(1, sizeof(*d));
    snprintf(d->path, sizeof(d->path), "/tmp/test_safefile.XXXXXX");
    if (!mkdtemp(d->path))
        return -1;
    snprintf(d->a, sizeof(d->a), "%s/a", d->path);
    snprintf(d->b, sizeof(d->b), "%s/b", d->path);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct dir *d = *state;
    DIR *dh = opendir(d->path);
    struct dirent *e;
    while (dh && (e = readdir(dh)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(dh), e->d_name, 0);
    if (dh)
        closedir(dh);
    rmdir(d->path);
    free(d);
    return 0;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static const char *get(const char *path)
{
    static char text[256];
    memset(text, 0, sizeof(text));
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_true(read(fd, text, sizeof(text) - 1) >= 0);
    close(fd);
    return text;
}

static size_t entries(const char *dir)
{
    size_t n = 0;
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    struct dirent *e;
    while ((e = readdir(dh)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dh);
    return n;
}

static void test_append(void **state)
{
    struct dir *d = *state;
    int fd = safefile_append(d->a, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "one\n", 4), 4);
    close(fd);
    struct stat st;
    assert_int_equal(stat(d->a, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    fd = safefile_append(d->a, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK), O_APPEND);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(write(fd, "two\n", 4), 4);
    close(fd);
    assert_string_equal(get(d->a), "one\ntwo\n");
}

static void test_append_symlink(void **state)
{
    struct dir *d = *state;
    put(d->b, "target\n");
    assert_int_equal(symlink(d->b, d->a), 0);
    assert_int_equal(safefile_append(d->a, 0600), -SAFEFILE_ESYMLINK);
    assert_string_equal(get(d->b), "target\n");
    /* A dangling link is not followed to create its target either. */
    unlink(d->b);
    assert_int_equal(safefile_append(d->a, 0600), -SAFEFILE_ESYMLINK);
    assert_int_equal(access(d->b, F_OK), -1);
}

static void test_append_hardlink(void **state)
{
    struct dir *d = *state;
    put(d->b, "target\n");
    assert_int_equal(link(d->b, d->a), 0);
    assert_int_equal(safefile_append(d->a, 0600), -SAFEFILE_ENLINK);
    assert_string_equal(get(d->b), "target\n");
}

static void test_append_not_regular(void **state)
{
    struct dir *d = *state;
    /* A FIFO without a reader: refused at once, not a hang. */
    assert_int_equal(mkfifo(d->a, 0600), 0);
    assert_int_equal(safefile_append(d->a, 0600), -SAFEFILE_ENOTREG);
    assert_int_equal(safefile_append(d->path, 0600), -EISDIR);
    char slash[160];
    snprintf(slash, sizeof(slash), "%s/", d->path);
    assert_int_equal(safefile_append(slash, 0600), -EISDIR);
    snprintf(slash, sizeof(slash), "%s/none/x", d->path);
    assert_int_equal(safefile_append(slash, 0600), -ENOENT);
}

static void test_append_other_owner(void **state)
{
    struct dir *d = *state;
    if (geteuid() != 0) {
        skip(); /* only root can give a file away */
        return;
    }
    put(d->a, "nobody's\n");
    assert_int_equal(chown(d->a, 65534, 65534), 0);
    assert_int_equal(safefile_append(d->a, 0600), -SAFEFILE_EOWNER);
    assert_string_equal(get(d->a), "nobody's\n");
}

static void test_replace(void **state)
{
    struct dir *d = *state;
    assert_int_equal(safefile_replace(d->a, "first\n", 6, 0644), 0);
    assert_string_equal(get(d->a), "first\n");
    assert_int_equal(safefile_replace(d->a, "second\n", 7, 0644), 0);
    assert_string_equal(get(d->a), "second\n");
    struct stat st;
    assert_int_equal(stat(d->a, &st), 0);
    assert_int_equal(st.st_mode & 0022, 0);
    assert_int_equal(entries(d->path), 1); /* no temporary file left */
    assert_int_equal(safefile_replace(d->path, "x", 1, 0644), -SAFEFILE_ENOTREG);
}

/* A rewrite keeps the mode (and group) the file has: chmod 600 holds, as
 * across an editor's save; a new file gets the mode asked for. */
static void test_replace_keeps_mode(void **state)
{
    struct dir *d = *state;
    assert_int_equal(safefile_replace(d->a, "first\n", 6, 0644), 0);
    assert_int_equal(chmod(d->a, 0600), 0);
    gid_t gid = getegid() == 0 ? 12345 : getegid(); /* root may give any group */
    assert_int_equal(chown(d->a, (uid_t)-1, gid), 0);
    assert_int_equal(safefile_replace(d->a, "second\n", 7, 0644), 0);
    assert_string_equal(get(d->a), "second\n");
    struct stat st;
    assert_int_equal(stat(d->a, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_gid, gid);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(chmod(d->a, 0640), 0);
    assert_int_equal(safefile_replace(d->a, "third\n", 6, 0644), 0);
    assert_int_equal(stat(d->a, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(entries(d->path), 1);
    mode_t mask = umask(022);
    assert_int_equal(safefile_replace(d->b, "new\n", 4, 0644), 0);
    umask(mask);
    assert_int_equal(stat(d->b, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
}

static void test_replace_refused(void **state)
{
    struct dir *d = *state;
    put(d->b, "target\n");
    /* The old predictable temporary name, planted: never opened. */
    char old_tmp[160];
    snprintf(old_tmp, sizeof(old_tmp), "%s.tmp.%d", d->a, (int)getpid());
    assert_int_equal(symlink(d->b, old_tmp), 0);
    assert_int_equal(symlink(d->b, d->a), 0);
    assert_int_equal(safefile_replace(d->a, "metrics\n", 8, 0644), -SAFEFILE_ESYMLINK);
    assert_string_equal(get(d->b), "target\n");
    struct stat st;
    assert_int_equal(lstat(d->a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));      /* the link is left as it was */
    assert_int_equal(entries(d->path), 3); /* b, a, the planted temporary name */
    unlink(d->a);
    assert_int_equal(link(d->b, d->a), 0);
    assert_int_equal(safefile_replace(d->a, "metrics\n", 8, 0644), -SAFEFILE_ENLINK);
    assert_string_equal(get(d->b), "target\n");
    unlink(d->a);
    /* With the path free, the planted temporary name changes nothing. */
    assert_int_equal(safefile_replace(d->a, "metrics\n", 8, 0644), 0);
    assert_string_equal(get(d->a), "metrics\n");
    assert_string_equal(get(d->b), "target\n");
    assert_int_equal(entries(d->path), 3);
}

static void test_check(void **state)
{
    (void)state;
    struct stat st = {.st_mode = S_IFREG | 0600, .st_uid = 1000, .st_nlink = 1};
    assert_int_equal(safefile_check(&st, 1000), 0);
    assert_int_equal(safefile_check(&st, 0), -SAFEFILE_EOWNER);
    st.st_nlink = 2;
    assert_int_equal(safefile_check(&st, 1000), -SAFEFILE_ENLINK);
    st.st_mode = S_IFLNK | 0777;
    assert_int_equal(safefile_check(&st, 1000), -SAFEFILE_ESYMLINK);
    st.st_mode = S_IFCHR | 0666;
    assert_int_equal(safefile_check(&st, 1000), -SAFEFILE_ENOTREG);
}

static void test_trusted(void **state)
{
    (void)state;
    struct stat st = {.st_mode = S_IFREG | 0644, .st_uid = 0};
    assert_int_equal(safefile_trusted(&st, 0), 0);
    st.st_mode = S_IFREG | 0664;
    assert_int_equal(safefile_trusted(&st, 0), -SAFEFILE_EWRITABLE);
    st.st_mode = S_IFREG | 0646;
    assert_int_equal(safefile_trusted(&st, 0), -SAFEFILE_EWRITABLE);
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 1000;
    assert_int_equal(safefile_trusted(&st, 0), -SAFEFILE_ENOTROOT);
    /* Not root: the user's own settings are the user's business. */
    st.st_mode = S_IFREG | 0666;
    assert_int_equal(safefile_trusted(&st, 1000), 0);
    assert_int_equal(safefile_trusted(&st, 1001), 0);
}

/* The parents of a path are made, each 0700, the path itself not; a level
 * that is a file stops it with that level's error. */
static void test_make_parents(void **state)
{
    struct dir *d = *state;
    char path[192], x[160], y[160];
    snprintf(x, sizeof(x), "%s/x", d->path);
    snprintf(y, sizeof(y), "%s/x/y", d->path);
    snprintf(path, sizeof(path), "%s/x/y/store", d->path);
    mode_t old = umask(0);
    assert_int_equal(safefile_make_parents(path), 0);
    umask(old);
    struct stat st;
    assert_int_equal(stat(y, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(safefile_make_parents(path), 0); /* all there already */
    put(d->a, "a file");
    snprintf(path, sizeof(path), "%s/a/z/store", d->path);
    assert_int_equal(safefile_make_parents(path), -ENOTDIR);
    assert_int_equal(rmdir(y), 0);
    assert_int_equal(rmdir(x), 0);
}

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(safefile_strerror(SAFEFILE_ESYMLINK),
                        "refused: a symbolic link (never followed)");
    assert_string_equal(safefile_strerror(SAFEFILE_EWRITABLE), "writable by group or others");
    assert_string_equal(safefile_strerror(ENOSPC), strerror(ENOSPC));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_keeps_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_hardlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_not_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_other_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_make_parents, setup, teardown),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_trusted),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
