#include "model/segsort.h"

#include <stdlib.h>
#include <string.h>

static int segsort_cmp(const void *a, const void *b)
{
    const struct segment *x = a, *y = b;
    if (x->mount != y->mount)
        return x->mount < y->mount ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->ino > y->ino) - (x->ino < y->ino);
}

void segsort(struct segment *segs, size_t n)
{
    if (n > 1)
        qsort(segs, n, sizeof(*segs), segsort_cmp);
}
