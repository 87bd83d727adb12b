/* Strings that live and die together, copied into large blocks: a listing
 * of 20,000 names is then a few allocations instead of 20,000, and freed at
 * once. A string's address never changes. */
#ifndef SHMWATCH_STRPOOL_H
#define SHMWATCH_STRPOOL_H

#include <stddef.h>

struct strpool_block;

struct strpool {
    struct strpool_block *head; /* the block being filled; it links to the older ones */
};

#define STRPOOL_INIT {0}

/* A NUL-terminated copy of s[0..n) in the pool (s need not be terminated). */
char *strpool_ndup(struct strpool *p, const char *s, size_t n);
char *strpool_dup(struct strpool *p, const char *s);
/* Frees every string of the pool; the pool is then empty and usable. */
void strpool_free(struct strpool *p);

#endif
