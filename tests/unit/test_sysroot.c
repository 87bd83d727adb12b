/* util/sysroot.c: the seam opens its three directories or none, a pid's view
 * is pinned by its start time, and a process that has exited (or whose pid
 * is not there) is refused with -ESRCH. Runs on the real /proc with children
 * of its own, and on a fixture tree for the stat parsing. */
#include "testutil.h"
#include "util/sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_open_and_close(void **state)
{
    (void)state;
    struct sysroot r;
    assert_int_equal(sysroot_open(&r, "/proc", "/", "/"), 0);
    assert_true(r.proc >= 0 && r.host >= 0 && r.root >= 0);
    assert_int_equal(r.pid, 0);
    assert_true(sysroot_pid_alive(&r));
    /* The fds are directories: openat below them works. */
    int fd = openat(r.proc, "self/stat", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    close(fd);
    sysroot_close(&r);
    assert_int_equal(r.proc, -1);
    assert_int_equal(r.root, -1);
    sysroot_close(&r); /* twice is harmless */
}

static void test_open_fails_whole(void **state)
{
    (void)state;
    struct sysroot r;
    assert_int_equal(sysroot_open(&r, "/proc", "/", "/nonexistent-root"), -ENOENT);
    assert_int_equal(r.proc, -1);
    assert_int_equal(r.host, -1);
    assert_int_equal(r.root, -1);
    assert_int_equal(sysroot_open(&r, "/etc/passwd", "/", "/"), -ENOTDIR);
}

/* Returns once the child has exited, leaving it a zombie (not reaped). */
static void await_zombie(pid_t child)
{
    siginfo_t si;
    assert_int_equal(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(si.si_pid, child);
}

static void test_pid_view_pinned(void **state)
{
    (void)state;
    struct sysroot host, r;
    assert_int_equal(sysroot_open(&host, "/proc", "/", "/"), 0);
    pid_t child = paused_child();
    assert_int_equal(sysroot_open_pid(&r, &host, child), 0);
    assert_int_equal(r.pid, child);
    assert_true(r.pid_start > 0);
    assert_true(sysroot_pid_alive(&r));
    struct stat a, b;
    assert_int_equal(fstat(r.root, &a), 0);
    assert_int_equal(stat("/", &b), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev); /* same mount namespace */
    /* Once it has exited (a zombie first, then reaped) the view is dead. */
    kill(child, SIGKILL);
    await_zombie(child);
    assert_false(sysroot_pid_alive(&r));
    struct sysroot z;
    assert_int_equal(sysroot_open_pid(&z, &host, child), -ESRCH);
    waitpid(child, NULL, 0);
    assert_false(sysroot_pid_alive(&r));
    assert_int_equal(sysroot_open_pid(&z, &host, child), -ESRCH);
    assert_int_equal(z.root, -1);
    /* A reused pid carries another start time: point the view at pid 1. */
    r.pid = 1; /* started at boot, long before the child */
    assert_false(sysroot_pid_alive(&r));
    sysroot_close(&r);
    sysroot_close(&host);
}

/* On the running system's /proc a view holds a pidfd of its process, and
 * the pidfd answers: alive with no stat to read (its proc fd taken away),
 * dead once the process has exited, zombie or reaped. A view whose pid or
 * start time is changed by hand is answered by the stat again; a fixture
 * /proc gets no pidfd. */
static void test_pid_view_pidfd(void **state)
{
    (void)state;
    struct sysroot host, r;
    assert_int_equal(sysroot_open_system(&host, 0), 0);
    assert_true(host.live);
    assert_true(host.pidfd <= 0);
    pid_t child = paused_child();
    assert_int_equal(sysroot_open_pid(&r, &host, child), 0);
    assert_true(r.pidfd > 2);
    int proc = r.proc;
    r.proc = -1; /* no stat can be read: only the pidfd can say */
    assert_true(sysroot_pid_alive(&r));
    r.proc = proc;
    r.pid_start++; /* by hand: the stat says another process */
    assert_false(sysroot_pid_alive(&r));
    r.pid_start--;
    assert_true(sysroot_pid_alive(&r));
    kill(child, SIGKILL);
    await_zombie(child);
    r.proc = -1;
    assert_false(sysroot_pid_alive(&r)); /* a zombie: the pidfd is readable */
    r.proc = proc;
    waitpid(child, NULL, 0);
    assert_false(sysroot_pid_alive(&r));
    sysroot_close(&r);
    assert_int_equal(r.pidfd, -1);
    sysroot_close(&host);

    struct test_tree t;
    tree_make(&t, "shmwatch-sysroot");
    struct sysroot fx;
    assert_int_equal(sysroot_open(&fx, t.dir, "/", "/"), 0);
    assert_false(fx.live);
    sysroot_close(&fx);
    tree_remove(&t);
}

/* A fixture /proc whose stat has a comm with ") " inside. */
static void test_pid_stat_parse(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "test_sysroot");
    tree_dir(&t, "42/root");
    tree_file(&t, "42/stat",
              "42 (a) b) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n");
    struct sysroot host, r;
    assert_int_equal(sysroot_open(&host, t.dir, "/", "/"), 0);
    assert_int_equal(sysroot_open_pid(&r, &host, 42), 0);
    assert_int_equal(r.pid_start, 987654ULL);
    assert_int_equal(sysroot_open_pid(&r, &host, 43), -ESRCH);
    sysroot_close(&r);
    sysroot_close(&host);
    tree_remove(&t);
}

/* The watcher's pid as the seam's proc numbers it: the real /proc's self
 * is this process; a fixture's self link names its own; without a link,
 * getpid(). */
static void test_self_pid(void **state)
{
    (void)state;
    struct sysroot r;
    assert_int_equal(sysroot_open(&r, "/proc", "/", "/"), 0);
    assert_int_equal(sysroot_self_pid(&r), getpid());
    sysroot_close(&r);
    struct test_tree t;
    tree_make(&t, "test_sysroot");
    assert_int_equal(sysroot_open(&r, t.dir, "/", "/"), 0);
    assert_int_equal(sysroot_self_pid(&r), getpid()); /* no link */
    assert_int_equal(symlink("4242", tree_path(&t, "self")), 0);
    assert_int_equal(sysroot_self_pid(&r), 4242);
    unlink(t.path);
    assert_int_equal(symlink("42x", t.path), 0); /* not a pid */
    assert_int_equal(sysroot_self_pid(&r), getpid());
    sysroot_close(&r);
    tree_remove(&t);
}

/* An fd may be kept open while it is numbered below half the soft limit:
 * at 64, fd 31 may, fd 32 may not; -1 (nothing held) always may, and so
 * may any fd under no limit. */
static void test_fd_room(void **state)
{
    (void)state;
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    struct rlimit low = {.rlim_cur = 64, .rlim_max = was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    assert_true(fd_in_room(-1));
    assert_true(fd_in_room(31));
    assert_false(fd_in_room(32));
    struct sysroot r = {.proc = 3, .host = 4, .root = 40, .pidfd = -1};
    assert_false(sysroot_fd_room(&r));
    r.root = 5;
    assert_true(sysroot_fd_room(&r));
    r.pidfd = 32; /* any of the four decides, the last one too */
    assert_false(sysroot_fd_room(&r));
    r.pidfd = -1;
    r.proc = 50;
    assert_false(sysroot_fd_room(&r));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}

/* Out of fds, the stat that would say whether the process lives cannot be
 * read: that is not its end. sysroot_pid_check says -EMFILE (alive: 1,
 * exited: 0), sysroot_pid_alive stays false (nothing is done on it), and a
 * view cannot be opened, with -EMFILE, not -ESRCH. */
static void test_pid_check_out_of_fds(void **state)
{
    (void)state;
    struct sysroot host, r;
    assert_int_equal(sysroot_open(&host, "/proc", "/", "/"), 0); /* no pidfds: the stat answers */
    pid_t child = paused_child();
    assert_int_equal(sysroot_open_pid(&r, &host, child), 0);
    assert_true(r.pidfd <= 0);
    struct fd_squeeze q;
    fds_squeeze(&q);
    int during = sysroot_pid_check(&r);
    int alive = sysroot_pid_alive(&r);
    struct sysroot v;
    int opened = sysroot_open_pid(&v, &host, child);
    fds_unsqueeze(&q);
    assert_true(q.n == 0);
    assert_int_equal(during, -EMFILE);
    assert_false(alive);
    assert_int_equal(opened, -EMFILE);
    assert_int_equal(v.root, -1);
    assert_int_equal(sysroot_pid_check(&r), 1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(sysroot_pid_check(&r), 0);
    sysroot_close(&r);
    sysroot_close(&host);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_close),
        cmocka_unit_test(test_open_fails_whole),
        cmocka_unit_test(test_pid_view_pinned),
        cmocka_unit_test(test_pid_view_pidfd),
        cmocka_unit_test(test_pid_check_out_of_fds),
        cmocka_unit_test(test_pid_stat_parse),
        cmocka_unit_test(test_self_pid),
        cmocka_unit_test(test_fd_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
