/* act/procid.c and act/signal.c: the identity check (pid plus start time)
 * on recorded stat lines and on real child processes that are ended,
 * refused, or left as zombies. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "act/procid.h"
#include "act/signal.h"
#include "util/procstat.h"

/* signal_opts_default on the real system's seam (opened once, kept). */
static void default_opts(struct signal_opts *o)
{
    static struct sysroot host = {.proc = -1, .host = -1, .root = -1};
    if (host.proc < 0)
        host = test_sysroot("/proc", NULL);
    signal_opts_default(o);
    o->sys = &host;
}

static void test_parse_stat(void **state)
{
    (void)state;
    struct procstat p;
    /* A comm with spaces and a ')' of its own, as a hostile program may set. */
    const char *line = "4242 (evil) (x y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 "
                       "0 987654 12345678 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 3 "
                       "0 0 0 0 0\n";
    assert_true(procstat_parse(line, &p));
    assert_int_equal(p.pid, 4242);
    assert_int_equal(p.ppid, 1);
    assert_int_equal(p.state, 'S');
    assert_string_equal(p.comm, "evil) (x y");
    assert_int_equal(p.start_ticks, 987654);
    /* Truncated before field 22, no parentheses, junk. */
    assert_false(procstat_parse("4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0", &p));
    assert_false(procstat_parse("4242 x S 1", &p));
    assert_false(procstat_parse("", &p));
    assert_false(procstat_parse("abc (x) S 1", &p));
}

static void test_identity(void **state)
{
    (void)state;
    int proc = open("/proc", O_RDONLY | O_DIRECTORY);
    assert_true(proc >= 0);
    struct procid me;
    assert_int_equal(procid_read(proc, getpid(), &me), 0);
    assert_int_equal(me.pid, getpid());
    assert_int_equal(me.euid, geteuid());
    assert_true(procid_same(getpid(), me.start_ticks, &me));
    /* The same pid with another start time is another process. */
    assert_false(procid_same(getpid(), me.start_ticks + 1, &me));
    assert_false(procid_same(getpid() + 1, me.start_ticks, &me));
    assert_int_equal(procid_read(proc, 999999999, &me), -ESRCH);
    close(proc);
    struct procid other = {.ruid = 1001, .euid = 1001};
    assert_true(procid_may_signal(0, &other));
    assert_true(procid_may_signal(1001, &other));
    assert_false(procid_may_signal(1000, &other));
    struct procid setuid_prog = {.ruid = 1000, .euid = 0};
    assert_false(procid_may_signal(1000, &setuid_prog));
}

/* A child that ignores SIGTERM or not; waits to be killed. */
static pid_t child(bool ignore_term)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (ignore_term)
            signal(SIGTERM, SIG_IGN);
        close(p[0]);
        (void)!write(p[1], "x", 1);
        for (;;)
            pause();
    }
    close(p[1]);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1); /* its handler is in place */
    close(p[0]);
    return pid;
}

static void target_of(pid_t pid, struct signal_target *t)
{
    int proc = open("/proc", O_RDONLY | O_DIRECTORY);
    struct procid p;
    assert_int_equal(procid_read(proc, pid, &p), 0);
    close(proc);
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->ppid = p.ppid;
    t->start_ticks = p.start_ticks;
    t->uid = p.euid;
    memcpy(t->comm, p.comm, sizeof(t->comm));
}

static int reaped_status(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

static void test_end_term_and_kill(void **state)
{
    (void)state;
    struct signal_target t[2];
    pid_t polite = child(false), stubborn = child(true);
    target_of(polite, &t[0]);
    target_of(stubborn, &t[1]);
    struct signal_opts o;
    default_opts(&o);
    o.timeout_s = 0.3;
    struct signal_result res[2];
    signal_end(&o, t, 2, res);
    assert_int_equal(res[0].outcome, SIGNAL_ENDED);
    assert_int_equal(res[1].outcome, SIGNAL_KILLED);
    assert_true(res[1].waited_s >= 0.3);
    assert_int_equal(reaped_status(polite), SIGTERM);
    assert_int_equal(reaped_status(stubborn), SIGKILL);
    /* Both are gone now: nothing to signal. */
    signal_end(&o, t, 1, res);
    assert_int_equal(res[0].outcome, SIGNAL_GONE);
}

/* The test hook (signal_set_test_pause) runs after the scan and before the
 * first check: a target that exits in it is found gone, never signalled. */
static pid_t doomed;
static int pauses;

static void pause_ends_target(void)
{
    pauses++;
    kill(doomed, SIGKILL);
    assert_int_equal(reaped_status(doomed), SIGKILL);
}

static void test_pause_hook(void **state)
{
    (void)state;
    struct signal_target t;
    doomed = child(false);
    target_of(doomed, &t);
    struct signal_opts o;
    default_opts(&o);
    o.timeout_s = 0.3;
    struct signal_result res;
    pauses = 0;
    signal_set_test_pause(pause_ends_target);
    signal_end(&o, &t, 1, &res);
    signal_set_test_pause(NULL);
    assert_int_equal(pauses, 1);
    assert_int_equal(res.outcome, SIGNAL_GONE);
    /* Unset, nothing pauses. */
    signal_end(&o, &t, 1, &res);
    assert_int_equal(pauses, 1);
}

/* Kernels before 5.3 have no pidfds: a seccomp filter makes pidfd_open say
 * ENOSYS in a forked tester, which ends two real children through kill()
 * and the (pid, start time) check. One of them, on SIGTERM, makes its stat
 * unreadable (its entry in a /proc of links is swapped for a directory
 * whose "stat" and "status" are directories: EISDIR, as EMFILE or ENOMEM
 * would be): it is not known to have exited, so it is not called ended,
 * and it is not sent SIGKILL on an identity that could not be checked. */
static char swap_from[PATH_MAX], swap_to[PATH_MAX];

static void swap_on_term(int sig)
{
    (void)sig;
    (void)!rename(swap_from, swap_to);
}

static void no_pidfds(void)
{
    if (!seccomp_refuse(SYS_pidfd_open, -1, ENOSYS))
        _exit(100);
    if (syscall(SYS_pidfd_open, getpid(), 0) >= 0 || errno != ENOSYS)
        _exit(101);
}

static void test_end_without_pidfds(void **state)
{
    (void)state;
    struct test_tree tree;
    tree_make(&tree, "shmwatch-nopidfd");
    assert_int_equal(mkdir(tree_path(&tree, "unreadable"), 0755), 0);
    assert_int_equal(mkdir(tree_path(&tree, "unreadable/stat"), 0755), 0);
    /* Its status as well: a swap between the reads of stat and status
     * would otherwise find no status, which is how a process that exited
     * in between looks (ENOENT), and call it ended. */
    assert_int_equal(mkdir(tree_path(&tree, "unreadable/status"), 0755), 0);
    assert_int_equal(symlink("unreadable", tree_path(&tree, "swap")), 0);
    struct signal_target t[2];
    pid_t stubborn = child(true);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t hiding = test_fork();
    assert_true(hiding >= 0);
    if (hiding == 0) {
        snprintf(swap_from, sizeof(swap_from), "%s/swap", tree.dir);
        snprintf(swap_to, sizeof(swap_to), "%s/%d", tree.dir, (int)getpid());
        signal(SIGTERM, swap_on_term);
        (void)!write(ready[1], "x", 1);
        for (;;)
            pause();
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    close(ready[1]);
    char name[32], real[32];
    pid_t both[2] = {stubborn, hiding};
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof(name), "%d", (int)both[i]);
        snprintf(real, sizeof(real), "/proc/%d", (int)both[i]);
        assert_int_equal(symlink(real, tree_path(&tree, name)), 0);
        target_of(both[i], &t[i]);
    }
    pid_t tester = fork();
    assert_true(tester >= 0);
    if (tester == 0) {
        no_pidfds();
        struct sysroot links;
        if (sysroot_open(&links, tree.dir, "/", "/") != 0)
            _exit(102);
        struct signal_opts o;
        signal_opts_default(&o);
        o.sys = &links;
        o.timeout_s = 0.3;
        o.kill_wait_s = 0.5;
        struct signal_result res[2];
        signal_end(&o, t, 2, res);
        bool said = strstr(res[1].reason, "SIGKILL was not sent") != NULL &&
                    strstr(res[1].reason, strerror(EISDIR)) != NULL;
        _exit(res[0].outcome == SIGNAL_KILLED && res[1].outcome == SIGNAL_FAILED && said ? 0
                                                                                          : 1);
    }
    /* What happened is read first and asserted last, so that a failure
     * leaves no child behind. */
    int tested, st;
    bool waited = waitpid(tester, &tested, 0) == tester;
    /* Not signalled past SIGTERM, the hiding one still runs until ended here. */
    bool ran_on = waitpid(hiding, &st, WNOHANG) == 0;
    kill(hiding, SIGKILL);
    kill(stubborn, SIGKILL);
    int hiding_end = waitpid(hiding, &st, 0) == hiding && WIFSIGNALED(st) ? WTERMSIG(st) : -1;
    int stubborn_end = waitpid(stubborn, &st, 0) == stubborn && WIFSIGNALED(st) ? WTERMSIG(st) : -1;
    tree_remove(&tree);
    assert_true(waited && WIFEXITED(tested));
    assert_int_equal(WEXITSTATUS(tested), 0);
    assert_true(ran_on);
    assert_int_equal(hiding_end, SIGKILL);
    assert_int_equal(stubborn_end, SIGKILL);
}

static void test_refusals(void **state)
{
    (void)state;
    pid_t pid = child(false);
    struct signal_target t;
    target_of(pid, &t);
    struct signal_opts o;
    default_opts(&o);
    o.timeout_s = 0.1;
    struct signal_result res;
    /* A recorded start time that differs: the pid now belongs to another
     * process (as after pid reuse), which must not be signalled. */
    t.start_ticks++;
    signal_end(&o, &t, 1, &res);
    assert_int_equal(res.outcome, SIGNAL_REFUSED);
    assert_non_null(strstr(res.reason, "different process"));
    signal_send(&o, &t, SIGKILL, &res);
    assert_int_equal(res.outcome, SIGNAL_REFUSED);
    t.start_ticks--;
    /* A caller who is not its owner. */
    o.uid = geteuid() + 1;
    signal_send(&o, &t, SIGKILL, &res);
    assert_int_equal(res.outcome, SIGNAL_REFUSED);
    assert_non_null(strstr(res.reason, "not by you"));
    /* A planning refusal is reported without a signal. */
    o.uid = geteuid();
    t.refuse = "not today";
    signal_end(&o, &t, 1, &res);
    assert_int_equal(res.outcome, SIGNAL_REFUSED);
    t.refuse = NULL;
    /* Dry: checked, not signalled. */
    o.dry_run = true;
    signal_end(&o, &t, 1, &res);
    assert_int_equal(res.outcome, SIGNAL_WOULD);
    assert_int_equal(kill(pid, 0), 0); /* still alive after all of the above */
    o.dry_run = false;
    signal_send(&o, &t, SIGKILL, &res);
    assert_int_equal(res.outcome, SIGNAL_SENT);
    assert_int_equal(reaped_status(pid), SIGKILL);
}

static volatile sig_atomic_t chld_count;

static void on_chld(int sig)
{
    (void)sig;
    chld_count++;
}

static void test_zombie_parent_nudged(void **state)
{
    (void)state;
    struct sigaction sa = {.sa_handler = on_chld}, old;
    sigaction(SIGCHLD, &sa, &old);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    /* Wait for it to become a zombie (we do not reap it). */
    int proc = open("/proc", O_RDONLY | O_DIRECTORY);
    struct procid p;
    for (int i = 0; i < 500; i++) {
        assert_int_equal(procid_read(proc, pid, &p), 0);
        if (p.state == 'Z')
            break;
        usleep(2000);
    }
    close(proc);
    assert_int_equal(p.state, 'Z');
    struct signal_target t;
    target_of(pid, &t);
    struct signal_opts o;
    default_opts(&o);
    sig_atomic_t before = chld_count;
    struct signal_result res;
    /* A dry run makes the checks of a real one: a caller who may not
     * signal the parent is refused, not told that it would be sent. */
    o.dry_run = true;
    o.uid = geteuid() + 1;
    signal_zombie(&o, &t, &res);
    assert_int_equal(res.outcome, SIGNAL_REFUSED);
    assert_non_null(strstr(res.reason, "not by you"));
    o.uid = geteuid();
    signal_zombie(&o, &t, &res);
    assert_int_equal(res.outcome, SIGNAL_WOULD);
    assert_false(res.parent_nudged);
    assert_true(chld_count == before);
    o.dry_run = false;
    signal_zombie(&o, &t, &res);
    /* We are its parent and ignore the hint: it stays a zombie, explained. */
    assert_int_equal(res.outcome, SIGNAL_ZOMBIE);
    assert_int_equal(res.parent, getpid());
    assert_true(res.parent_nudged);
    assert_true(chld_count > before);
    assert_non_null(strstr(res.reason, "already dead"));
    /* Sending a zombie SIGTERM is reported as an exit, not attempted. */
    signal_end(&o, &t, 1, &res);
    assert_int_equal(res.outcome, SIGNAL_GONE);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    signal_zombie(&o, &t, &res);
    assert_int_equal(res.outcome, SIGNAL_REAPED);
    sigaction(SIGCHLD, &old, NULL);
}

static void test_names(void **state)
{
    (void)state;
    char a[SIGNAL_NAME_MAX], b[SIGNAL_NAME_MAX];
    assert_string_equal(signal_name(SIGTERM, a, sizeof(a)), "TERM");
    assert_string_equal(signal_name(SIGCHLD, a, sizeof(a)), "CHLD");
    /* An unknown number goes into the caller's buffer, each call its own:
     * nothing static to share between threads or to be written by a caller. */
    const char *n42 = signal_name(42, a, sizeof(a));
    const char *nmin = signal_name(-2147483647 - 1, b, sizeof(b));
    assert_ptr_equal(n42, a);
    assert_ptr_equal(nmin, b);
    assert_string_equal(n42, "SIG42");
    assert_string_equal(nmin, "SIG-2147483648");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_end_term_and_kill),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_pause_hook),
        cmocka_unit_test(test_end_without_pidfds),
        cmocka_unit_test(test_zombie_parent_nudged),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
