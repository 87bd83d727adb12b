#include "util/strpool.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define BLOCK_SIZE (64u << 10)

struct strpool_block {
    struct strpool_block *next;
    size_t used, size;
    char data[];
};

char *strpool_ndup(struct strpool *p, const char *s, size_t n)
{
    struct strpool_block *b = p->head;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > BLOCK_SIZE ? n + 1 : BLOCK_SIZE;
        b = xmalloc(sizeof(*b) + size);
        b->used = 0;
        b->size = size;
        if (p->head && size > BLOCK_SIZE) { /* a long string: keep filling the current block */
            b->next = p->head->next;
            p->head->next = b;
        } else {
            b->next = p->head;
            p->head = b;
        }
    }
    char *d = b->data + b->used;
    memcpy(d, s, n);
    d[n] = '\0';
    b->used += n + 1;
    return d;
}

char *strpool_dup(struct strpool *p, const char *s)
{
    return strpool_ndup(p, s, strlen(s));
}

void strpool_free(struct strpool *p)
{
    for (struct strpool_block *b = p->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    p->head = NULL;
}
