#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void buf_init(struct buf *b)
{
    *b = (struct buf){0};
}

void buf_free(struct buf *b)
{
    free(b->data);
    buf_init(b);
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_grow(struct buf *b, size_t extra)
{
    xgrow((void **)&b->data, &b->cap, b->len + extra + 1, 1);
}

void buf_add(struct buf *b, const void *data, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_adds(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    if (n >= 0 && (size_t)n < sizeof(tmp)) {
        buf_add(b, tmp, (size_t)n);
    } else if (n >= 0) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *buf_steal(struct buf *b)
{
    if (!b->data)
        return xstrdup("");
    char *s = b->data;
    buf_init(b);
    return s;
}

char *str_vprintf(const char *fmt, va_list ap)
{
    struct buf b;
    buf_init(&b);
    buf_vprintf(&b, fmt, ap);
    return buf_steal(&b);
}

char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

uint64_t str_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}
