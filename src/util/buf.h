/* A growable byte buffer that is always NUL-terminated. */
#ifndef SHMWATCH_BUF_H
#define SHMWATCH_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
    char *data;
    size_t len;
    size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
/* Makes room for extra more bytes (and the NUL): a call only when it grows. */
void buf_grow(struct buf *b, size_t extra);
static inline void buf_reserve(struct buf *b, size_t extra)
{
    if (b->len + extra + 1 > b->cap)
        buf_grow(b, extra);
}
void buf_add(struct buf *b, const void *data, size_t n);
void buf_adds(struct buf *b, const char *s);
static inline void buf_addc(struct buf *b, char c)
{
    buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* A newly allocated formatted string (never NULL). */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list ap);
/* Hands the string to the caller and leaves the buffer empty. */
char *buf_steal(struct buf *b);
/* FNV-1a (64 bits) of the n bytes at p, hashed on from h: STR_HASH_START
 * to begin, a former result to go on. */
#define STR_HASH_START 14695981039346656037ULL
uint64_t str_hash(uint64_t h, const void *p, size_t n);

#endif
