/* The scan watchdog's pieces: the stall limit, the account of where a
 * scan is (from its beacon and the process's comm in a fixture /proc), the
 * stand-in for a stalled scan in JSON and Prometheus, and a scan run in a
 * thread of its own, given up on after it ended and while it still runs. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>

#include "testutil.h"
#include "collect/pidscan.h"
#include "collect/scan.h"
#include "collect/scanjob.h"
#include "fake_scene.h"
#include "model/model.h"
#include "report/report.h"
#include "scene_tree.h"
#include "util/buf.h"
#include "util/clock.h"

static const char *proc_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s/scanjob/proc", fixtures_dir());
    return buf;
}

static void test_stall_limit(void **state)
{
    (void)state;
    assert_true(scan_stall_limit(0) == SCAN_STALL_MIN_S); /* one-shot: no interval */
    assert_true(scan_stall_limit(2) == SCAN_STALL_MIN_S); /* the dashboard's default */
    assert_true(scan_stall_limit(15) == 45);              /* --prometheus-file's default */
    /* The test build's hook (fuse_stall.sh) sets one limit for every
     * interval; 0 gives the program's back. */
    scan_set_test_stall_limit(4);
    assert_true(scan_stall_limit(2) == 4 && scan_stall_limit(15) == 4);
    scan_set_test_stall_limit(0);
    assert_true(scan_stall_limit(2) == SCAN_STALL_MIN_S);
}

static void describe(enum scan_stage stage, pid_t pid, int fd, const char *want, pid_t want_pid,
                     int want_fd)
{
    char dir[512], out[256];
    struct scan_beacon b;
    scan_beacon_at(&b, stage, pid, fd);
    pid_t p = -7;
    int f = -7;
    struct sysroot sys = test_sysroot(proc_dir(dir, sizeof(dir)), NULL);
    scan_beacon_describe(&b, &sys, out, sizeof(out), &p, &f);
    sysroot_close(&sys);
    assert_string_equal(out, want);
    assert_int_equal(p, want_pid);
    assert_int_equal(f, want_fd);
}

static void test_describe(void **state)
{
    (void)state;
    describe(SCAN_FDS, 4242, 7, "reading fd 7 of pid 4242 (python3)", 4242, 7);
    describe(SCAN_MAPS, 4242, 3, "reading the mappings of pid 4242 (python3)", 4242, -1);
    describe(SCAN_DETAILS, 4242, -1,
             "reading the stat, status and command line of pid 4242 (python3)", 4242, -1);
    /* The comm comes from outside: escaped. Gone: unknown. */
    describe(SCAN_FDS, 4343, 0, "reading fd 0 of pid 4343 (ev\\e[2Jil)", 4343, 0);
    describe(SCAN_FDS, 4444, 5, "reading fd 5 of pid 4444 (?)", 4444, 5);
    /* Stages that read no process name none, whatever the beacon held. */
    describe(SCAN_MOUNTS, 4242, 7, "reading the watched mounts", 0, -1);
    describe(SCAN_REST, 0, -1, "reading meminfo, SysV segments and the memory cgroup", 0, -1);
    /* fd_stage moves on: the fd is no longer the one read. */
    struct scan_beacon b;
    char dir[512], out[256];
    pid_t p;
    int f;
    scan_beacon_at(&b, SCAN_FDS, 4242, 9);
    scan_beacon_stage(&b, SCAN_MAPS);
    struct sysroot sys = test_sysroot(proc_dir(dir, sizeof(dir)), NULL);
    scan_beacon_describe(&b, &sys, out, sizeof(out), &p, &f);
    sysroot_close(&sys);
    assert_int_equal(f, -1);
    assert_int_equal(p, 4242);
}

/* The stand-in: no figures, where the scan is, in JSON and in Prometheus
 * (which keeps only when the last complete scan's data was collected). */
static void test_stalled_reports(void **state)
{
    (void)state;
    char dir[512];
    struct sysroot sys = test_sysroot(proc_dir(dir, sizeof(dir)), NULL);
    struct scan_opts o = {.sys = &sys};
    struct scan_beacon b;
    scan_beacon_at(&b, SCAN_FDS, 4242, 7);
    struct scan s;
    scan_stalled(&s, &o, 12.4, &b);
    assert_true(s.stalled_s == 12.4);
    assert_int_equal(s.stalled_pid, 4242);
    assert_int_equal(s.stalled_fd, 7);
    assert_int_equal(s.warn.n, 1);
    assert_non_null(strstr(s.warn.msg[0], "has not finished after 12 s, reading fd 7 of pid 4242 "
                                          "(python3)"));

    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(&s, &mo, &m);
    struct buf out;
    buf_init(&out);
    report_json(&out, &m);
    static const char *const keys[] = {
        "\"mounts\":[]", "\"segments\":[]", "\"processes\":[]", "\"holders_scanned\":false",
        "\"stalled_s\":12.4", "\"stalled_pid\":4242", "\"stalled_fd\":7",
        "reading fd 7 of pid 4242 (python3)",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(out.data, keys[i]))
            fail_msg("the stand-in lacks %s in %s", keys[i], out.data);

    buf_reset(&out);
    report_prometheus_stalled(&out, &m, 1700000000.25);
    const char *p = out.data;
    assert_true(strncmp(p, "# shmwatch: the scan has not finished after 12 s", 48) == 0);
    assert_non_null(strstr(p, "\nshmwatch_last_scan_timestamp_seconds 1700000000.250\n"));
    assert_non_null(strstr(p, "\nshmwatch_scan_stalled_seconds 12.4"));
    assert_null(strstr(p, "shmwatch_segments"));
    assert_null(strstr(p, "shmwatch_mount_"));
    /* Every line a comment or a sample: one comment line only. */
    size_t comments = 0;
    for (const char *l = p; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        comments += l[0] == '#' && strncmp(l, "# HELP", 6) && strncmp(l, "# TYPE", 6);
    assert_int_equal(comments, 1);

    /* No complete scan yet: no timestamp at all rather than a false one. */
    buf_reset(&out);
    report_prometheus_stalled(&out, &m, 0);
    assert_null(strstr(out.data, "shmwatch_last_scan_timestamp_seconds"));
    model_free(&m);
    buf_free(&out);
    scan_free(&s);
    sysroot_close(&sys);
}

/* A complete scan's metrics say when its data was collected and that
 * nothing is stalled; its JSON has stalled_s 0. */
static void test_complete_metrics(void **state)
{
    (void)state;
    struct scan *s = fake_scene();
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(s, &mo, &m);
    struct buf out;
    buf_init(&out);
    report_prometheus(&out, &m);
    char want[96];
    snprintf(want, sizeof(want), "\nshmwatch_last_scan_timestamp_seconds %lld.000\n",
             (long long)s->time.tv_sec);
    assert_non_null(strstr(out.data, want));
    assert_non_null(strstr(out.data, "\nshmwatch_scan_stalled_seconds 0\n"));
    buf_reset(&out);
    report_json(&out, &m);
    assert_non_null(strstr(out.data, "\"stalled_s\":0,\"stalled_pid\":null,\"stalled_fd\":null"));
    buf_free(&out);
    model_free(&m);
    scan_free(s);
    free(s);
}

/* A scan in a thread of its own: waited for, finished, its result moved
 * out; and one given up on after it ended is freed by the giver-up (one
 * given up on while it runs: test_abandon_running). */
static void test_job(void **state)
{
    (void)state;
    /* A tree with nothing a scan reads (no mountinfo, no process). */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/sysvipc", fixtures_dir());
    struct sysroot sys = test_sysroot(dir, dir);
    struct scan_opts o = {.sys = &sys};
    for (int abandon = 0; abandon < 2; abandon++) {
        struct scan_job *j = scan_job_start(&o);
        assert_non_null(j);
        assert_true(scan_job_started(j) <= clock_now());
        assert_true(scan_job_wait(j, clock_now() + 30));
        if (abandon) {
            scan_job_abandon(j);
            continue;
        }
        struct scan s;
        assert_int_equal(scan_job_finish(j, &s), 0);
        assert_true(s.stalled_s == 0);
        assert_true(s.warn.n > 0); /* nothing could be read there */
        scan_free(&s);
    }
    sysroot_close(&sys);
}

/* The stat hook of the scan given up on while it runs: each call says so
 * on the pipe `entered` and waits on `release` until the test closes its
 * write end (from then on every call goes straight through). */
static int entered[2] = {-1, -1}, release[2] = {-1, -1};

static int held_stat(int dirfd, const char *name, struct stat *st)
{
    char c = 'x';
    (void)!write(entered[1], &c, 1);
    (void)!read(release[0], &c, 1);
    return fstatat(dirfd, name, st, 0);
}

/* How many threads this process has (its /proc/self/task entries). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A scan given up on while it is provably still running (held in its first
 * fd stat by the hook, its beacon there): once let go, its thread ends on
 * its own and frees the job and the scan. Its thread is waited for until it
 * is gone, so that the sanitizer build's leak check at exit sees what the
 * abandon path left (a leak), and ASan any use of the job after its free. */
static void test_abandon_running(void **state)
{
    (void)state;
    struct scene sc;
    char err[512];
    char *desc = str_printf("%s/scan/fd_only.scene", fixtures_dir());
    int rc = scene_build(&sc, desc, err, sizeof(err));
    free(desc);
    if (rc < 0)
        fail_msg("fd_only.scene: %s", err);
    char *root = str_printf("%s/root", sc.tree);
    struct sysroot sys;
    assert_int_equal(sysroot_open(&sys, sc.proc, root, root), 0);
    free(root);
    assert_int_equal(pipe2(entered, O_CLOEXEC), 0);
    assert_int_equal(pipe2(release, O_CLOEXEC), 0);
    procfiles_set_test_stat(held_stat);
    int threads = thread_count();

    struct scan_opts o = {.sys = &sys};
    struct scan_job *j = scan_job_start(&o);
    assert_non_null(j);
    struct pollfd in = {.fd = entered[0], .events = POLLIN};
    assert_int_equal(poll(&in, 1, 30 * 1000), 1); /* the scan is in its first fd stat */
    assert_false(scan_job_wait(j, clock_now()));
    char where[256];
    pid_t pid;
    int fd;
    scan_beacon_describe(scan_job_beacon(j), &sys, where, sizeof(where), &pid, &fd);
    if (pid <= 0 || fd < 0 || strncmp(where, "reading fd ", 11) != 0)
        fail_msg("the held scan's beacon says \"%s\" (pid %d, fd %d)", where, (int)pid, fd);
    assert_int_equal(thread_count(), threads + 1);
    scan_job_abandon(j); /* j is the scan thread's from here on */

    close(release[1]); /* let it go */
    double until = clock_now() + 30;
    while (thread_count() > threads && clock_now() < until)
        clock_nap(0.01);
    assert_int_equal(thread_count(), threads); /* it ended, having freed the job */

    procfiles_set_test_stat(NULL);
    close(entered[0]);
    close(entered[1]);
    close(release[0]);
    sysroot_close(&sys);
    scene_free(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stall_limit),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_stalled_reports),
        cmocka_unit_test(test_complete_metrics),
        cmocka_unit_test(test_job),
        cmocka_unit_test(test_abandon_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
