/* The torch fingerprints (util/torchprint.h): the walk's pre-filter and the
 * roles may not disagree. Every name the roles know passes the pre-filter,
 * every signal mask the roles take for a worker's passes it too, and, with
 * real processes named each way, the walk of the real /proc reads each of
 * them in full and the model gives each the role its name says. */
#include "testutil.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/scan.h"
#include "collect/walk.h"
#include "model/model.h"
#include "util/torchprint.h"

static void test_names(void **state)
{
    (void)state;
    assert_true(torch_ncomm_names >= 6);
    for (size_t i = 0; i < torch_ncomm_names; i++) {
        const char *n = torch_comm_names[i].comm;
        assert_true(strlen(n) <= 15); /* the kernel keeps 15 bytes of a comm */
        assert_int_equal(torchprint_comm(n), torch_comm_names[i].what);
        assert_true(torchprint_comm_maybe(n));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(n, torch_comm_names[j].comm);
    }
    assert_int_equal(torchprint_comm("pt_data_worker"), TORCH_COMM_WORKER);
    assert_int_equal(torchprint_comm("torch_shm_manag"), TORCH_COMM_MANAGER);
    assert_int_equal(torchprint_comm("pt_elastic"), TORCH_COMM_LAUNCHER);
    /* The pre-filter is not everything: other processes are only counted. */
    const char *other[] = {"python3", "pt", "torch", "bash", "pytorch_worker", ""};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        assert_int_equal(torchprint_comm(other[i]), TORCH_COMM_NONE);
        assert_false(torchprint_comm_maybe(other[i]));
    }
    /* A name a later torch may add to the family is read in full, but
     * given no role until the table knows it. */
    assert_true(torchprint_comm_maybe("pt_new_thing"));
    assert_int_equal(torchprint_comm("pt_new_thing"), TORCH_COMM_NONE);
}

/* Every combination of the five signals that matter, with and without
 * others: the roles' worker rule implies the pre-filter's. */
static void test_signals(void **state)
{
    (void)state;
    const int sigs[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGABRT};
    const uint64_t extra[] = {0, TORCHPRINT_SIG(SIGUSR1) | TORCHPRINT_SIG(SIGCHLD),
                              TORCHPRINT_SIG(SIGINT)};
    size_t workers = 0;
    for (unsigned bits = 0; bits < 32; bits++)
        for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++) {
            uint64_t mask = extra[e];
            for (int k = 0; k < 5; k++)
                if (bits & (1u << k))
                    mask |= TORCHPRINT_SIG(sigs[k]);
            bool worker = torchprint_worker_signals(mask);
            if (worker) {
                assert_true(torchprint_signals_maybe(mask));
                workers++;
            }
            assert_int_equal(worker, (bits & 7u) == 7u && !(bits & 24u));
            assert_int_equal(torchprint_signals_maybe(mask), (bits & 7u) == 7u);
        }
    assert_int_equal(workers, 3); /* one combination, with each extra */
}

static void test_libtorch(void **state)
{
    (void)state;
    const char *yes[] = {
        "/usr/lib/libtorch_cpu.so", "/usr/lib/python3/dist-packages/torch/lib/libtorch.so.2",
        "7f2c3c100000-7f2c3c200000 r-xp 00000000 08:01 99 /usr/lib/libc.so.6\n"
        "7f2c3c200000-7f2c3c300000 r-xp 00000000 08:01 98 /opt/libtorch_python.so\n"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(torchprint_libtorch(yes[i], strlen(yes[i])));
    const char *no[] = {"/usr/lib/libc.so.6", "libtorch.so", "/usr/lib/libtorc", ""};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(torchprint_libtorch(no[i], strlen(no[i])));
    /* The length is honoured: a match past it is no match. */
    assert_false(torchprint_libtorch("/usr/lib/libtorch.so", 12));
}

/* Python's forkserver by its command line as multiprocessing starts it:
 * the interpreter, its flags, -c and the forkserver's code; nothing else
 * that carries the code. */
static void test_forkserver(void **state)
{
    (void)state;
    const char *code = "from multiprocessing.forkserver import main; main(8, 9, ['__main__'], "
                       "**{'sys_path': ['/srv/job']})";
    char line[512];
    const char *yes[] = {"/usr/bin/python3 -B -c %s", "/usr/bin/python3 -c %s",
                         "/opt/venv/bin/python -s -OO -Wignore::DeprecationWarning -c %s",
                         "python3.14 -X dev -X faulthandler -B -c %s"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        snprintf(line, sizeof(line), yes[i], code);
        assert_true(torchprint_forkserver(line));
    }
    const char *no[] = {
        "/usr/bin/python3 -B -c from multiprocessing.resource_tracker import main;main(5)",
        "/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; "
        "spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork",
        "/usr/bin/python3 train.py -c from multiprocessing.forkserver import main",
        "/usr/bin/python3 -B -c", "/usr/bin/python3 -B -c ", "/usr/bin/python3",
        "-c from multiprocessing.forkserver import main", "[python3] <defunct>", "",
        "bash -c -c from multiprocessing.forkserver import main",
        "/usr/bin/python3 -X -c from multiprocessing.forkserver import main"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(torchprint_forkserver(no[i]));
    assert_false(torchprint_forkserver(NULL));
}

/* A child of this test named comm, stopped until killed. */
static pid_t child_named(const char *comm)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_NAME, comm);
        char c = 1;
        if (write(p[1], &c, 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

#define NCHILD 16

static void test_walk_and_roles_agree(void **state)
{
    (void)state;
    assert_true(torch_ncomm_names < NCHILD);
    pid_t kids[NCHILD];
    size_t n = 0;
    for (; n < torch_ncomm_names; n++)
        kids[n] = child_named(torch_comm_names[n].comm);
    pid_t plain = kids[n++] = child_named("plain_child");

    struct scan s;
    memset(&s, 0, sizeof(s));
    warn_init(&s.warn);
    s.self_pid = getpid();
    clock_gettime(CLOCK_REALTIME, &s.time);
    struct sysroot sys = test_sysroot("/proc", NULL);
    struct walk_opts o = {.sys = &sys, .world_pid = getpid()};
    int rc = walk_run(&o, &s.procs, &s.holders, &s.warn);
    sysroot_close(&sys);
    struct model m;
    struct model_opts mo;
    model_opts_default(&mo);
    if (rc == 0)
        model_build(&s, &mo, &m);
    for (size_t i = 0; i < n; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    assert_int_equal(rc, 0);

    bool any_worker = false;
    for (size_t i = 0; i < torch_ncomm_names; i++) {
        const struct proc *p = procs_find(&s.procs, kids[i]);
        assert_non_null(p);
        assert_string_equal(p->comm, torch_comm_names[i].comm);
        /* The pre-filter read it in full. */
        assert_non_null(p->cmdline);
        assert_non_null(p->exe);
        assert_true(p->mntns != 0);
        /* The roles say what its name says. */
        const struct mproc *mp = model_find_proc(&m, kids[i]);
        enum proc_role role = mp ? mp->role : ROLE_NONE;
        switch (torch_comm_names[i].what) {
        case TORCH_COMM_WORKER:
            assert_int_equal(role, ROLE_WORKER);
            assert_int_equal(mp->group, getpid());
            any_worker = true;
            break;
        case TORCH_COMM_MANAGER:
            assert_int_equal(role, ROLE_SHM_MANAGER);
            break;
        default:
            assert_int_equal(role, ROLE_NONE);
            break;
        }
    }
    assert_true(any_worker);
    const struct mproc *me = model_find_proc(&m, getpid());
    assert_non_null(me);
    assert_int_equal(me->role, ROLE_MAIN);
    /* A process without a fingerprint is not read in full. */
    const struct proc *p = procs_find(&s.procs, plain);
    assert_non_null(p);
    assert_null(p->cmdline);
    assert_null(model_find_proc(&m, plain));
    model_free(&m);
    scan_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_signals),
        cmocka_unit_test(test_libtorch),
        cmocka_unit_test(test_forkserver),
        cmocka_unit_test(test_walk_and_roles_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
