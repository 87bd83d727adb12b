#include "util/xalloc.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Blocks of this many bytes or more are mmapped (M_MMAP_THRESHOLD) when the
 * heap's free top cannot hold them (glibc serves any block from the top
 * first; the top starts at 4 MiB, heap_in_huge_pages). */
static const size_t mmap_threshold = 1 << 20;

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

/* The heap's first heap_huge_span bytes are asked for in transparent huge
 * pages (2 MiB, one page fault each) where the system gives them to a range
 * that asks (THP "madvise", Debian's default, or "always"; with "never" the
 * request is kept and nothing changes). A snapshot is a short life whose
 * heap is made once: on n1 some 330 pages of 4 KiB, each its own page
 * fault, and on a VM whose faults pass through the hypervisor each costs
 * 10-12 us, 3-4 ms of a 45 ms snapshot; one huge page costs 0.1-0.3 ms
 * (doc/performance.md, "The heap in huge pages"). On bare metal the two
 * cost about the same. The price is memory: a process that touches a byte
 * of a huge page holds all 2 MiB of it, so at most 4 MiB more than the
 * pages it writes (the dashboard's peak is bounded in the bench).
 *
 * The kernel gives a huge page only to a 2 MiB-aligned range of a mapping
 * marked so (madvise) whose page table is still empty, and a heap grown by
 * brk later is a mapping of its own, unmarked. So, before malloc has made
 * its heap: the break is moved to one page below a 2 MiB boundary (address
 * space only, nothing is written), malloc is made to grow the heap by the
 * whole span at once (M_TOP_PAD), its first block and header land in that
 * one page, and the span above it is marked before anything writes there.
 * The heap past the span, and a heap malloc began before this ran (a
 * library's constructor), stays in small pages. */
static const size_t huge_page = 2u << 20;
static const size_t heap_huge_span = 4u << 20;

static void heap_in_huge_pages(void)
{
    if (mallinfo2().arena != 0)
        return; /* malloc has made its heap: its first pages are written */
    char *cur = sbrk(0);
    if (cur == (char *)-1)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t span = ((uintptr_t)cur + page + huge_page - 1) & ~(uintptr_t)(huge_page - 1);
    if (sbrk((intptr_t)(span - page - (uintptr_t)cur)) == (void *)-1)
        return;
    mallopt(M_TOP_PAD, (int)heap_huge_span);
    void *volatile first = malloc(1); /* volatile: a malloc freed at once may be left out */
    free(first);
    mallopt(M_TOP_PAD, 128 << 10); /* glibc's default again */
    if ((uintptr_t)sbrk(0) >= span + heap_huge_span)
        (void)madvise((void *)span, heap_huge_span, MADV_HUGEPAGE);
}

void xalloc_setup(void)
{
    /* Arrays below 1 MiB come from the heap, and what one frees serves the
     * next. A snapshot frees many before it ends: the walk's inode table,
     * the sort's keys, a node view's per-mount lists, a scan's work
     * buffers; mmapped (at 128 KiB, as this was before), each was
     * unmapped (its pages freed and, while the scan's thread lives, every
     * CPU's TLB flushed: dear on a VM) and the next array made in new
     * pages. One-shot --json with this, against 128 KiB: s1 3 % and n1
     * (--all) 6 % less CPU, 88 fewer pages on n1 (doc/performance.md).
     * Fixed, not glibc's moving threshold, which after the first free of a
     * mapping serves even the big arrays from the heap and keeps every
     * peak: the dashboard at 100,000 segments peaked at 84 MiB that way,
     * 60 MiB with this and the kept heap top below. */
    mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    /* One heap for every thread. The scan runs in a thread of its own only
     * so that the caller can watch it (scanjob.h), and the caller builds
     * the model and the report from what it returns: in a second heap the
     * scan's freed work buffers could never be reused by the model, and
     * every page of both would be new (a one-shot --json on 1,600 segments
     * touched 383 pages, with one heap 285). The threads seldom allocate at
     * the same moment, so the shared lock costs nothing measurable. */
    mallopt(M_ARENA_MAX, 1);
    /* The heap's free top is kept, up to 8 MiB, and not given back each
     * time a block at the top is freed: a snapshot frees and allocates
     * again (the scan's thread its work buffers, then the model), and the
     * dashboard and streams scan again and again. Each top given back was
     * pages freed, then made anew for the next block. One-shot --json on
     * s1: 1.7 % less CPU; the dashboard on 6,500 segments, with the
     * threshold above, 690 fewer page faults a scan (an eighth of its CPU
     * on a VM whose faults pass through the hypervisor, 12 us each); at
     * 100,000 segments it peaked at 60 MiB with both, 57 MiB without. */
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    /* Last: the settings above hold for the heap it makes. */
    heap_in_huge_pages();
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Blocks of at least this many new bytes have their pages made at once. */
#define POPULATE_MIN (64u << 10)

/* Makes the pages wholly inside p[from..to) present and writable, all in
 * one system call, when that is at least POPULATE_MIN bytes: the pages of a
 * big array (a scan's records, segments, inode tables) that the program is
 * about to fill. Each page would otherwise be made on its first write, by
 * a page fault: on a VM whose faults pass through the hypervisor, some
 * 12 us a page, against about 6 us made in one call and then written
 * (doc/performance.md). Pages already there are left as they are. A kernel
 * before 5.14 refuses the call: then the pages come by faults. */
static void populate(void *p, size_t from, size_t to)
{
    if (to < from || to - from < POPULATE_MIN)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE); /* no system call: libc has it */
    uintptr_t a = ((uintptr_t)p + from + page - 1) & ~(page - 1), b = ((uintptr_t)p + to) & ~(page - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

static void oom(void)
{
    fputs("shmwatch: out of memory\n", stderr);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    populate(p, 0, n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size)
        oom();
    size_t n = nmemb * size;
    if (n < POPULATE_MIN) {
        void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
        if (!p)
            oom();
        return p;
    }
    /* Made first and cleared after: calloc would clear a block from the
     * heap page fault by page fault, before populate could make its pages
     * (a scan's inode tables: 47 of the 240 faults of an s1 snapshot). */
    void *p = xmalloc(n);
    memset(p, 0, n);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    size_t old = p ? malloc_usable_size(p) : 0;
    if (old && old < mmap_threshold && n >= mmap_threshold) {
        /* From the heap to a mapping of its own: realloc would copy into
         * the new mapping page fault by page fault. (A mapping shrunk below
         * the threshold looks the same and is copied too, where mremap
         * would have moved it: a list is trimmed only once it is whole,
         * files_trim.) */
        void *q = xmalloc(n);
        memcpy(q, p, old);
        free(p);
        return q;
    }
    /* Grown in place or by mremap, the first old bytes' pages are there.
     * A heap block that realloc moves is copied into pages made fault by
     * fault; making the whole new block first (as above) was tried for
     * every growth past POPULATE_MIN and gained nothing: on n1 59 fewer
     * faults, 41 more pages, the same CPU time (doc/performance.md). */
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    populate(p, old, n);
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void xgrow_slow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    if (ncap > ((size_t)-1) / elem)
        oom();
    *items = xrealloc(*items, ncap * elem);
    *cap = ncap;
}
