/* The order of a model's segments: by mount, then by name (bytes, as
 * strcmp), then by inode number. */
#ifndef SHMWATCH_SEGSORT_H
#define SHMWATCH_SEGSORT_H

#include <stddef.h>

#include "model/model.h"

/* Sorts segs[0..n) into that order, in place. A model holds each (mount,
 * inode) once, so no two segments compare equal. */
void segsort(struct segment *segs, size_t n);

#endif
