/* The order of a model's segments: by mount, then by name (bytes, as
 * strcmp), then by inode number. */
#ifndef SHMWATCH_SEGSORT_H
#define SHMWATCH_SEGSORT_H

#include <stddef.h>

#include "model/model.h"

/* That order as a qsort comparison of two struct segment. A model holds
 * each (mount, inode) once, so no two segments compare equal. */
int segsort_cmp(const void *a, const void *b);

/* Sorts segs[0..n) into that order, in place. */
void segsort(struct segment *segs, size_t n);

#endif
