/* The order of a model's segments: by mount, then by name (bytes, as
 * strcmp), then by inode number. */
#ifndef SHMWATCH_SEGSORT_H
#define SHMWATCH_SEGSORT_H

#include <stddef.h>

#include "model/model.h"

/* That order as a qsort comparison of two struct segment: what segsort
 * falls back on, and what its test holds it to. */
int segsort_cmp(const void *a, const void *b);

/* Sorts segs[0..n) into that order, in place. */
void segsort(struct segment *segs, size_t n);

#endif
