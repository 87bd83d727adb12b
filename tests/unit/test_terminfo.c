/* The terminfo entries the binary carries (ui/terminfo.c): every one is a
 * compiled entry of its own name, and when the system lacks it, it is
 * written into a private directory that TERMINFO points to, curses reads it
 * from there, and both are undone afterwards. */
#include "testutil.h"

#include <curses.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <term.h>
#include <unistd.h>

#include "ui/terminfo.h"

static const char *const wanted[] = {"xterm", "xterm-256color", "screen", "screen-256color",
                                     "tmux",  "tmux-256color",  "linux",  "vt100"};

static bool never(const char *term)
{
    (void)term;
    return false;
}

static bool always(const char *term)
{
    (void)term;
    return true;
}

static void test_entries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
        const struct terminfo_entry *e = terminfo_carried(wanted[i]);
        assert_non_null(e);
        assert_true(e->len > 12);
        /* The legacy (0432) or 32-bit number (01036) magic, little-endian. */
        unsigned magic = e->data[0] | (unsigned)e->data[1] << 8;
        assert_true(magic == 0432 || magic == 01036);
        /* The names section begins with the name, then '|' or its end. */
        size_t nl = strlen(wanted[i]);
        assert_memory_equal(e->data + 12, wanted[i], nl);
        assert_true(e->data[12 + nl] == '|' || e->data[12 + nl] == '\0');
    }
    assert_null(terminfo_carried("xterm-unknown"));
    assert_null(terminfo_carried("../x/xterm"));
    assert_null(terminfo_carried(""));
    assert_null(terminfo_carried(NULL));
}

static void test_fallback(void **state)
{
    (void)state;
    char tmp[] = "/tmp/test_terminfo.XXXXXX";
    assert_non_null(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
    setenv("TERMINFO", "/before", 1);

    struct terminfo_fallback f;
    /* The system has it, or it is not carried: nothing happens. */
    assert_int_equal(terminfo_fallback_begin(&f, "tmux-256color", always), 0);
    assert_false(f.active);
    assert_int_equal(terminfo_fallback_begin(&f, "no-such-term", never), 0);
    assert_string_equal(getenv("TERMINFO"), "/before");

    assert_int_equal(terminfo_fallback_begin(&f, "tmux-256color", never), 1);
    assert_true(f.active);
    assert_string_equal(getenv("TERMINFO"), f.dir);
    assert_memory_equal(f.dir, tmp, strlen(tmp));
    struct stat st;
    assert_int_equal(lstat(f.dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    char path[4200];
    snprintf(path, sizeof(path), "%s/t/tmux-256color", f.dir);
    const struct terminfo_entry *e = terminfo_carried("tmux-256color");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char data[16384];
    ssize_t n = read(fd, data, sizeof(data));
    close(fd);
    assert_int_equal(n, (ssize_t)e->len);
    assert_memory_equal(data, e->data, e->len);

    /* curses reads it from there: the entry's 256 colours. */
    int err = 0;
    assert_int_equal(setupterm("tmux-256color", STDOUT_FILENO, &err), OK);
    assert_int_equal(tigetnum("colors"), 256);
    del_curterm(cur_term);

    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", f.dir);
    terminfo_fallback_end(&f);
    assert_false(f.active);
    assert_int_equal(lstat(dir, &st), -1);
    assert_string_equal(getenv("TERMINFO"), "/before");
    terminfo_fallback_end(&f); /* twice is harmless */

    /* TERMINFO unset before is unset after. */
    unsetenv("TERMINFO");
    assert_int_equal(terminfo_fallback_begin(&f, "vt100", never), 1);
    terminfo_fallback_end(&f);
    assert_null(getenv("TERMINFO"));

    unsetenv("TMPDIR");
    assert_int_equal(rmdir(tmp), 0); /* nothing was left in it */
}

static void test_system_has(void **state)
{
    (void)state;
    /* A directory with no entries and no system dirs: nothing is found. */
    setenv("TERMINFO", "/nonexistent-terminfo", 1);
    setenv("TERMINFO_DIRS", "/nonexistent-terminfo", 1);
    assert_false(terminfo_system_has("shmwatch-no-such-terminal"));
    unsetenv("TERMINFO");
    unsetenv("TERMINFO_DIRS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_system_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
