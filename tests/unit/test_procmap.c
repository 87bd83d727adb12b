/* Which way of reading a process's mappings the scan takes (procmap.h):
 * the choice from measured costs, and the measurement on this machine. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "testutil.h"

#include "collect/procmap.h"

/* Figures of two machines reading shmscene's maps (25 lines, 15 file-backed
 * mappings: 16 calls with the last ENOENT): a VM whose system calls pass
 * through the hypervisor (getppid 1.0 us) and a bare-metal one. */
static void test_choose(void **state)
{
    (void)state;
    assert_int_equal(procmap_choose(14500, 25, 27700, 16), PROCMAP_WAY_TEXT);
    assert_int_equal(procmap_choose(9000, 25, 2600, 16), PROCMAP_WAY_QUERY);
    /* PyTorch's processes on the first: 1,686 lines, 1,578 calls */
    assert_int_equal(procmap_choose(646000, 1686, 2320000, 1578), PROCMAP_WAY_TEXT);
    /* equal costs a line and a call: the ioctl, which formats nothing */
    assert_int_equal(procmap_choose(1000, 10, 1000, 10), PROCMAP_WAY_QUERY);
    /* nothing measured one way: the other */
    assert_int_equal(procmap_choose(1000, 0, 1000, 10), PROCMAP_WAY_QUERY);
    assert_int_equal(procmap_choose(1000, 10, 1000, 0), PROCMAP_WAY_TEXT);
}

/* A kernel without PROCMAP_QUERY (before 6.11): a seccomp filter makes the
 * ioctl say ENOTTY in a forked child, which must then read the text. It
 * runs first: the child inherits the measurement if this program made it
 * already. */
static void test_without_query(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)PROCMAP_QUERY_IOCTL, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
            _exit(100);
        _exit(procmap_way() == PROCMAP_WAY_TEXT ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void *way_in_thread(void *arg)
{
    *(enum procmap_way *)arg = procmap_way();
    return NULL;
}

/* Measured once: the same answer again and from another thread; and on a
 * kernel without the ioctl, the text. */
static void test_measured_once(void **state)
{
    (void)state;
    enum procmap_way first = procmap_way(), other = (enum procmap_way)-1;
    assert_true(first == PROCMAP_WAY_QUERY || first == PROCMAP_WAY_TEXT);
    assert_int_equal(procmap_way(), first);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, way_in_thread, &other), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(other, first);
    if (!kernel_has_query())
        assert_int_equal(first, PROCMAP_WAY_TEXT);
    printf("# this machine: the %s\n", first == PROCMAP_WAY_TEXT ? "maps text" : "PROCMAP_QUERY ioctl");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_query), /* first: see there */
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_measured_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
