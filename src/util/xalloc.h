/* Allocation that never returns NULL: running out of memory ends the program
 * with a message, so callers need no error path for it. A size of 0 gives
 * a pointer too (to free, never to read). */
#ifndef SHMWATCH_XALLOC_H
#define SHMWATCH_XALLOC_H

#include <stddef.h>
#include <string.h> /* VEC_PUSH zeroes the new element */

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grow *items (of *cap elements of elem bytes) so that index `need` fits.
 * Inline: nearly every call finds the room there already (a scan appends
 * some ten thousand records), and that answer should cost a compare. */
void xgrow_slow(void **items, size_t *cap, size_t need, size_t elem);
static inline void xgrow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need > *cap)
        xgrow_slow(items, cap, need, elem);
}

/* Append one element to a (items, n, cap) triple; returns the new element, zeroed. */
#define VEC_PUSH(items, n, cap)                                                                    \
    (xgrow((void **)&(items), &(cap), (n) + 1, sizeof(*(items))),                                  \
     memset(&(items)[(n)], 0, sizeof(*(items))), &(items)[(n)++])

#endif
