/* The allocator's setup (xalloc_setup): the scan's thread allocates from the
 * one heap the caller uses, so that what the scan frees serves the model
 * built after it; and a big array stays mmapped after one like it was
 * freed (glibc would otherwise raise its threshold and keep every peak in
 * the heap), unless the program scans again and again. Checked through glibc's own account of its heaps, so this test
 * is not built with AddressSanitizer, whose allocator replaces glibc's. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"
#include "util/thread.h"
#include "util/xalloc.h"

/* How many heaps (arenas) malloc_info reports. */
static int heaps(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(malloc_info(0, f), 0);
    fclose(f);
    int n = 0;
    for (const char *p = text; (p = strstr(p, "<heap nr=")) != NULL; p++)
        n++;
    free(text);
    return n;
}

enum { NBLOCKS = 1000 };

/* What the scan's thread does: many small allocations, some kept. */
static void *allocate(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < NBLOCKS; i++) {
        blocks[i] = xmalloc(64 + (size_t)i % 200);
        memset(blocks[i], 'x', 64);
    }
    return NULL;
}

static void test_threads_share_one_heap(void **state)
{
    (void)state;
    void **blocks = xcalloc(NBLOCKS, sizeof(*blocks));
    pthread_t t;
    assert_int_equal(thread_start(&t, allocate, blocks), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(blocks[NBLOCKS - 1]);
    /* A second arena would show as a second heap. */
    assert_int_equal(heaps(), 1);
    for (int i = 0; i < NBLOCKS; i++)
        free(blocks[i]);
    free(blocks);
}

static void test_big_arrays_stay_mmapped(void **state)
{
    (void)state;
    size_t big = 512 << 10;
    char *a = xmalloc(big);
    memset(a, 1, big);
    free(a);
    /* After that free glibc's default would serve the next one from the
     * heap; fixed, it is mmapped again and goes back to the system. */
    char *b = xmalloc(big);
    memset(b, 2, big);
    struct mallinfo2 mi = mallinfo2();
    assert_int_equal(mi.hblks, 1);
    assert_true(mi.hblkhd >= big);
    free(b);
    assert_int_equal(mallinfo2().hblks, 0);
}

/* A program that scans again and again (xalloc_repeating): an array below
 * 1 MiB comes from the heap and, freed, serves the next one without the
 * heap growing; one of 1 MiB or more is still mmapped. In a child: the
 * settings are the whole program's. */
static void test_repeating_reuses_the_heap(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xalloc_repeating();
        size_t mid = 512 << 10, big = 2 << 20;
        char *a = xmalloc(mid);
        memset(a, 1, mid);
        struct mallinfo2 one = mallinfo2();
        free(a);
        char *b = xmalloc(mid);
        memset(b, 2, mid);
        struct mallinfo2 two = mallinfo2();
        char *c = xmalloc(big);
        memset(c, 3, big);
        struct mallinfo2 three = mallinfo2();
        int bad = (one.hblks != 0) | (two.hblks != 0) << 1 | (two.arena > one.arena) << 2 |
                  (three.hblks != 1) << 3;
        free(b);
        free(c);
        _exit(bad);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws))
        fprintf(stderr, "# repeating: 0x%x\n", WEXITSTATUS(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

int main(void)
{
    xalloc_setup(); /* as shmwatch_main does, before anything else */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_one_heap),
        cmocka_unit_test(test_big_arrays_stay_mmapped),
        cmocka_unit_test(test_repeating_reuses_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
