/* Which way of reading a process's mappings the scan takes (procmap.h):
 * the choice from measured costs, and the measurement on this machine. */
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "testutil.h"

#include "collect/procmap.h"

/* Reading shmscene's maps (25 lines, 15 file-backed mappings: 16 calls with
 * the last ENOENT) on a VM whose system calls pass through the hypervisor
 * (getppid 1.0 us: measured), and where system calls are cheap (figures of
 * the shape doc/performance.md records there: the ioctl at about half the
 * text's cost). */
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

/* procmap_way in a fresh child (the first call measures, once per
 * program): the readings' times replaced by text_ns and query_ns, the
 * ioctl refused with ENOTTY as by a kernel before 6.11 when lacking. The
 * way it took, or -1. */
static int way_in_child(uint64_t text_ns, uint64_t query_ns, bool lacking)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (lacking && !seccomp_refuse(SYS_ioctl, (uint32_t)PROCMAP_QUERY_IOCTL, ENOTTY))
            _exit(100);
        procmap_set_test_times(text_ns, query_ns);
        _exit(procmap_way());
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status) == 100 ? -1 : WEXITSTATUS(status);
}

/* The measured times decide, from real readings of the child's own maps;
 * a kernel without the ioctl makes it the text, whatever the times. These
 * run before this program calls procmap_way itself. */
static void test_measured_way(void **state)
{
    (void)state;
    int query = kernel_has_query() ? PROCMAP_WAY_QUERY : PROCMAP_WAY_TEXT;
    assert_int_equal(way_in_child(1000000, 1000, false), query);
    assert_int_equal(way_in_child(1000, 1000000, false), PROCMAP_WAY_TEXT);
    assert_int_equal(way_in_child(1000000, 1000, true), PROCMAP_WAY_TEXT);
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
        cmocka_unit_test(test_measured_way), /* first: see there */
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_measured_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
