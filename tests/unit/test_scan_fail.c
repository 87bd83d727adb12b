/* scan_run's failures leave a valid scan that carries its warnings: the
 * watched process gone, its pid taken by another process, its namespaces
 * unreadable. Each such scan is modelled, reported and freed like any
 * other, with no special case (the fixture /proc is tests/fixtures/scanfail:
 * pid 4242 started at tick 777 and shows no mountinfo). */
#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/scan.h"
#include "model/model.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/sysroot.h"

/* The fixture system, watched through pid (started at tick start). */
static void open_fixture(struct sysroot *sys, pid_t pid, unsigned long long start)
{
    char proc[512], root[512];
    snprintf(proc, sizeof(proc), "%s/scanfail/proc", fixtures_dir());
    snprintf(root, sizeof(root), "%s/scanfail", fixtures_dir());
    assert_int_equal(sysroot_open(sys, proc, root, root), 0);
    sys->pid = pid;
    sys->pid_start = start;
}

/* The scan is usable as any scan: a model, a JSON snapshot, a text report
 * that holds the warning, and scan_free. */
static void use_as_any(struct scan *s, const char *warning)
{
    assert_true(s->time.tv_sec > 0);
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(s, &mo, &m);
    assert_int_equal(m.nsegs, 0);
    struct buf out;
    buf_init(&out);
    report_json(&out, &m);
    assert_non_null(strstr(out.data, "\"segments\""));
    buf_free(&out);
    buf_init(&out);
    report_text(&out, &m, false);
    assert_non_null(strstr(out.data, warning));
    buf_free(&out);
    model_free(&m);
    scan_free(s);
}

static void expect_warning(const struct scan *s, const char *want)
{
    assert_int_equal(s->warn.n, 1);
    if (!strstr(s->warn.msg[0], want))
        fail_msg("warning \"%s\" does not say \"%s\"", s->warn.msg[0], want);
}

static void test_target_exited(void **state)
{
    (void)state;
    struct sysroot sys;
    open_fixture(&sys, 4343, 777);
    struct scan_opts o = {.sys = &sys};
    struct scan s;
    assert_int_equal(scan_run(&o, &s), -ESRCH);
    assert_int_equal(s.target_state, SCAN_TARGET_EXITED);
    expect_warning(&s, "pid 4343 has exited");
    use_as_any(&s, "pid 4343 has exited");
    sysroot_close(&sys);
}

static void test_target_replaced(void **state)
{
    (void)state;
    struct sysroot sys;
    open_fixture(&sys, 4242, 700);
    struct scan_opts o = {.sys = &sys};
    struct scan s;
    assert_int_equal(scan_run(&o, &s), -ESRCH);
    assert_int_equal(s.target_state, SCAN_TARGET_REPLACED);
    expect_warning(&s, "its pid now belongs to another process");
    use_as_any(&s, "pid 4242 has exited");
    sysroot_close(&sys);
}

/* A newcomer that takes the pid within the clock tick of the watched
 * process's start shows the same start time: the pidfd, which names the
 * process and not its pid, says it has exited. Here the pidfd is of a child
 * that has exited, the stat the fixture's pid 4242 at tick 777. */
static void test_target_replaced_same_tick(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    if (pidfd < 0) {
        waitpid(child, NULL, 0);
        skip(); /* a kernel before 5.3: no pidfd to pin by */
    }
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 10000), 1); /* it has exited */
    assert_int_equal(waitpid(child, NULL, 0), child);
    struct sysroot sys;
    open_fixture(&sys, 4242, 777);
    sys.pidfd = pidfd;
    sys.pidfd_pid = 4242;
    sys.pidfd_start = 777;
    struct scan_opts o = {.sys = &sys};
    struct scan s;
    assert_int_equal(scan_run(&o, &s), -ESRCH);
    assert_int_equal(s.target_state, SCAN_TARGET_REPLACED);
    expect_warning(&s, "its pid now belongs to another process");
    scan_free(&s);
    sysroot_close(&sys);
}

static void test_namespaces_unreadable(void **state)
{
    (void)state;
    struct sysroot sys;
    open_fixture(&sys, 4242, 777);
    struct scan_opts o = {.sys = &sys};
    struct scan s;
    assert_int_equal(scan_run(&o, &s), -ENOENT);
    assert_int_equal(s.target_state, SCAN_TARGET_OK);
    /* The fixture has no self/mountinfo either: that is said first. */
    assert_int_equal(s.warn.n, 2);
    assert_non_null(strstr(s.warn.msg[1], "cannot read the namespaces of pid 4242"));
    use_as_any(&s, "cannot read the namespaces of pid 4242");
    sysroot_close(&sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_exited),
        cmocka_unit_test(test_target_replaced),
        cmocka_unit_test(test_target_replaced_same_tick),
        cmocka_unit_test(test_namespaces_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
