#include "model/segsort.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Sorting 20,000 segments through qsort and strcmp was the largest part of
 * a snapshot's own work: names of one job share a long prefix ("torch_4711_",
 * "psm_"), which every comparison walked again. Here the prefix all names
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
        size_t k = 0;
        while (k < len && s[k] == first[k])
            k++;
        len = k;
    }
    return len;
}

static uint64_t bytes_at(const char *s)
{
    unsigned char b[8] = {0};
    memcpy(b, s, strnlen(s, sizeof(b)));
    uint64_t v = 0;
    for (size_t k = 0; k < sizeof(b); k++)
        v = v << 8 | b[k];
    return v;
}

static int cmp(const struct key *a, const struct key *b, const struct segment *segs)
{
    if (a->mount != b->mount)
        return a->mount < b->mount ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    const struct segment *x = &segs[a->idx], *y = &segs[b->idx];
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->ino > y->ino) - (x->ino < y->ino);
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

/* A bottom-up merge sort of k[0..n), its comparison inline, with tmp
 * (as long) for room; stable. Returns where the sorted keys are: k or tmp. */
static struct key *merge_sort(struct key *k, struct key *tmp, size_t n, const struct segment *segs)
{
    struct key *src = k, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = cmp(&src[j], &src[i], segs) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
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
    for (size_t i = 0; i < n; i++) {
        if (in[i].mount > UINT32_MAX) { /* not a real mount list's index: the plain way */
            free(k);
            qsort(in, n, sizeof(*in), segsort_cmp);
            return;
        }
        k[i] = (struct key){.bytes = bytes_at(in[i].name + skip),
                            .mount = (uint32_t)in[i].mount,
                            .idx = (uint32_t)i};
    }
    permute(in, merge_sort(k, k + n, n, in), n);
    free(k);
}
