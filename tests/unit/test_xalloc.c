/* The allocation family: VEC_PUSH grows an array and zeroes each new
 * element, xstrndup copies at most n bytes and terminates, and a request
 * that cannot be met ends the program with one line and status 1 (in the
 * plain build). */
#include <stdint.h>
#include <sys/wait.h>

#include "testutil.h"
#include "util/xalloc.h"

struct item {
    int a;
    char b[40];
};

static void test_vec_push(void **state)
{
    (void)state;
    struct item *items = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        struct item *it = VEC_PUSH(items, n, cap);
        assert_int_equal(it->a, 0);
        assert_int_equal(it->b[39], 0);
        it->a = i;
        memset(it->b, 'x', sizeof(it->b));
    }
    assert_int_equal(n, 1000);
    assert_true(cap >= n);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(items[i].a, i);
    free(items);
}

static void test_strings(void **state)
{
    (void)state;
    char *s = xstrndup("shm_segment", 3);
    assert_string_equal(s, "shm");
    free(s);
    s = xstrdup("");
    assert_string_equal(s, "");
    free(s);
    int *z = xcalloc(0, sizeof(int)); /* never NULL, even for nothing */
    assert_non_null(z);
    free(z);
}

/* Not in the sanitizer build: AddressSanitizer's allocator ends the
 * program itself on a request this big, before xmalloc sees NULL. */
#ifndef __SANITIZE_ADDRESS__
static void test_out_of_memory(void **state)
{
    (void)state;
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        void *volatile p = xmalloc(SIZE_MAX - 4096);
        _exit(p ? 3 : 4); /* not reached */
    }
    close(pipefd[1]);
    char got[128] = "";
    ssize_t len = read(pipefd[0], got, sizeof(got) - 1);
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_true(len > 0);
    got[len] = '\0';
    assert_string_equal(got, "shmwatch: out of memory\n");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vec_push),
        cmocka_unit_test(test_strings),
#ifndef __SANITIZE_ADDRESS__
        cmocka_unit_test(test_out_of_memory),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
