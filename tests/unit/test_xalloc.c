/* The allocator's setup (xalloc_setup): the scan's thread allocates from the
 * one heap the caller uses, so that what the scan frees serves the model
 * built after it; and a big array stays mmapped after one like it was
 * freed (glibc would otherwise raise its threshold and keep every peak in
 * the heap), unless the program scans again and again. Checked through glibc's own account of its heaps, so this test
 * is not built with AddressSanitizer, whose allocator replaces glibc's. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* An array of 1 MiB or more that the heap's free top cannot hold is
 * mmapped, and stays so after a free of one: glibc's moving threshold would
 * serve the next from the heap. (One the top holds comes from it, as glibc
 * does whatever the threshold: the setup grows the heap by 4 MiB at once,
 * in huge pages; 8 MiB is past that.) */
static void test_big_arrays_stay_mmapped(void **state)
{
    (void)state;
    size_t big = 8 << 20;
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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* How many of the pages wholly inside p[from..to) are not resident
 * (mincore); the range holds at least min_pages such pages. */
static size_t missing(const char *p, size_t from, size_t to, size_t min_pages)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + from + page - 1) & ~(page - 1), b = ((uintptr_t)p + to) & ~(page - 1);
    size_t n = b > a ? (b - a) / page : 0, k = 0;
    assert_true(n >= min_pages);
    unsigned char *vec = xcalloc(n, 1);
    assert_int_equal(mincore((void *)a, b - a, vec), 0);
    for (size_t i = 0; i < n; i++)
        k += !(vec[i] & 1);
    free(vec);
    return k;
}

/* Does this kernel make pages on request (Linux 5.14)? */
static bool kernel_populates(void)
{
    size_t len = 1 << 16;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    bool ok = madvise(m, len, MADV_POPULATE_WRITE) == 0;
    munmap(m, len);
    return ok;
}

/* A big array's pages are made when it is allocated, in one call, not
 * fault by fault as it is filled: mincore finds them resident before any
 * byte is written. Likewise what xrealloc adds, and an array that grows
 * from the heap into a mapping of its own keeps its bytes. */
static void test_big_arrays_are_populated(void **state)
{
    (void)state;
    if (!kernel_populates()) {
        fprintf(stderr, "# SKIP: this kernel has no MADV_POPULATE_WRITE (Linux 5.14)\n");
        skip();
    }
    size_t big = 8 << 20; /* past the heap's free top: mmapped */
    char *a = xmalloc(big);
    assert_int_equal(missing(a, 0, big, 127), 0);
    char *z = xcalloc(big / 8, 8);
    assert_int_equal(missing(z, 0, big, 127), 0);
    /* Grown by mremap: the new part is made too. */
    a = xrealloc(a, 2 * big);
    assert_int_equal(missing(a, big, 2 * big, 127), 0);
    free(a);
    free(z);
    /* From the heap into a mapping: the bytes come along. */
    size_t small = 96 << 10;
    char *h = xmalloc(small);
    for (size_t i = 0; i < small; i++)
        h[i] = (char)(i * 7);
    h = xrealloc(h, big);
    assert_true(mallinfo2().hblks >= 1);
    for (size_t i = 0; i < small; i += 4093)
        assert_int_equal(h[i], (char)(i * 7));
    assert_int_equal(h[small - 1], (char)((small - 1) * 7));
    assert_int_equal(missing(h, small, big, 100), 0);
    free(h);
}

/* A big xcalloc is made by xmalloc (its pages populated) and cleared after:
 * it must be zero even where it reuses a freed block of the heap that was
 * written (below 1 MiB blocks come from the heap), and a product that
 * overflows is "out of memory", never a short block. In a child, which
 * out of memory ends. */
static void test_big_calloc_is_zero(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        size_t big = 256 << 10;
        for (int round = 0; round < 3; round++) {
            char *dirty = xmalloc(big);
            memset(dirty, 0xa5, big);
            free(dirty);
            unsigned char *z = xcalloc(big / 8, 8);
            for (size_t i = 0; i < big; i++)
                if (z[i] != 0)
                    _exit(10 + round);
            free(z);
        }
        if (fork() == 0) {
            (void)!freopen("/dev/null", "w", stderr);
            (void)xcalloc(SIZE_MAX / 2, 4);
            _exit(0); /* not reached: oom() exits 1 */
        }
        int st;
        wait(&st);
        _exit(WIFEXITED(st) && WEXITSTATUS(st) == 1 ? 0 : 20);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* An array below 1 MiB comes from the heap and, freed, serves the next one
 * without the heap growing; one of 1 MiB or more that the heap's free top
 * cannot hold is mmapped. Returns 0, or
 * a bit for each thing that went otherwise. */
static int heap_reuse(void)
{
    size_t mid = 512 << 10, big = 8 << 20; /* past the heap's free top */
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
    free(b);
    free(c);
    /* The heap's top is kept (M_TRIM_THRESHOLD) for what comes next. */
    struct mallinfo2 four = mallinfo2();
    int bad = (one.hblks != 0) | (two.hblks != 0) << 1 | (two.arena > one.arena) << 2 |
              (three.hblks != 1) << 3 | (four.arena < two.arena) << 4;
    return bad;
}

/* So in every program: a snapshot frees its walk's inode table, its sort
 * keys and more before it ends, and the dashboard scans again and again.
 * In a child, twice: the second time as the next scan finds the heap. */
static void test_heap_reused_below_1mib(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int once = heap_reuse();
        _exit(once | heap_reuse() << 5);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws))
        fprintf(stderr, "# heap reuse: 0x%x\n", WEXITSTATUS(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

/* The smaps entry (its first line and its VmFlags) of the mapping that
 * holds p; false when none does. */
static bool mapping_of(const void *p, char *head, size_t headlen, char *flags, size_t flagslen)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool in = false, found = false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            if (found)
                break;
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            if (in)
                snprintf(head, headlen, "%s", line);
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, flagslen, "%s", line + 8);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* The heap's first blocks lie in a 2 MiB-aligned range marked for huge
 * pages (VmFlags "hg"), so that a snapshot's heap is made in one or two
 * page faults, not hundreds. Which pages the kernel then gives depends on
 * the machine's free memory, so only the mark is checked; what it gave is
 * printed. */
static void test_heap_asks_for_huge_pages(void **state)
{
    (void)state;
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
        fprintf(stderr, "# SKIP: this kernel has no transparent huge pages\n");
        skip();
    }
    size_t mid = 512 << 10;
    char *block = xmalloc(mid);
    memset(block, 1, mid);
    char head[512] = "", flags[512] = "";
    assert_true(mapping_of(block, head, sizeof(head), flags, sizeof(flags)));
    fprintf(stderr, "# heap block in %s#   VmFlags:%s", head, flags);
    unsigned long lo = strtoul(head, NULL, 16);
    assert_int_equal(lo % (2ul << 20), 0);
    assert_non_null(strstr(flags, " hg"));
    free(block);
}

int main(void)
{
    xalloc_setup(); /* as shmwatch_main does, before anything else */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_asks_for_huge_pages), /* first: the heap as the setup left it */
        cmocka_unit_test(test_threads_share_one_heap),
        cmocka_unit_test(test_big_arrays_stay_mmapped),
        cmocka_unit_test(test_heap_reused_below_1mib),
        cmocka_unit_test(test_big_arrays_are_populated),
        cmocka_unit_test(test_big_calloc_is_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
