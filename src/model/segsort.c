#include "model/segsort.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Sorting 20,000 segments through qsort and strcmp would be the largest
 * part of a snapshot's own work: names of one job share a long prefix
 * ("torch_4711_", "psm_"), which every comparison would walk again. Here
 * the prefix all names
 * share is skipped once, the next eight bytes become an integer that
 * compares like those bytes, and only names equal in them are compared as
 * strings. */
struct key {
    uint64_t bytes; /* eight name bytes from the shared prefix on, big-endian, NUL-padded */
    uint32_t mount;
    uint32_t idx;
};

static size_t shared_prefix(const struct segment *segs, size_t n)
{
    const char *first = segs[0].name;
    size_t len = strlen(first);
    for (size_t i = 1; i < n && len; i++) {
        const char *s = segs[i].name;
        if (strncmp(s, first, len) == 0) /* the usual case, in library speed */
            continue;
        size_t k = 0;
        while (k < len && s[k] == first[k])
            k++;
        len = k;
    }
    return len;
}

/* Up to eight bytes of s, big-endian, NUL-padded: one pass that stops at
 * the end of the string (no strnlen, no copy). */
static uint64_t bytes_at(const char *s)
{
    uint64_t v = 0;
    unsigned shift = 64;
    while (shift && *s) {
        shift -= 8;
        v |= (uint64_t)(unsigned char)*s++ << shift;
    }
    return v;
}

/* Does a come before b when their first bytes tie: the whole names, then
 * the inodes. Apart, so that the test the merge makes per key stays small
 * enough to be inlined. */
static bool names_less(const struct key *a, const struct key *b, const struct segment *segs)
{
    const struct segment *x = &segs[a->idx], *y = &segs[b->idx];
    int c = strcmp(x->name, y->name);
    if (c)
        return c < 0;
    return x->ino < y->ino;
}

/* Does a come before b (strictly)? */
static inline bool less(const struct key *a, const struct key *b, const struct segment *segs)
{
    if (a->mount != b->mount)
        return a->mount < b->mount;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes;
    return names_less(a, b, segs);
}

int segsort_cmp(const void *a, const void *b)
{
    const struct segment *x = a, *y = b;
    if (x->mount != y->mount)
        return x->mount < y->mount ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

/* Merges the sorted k[lo..mid) and k[mid..hi) of src into dst, the left
 * one first among equals. */
static void merge(const struct key *src, struct key *dst, size_t lo, size_t mid, size_t hi,
                  const struct segment *segs)
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi)
        dst[o++] = less(&src[j], &src[i], segs) ? src[j++] : src[i++];
    while (i < mid)
        dst[o++] = src[i++];
    while (j < hi)
        dst[o++] = src[j++];
}

/* Cuts k[0..n) into its natural runs, each ascending (equal neighbours
 * allowed) or strictly descending (then reversed, which keeps it stable:
 * it holds no equals). Writes where each run ends to ends[], returns how
 * many. A tmpfs lists its files newest first, and a process's mappings
 * come oldest first: a directory read comes in such runs. */
static size_t find_runs(struct key *k, size_t n, size_t *ends, const struct segment *segs)
{
    size_t nruns = 0;
    for (size_t lo = 0; lo < n;) {
        size_t hi = lo + 1;
        if (hi < n && less(&k[hi], &k[lo], segs)) {
            while (hi + 1 < n && less(&k[hi + 1], &k[hi], segs))
                hi++;
            hi++;
            for (size_t a = lo, b = hi - 1; a < b; a++, b--) {
                struct key t = k[a];
                k[a] = k[b];
                k[b] = t;
            }
        } else {
            while (hi < n && !less(&k[hi], &k[hi - 1], segs))
                hi++;
        }
        ends[nruns++] = hi;
        lo = hi;
    }
    return nruns;
}

/* A natural merge sort of k[0..n), its comparison inline, with tmp (as
 * long) for room and ends (n entries) for the runs; stable. Neighbouring
 * runs are merged in pairs, pass after pass: ceil(log2(runs)) passes, so
 * sorted or reversed input costs one look at each key and random input
 * no more than the plain bottom-up merge sort. Returns where the sorted
 * keys are: k or tmp. */
static struct key *merge_sort(struct key *k, struct key *tmp, size_t *ends, size_t n,
                              const struct segment *segs)
{
    struct key *src = k, *dst = tmp;
    size_t nruns = find_runs(k, n, ends, segs);
    while (nruns > 1) {
        size_t out = 0, lo = 0;
        for (size_t r = 0; r < nruns; r += 2) {
            if (r + 1 < nruns) {
                merge(src, dst, lo, ends[r], ends[r + 1], segs);
                lo = ends[r + 1];
            } else { /* an odd run out: carried over as it is */
                memcpy(dst + lo, src + lo, (ends[r] - lo) * sizeof(*dst));
                lo = ends[r];
            }
            ends[out++] = lo;
        }
        nruns = out;
        struct key *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

/* Puts segs[order[i].idx] at i for every i, in place, by following each
 * cycle of the permutation with one segment aside: a second array of
 * segments would be megabytes of fresh pages. Marks order as it goes. */
static void permute(struct segment *segs, struct key *order, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (order[i].idx == i)
            continue;
        struct segment aside = segs[i];
        size_t j = i;
        for (;;) {
            size_t from = order[j].idx;
            order[j].idx = (uint32_t)j; /* placed */
            if (from == i) {
                segs[j] = aside;
                break;
            }
            segs[j] = segs[from];
            j = from;
        }
    }
}

void segsort(struct segment *in, size_t n)
{
    if (n < 2)
        return;
    if (n > UINT32_MAX) { /* beyond any tmpfs's inodes: the plain way */
        qsort(in, n, sizeof(*in), segsort_cmp);
        return;
    }
    size_t skip = shared_prefix(in, n);
    struct key *k = xmalloc(2 * n * sizeof(*k));
    size_t *ends = xmalloc(n * sizeof(*ends));
    for (size_t i = 0; i < n; i++)
        k[i] = (struct key){.bytes = bytes_at(in[i].name + skip),
                            .mount = in[i].mount,
                            .idx = (uint32_t)i};
    permute(in, merge_sort(k, k + n, ends, n, in), n);
    free(ends);
    free(k);
}
