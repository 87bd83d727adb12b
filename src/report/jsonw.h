/* A minimal streaming JSON writer: keeps track of commas so that callers
 * only say what comes next, and makes room in its buffer for each value as
 * it appends it. Output is compact, on one line. */
#ifndef SHMWATCH_JSONW_H
#define SHMWATCH_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/escape.h"

#define JSONW_MAX_DEPTH 16

struct jsonw {
    struct buf *out;
    int depth;
    bool first[JSONW_MAX_DEPTH];
    /* NULL (as jw_init leaves it): everything stays in out. Else out is
     * written to sink whenever it holds JSONW_FLUSH_AT bytes at the end of an
     * object or array, and emptied: a snapshot of 100,000 segments (30 MB)
     * then never sits in memory whole. What is left at the end stays in out
     * for the caller. A failed write is seen by ferror(sink). */
    FILE *sink;
};
#define JSONW_FLUSH_AT (48u << 10)

void jw_init(struct jsonw *w, struct buf *out);

/* key may be NULL inside arrays (and at the top level); keys are written as
 * they are, so they must be plain ASCII names (values are escaped).
 *
 * The writers are inline: a key is nearly always a literal, so its length
 * is known where the call is compiled, and a snapshot writes some twenty
 * values per segment. The names ending in _ are the writer's own. */

/* The comma before the next value (if it is not the first) and its key,
 * with room made for them and for room more bytes; returns where the value
 * goes. jw_end_ then says where it ends. */
static inline char *jw_key_(struct jsonw *w, const char *key, size_t room)
{
    size_t n = key ? strlen(key) : 0;
    buf_reserve(w->out, n + 4 + room);
    char *d = w->out->data + w->out->len;
    if (!w->first[w->depth])
        *d++ = ',';
    w->first[w->depth] = false;
    if (key) {
        *d++ = '"';
        memcpy(d, key, n);
        d += n;
        *d++ = '"';
        *d++ = ':';
    }
    return d;
}

static inline void jw_end_(struct jsonw *w, char *end)
{
    *end = '\0';
    w->out->len = (size_t)(end - w->out->data);
}

/* A value written as it is (a literal: null, true, a brace). */
static inline void jw_lit_(struct jsonw *w, const char *key, const char *s)
{
    size_t n = strlen(s);
    char *d = jw_key_(w, key, n);
    memcpy(d, s, n);
    jw_end_(w, d + n);
}

/* A string, escaped; null for NULL. */
static inline void jw_str(struct jsonw *w, const char *key, const char *s)
{
    if (!s) {
        jw_lit_(w, key, "null");
        return;
    }
    jw_end_(w, jw_key_(w, key, 0));
    esc_json(w->out, s);
}

void jw_dbl(struct jsonw *w, const char *key, double v);

/* v in decimal, as printf's %llu writes it (at most 20 digits): its digits
 * counted, then written from the last. */
static inline char *jw_digits_(char *d, uint64_t v)
{
    size_t n = 1;
    for (uint64_t x = v; x >= 10; x /= 10)
        n++;
    char *end = d + n, *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

static inline void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    jw_end_(w, jw_digits_(jw_key_(w, key, 20), v));
}

static inline void jw_i64(struct jsonw *w, const char *key, int64_t v)
{
    char *d = jw_key_(w, key, 21);
    if (v < 0)
        *d++ = '-';
    jw_end_(w, jw_digits_(d, v < 0 ? 0 - (uint64_t)v : (uint64_t)v));
}

static inline void jw_bool(struct jsonw *w, const char *key, bool v)
{
    jw_lit_(w, key, v ? "true" : "false");
}

static inline void jw_null(struct jsonw *w, const char *key)
{
    jw_lit_(w, key, "null");
}

/* Opening and closing objects and arrays. */
static inline void jw_open_(struct jsonw *w, const char *key, const char *c)
{
    jw_lit_(w, key, c);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

/* Writes out and empties the buffer (into w->sink). */
void jw_flush_(struct jsonw *w);

static inline void jw_close_(struct jsonw *w, char c)
{
    buf_addc(w->out, c);
    if (w->depth > 0)
        w->depth--;
    if (w->sink && w->out->len >= JSONW_FLUSH_AT)
        jw_flush_(w);
}

static inline void jw_obj(struct jsonw *w, const char *key)
{
    jw_open_(w, key, "{");
}
static inline void jw_obj_end(struct jsonw *w)
{
    jw_close_(w, '}');
}
static inline void jw_arr(struct jsonw *w, const char *key)
{
    jw_open_(w, key, "[");
}
static inline void jw_arr_end(struct jsonw *w)
{
    jw_close_(w, ']');
}

/* An array of strings: the n of s, in order. */
static inline void jw_strs(struct jsonw *w, const char *key, char *const *s, size_t n)
{
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++)
        jw_str(w, NULL, s[i]);
    jw_arr_end(w);
}

/* A figure that may be unknown or not asked for: v under key when has,
 * else null (schema 1 keeps every key, its type or null). */
static inline void jw_u64_or_null(struct jsonw *w, const char *key, bool has, uint64_t v)
{
    if (has)
        jw_u64(w, key, v);
    else
        jw_null(w, key);
}

static inline void jw_i64_or_null(struct jsonw *w, const char *key, bool has, int64_t v)
{
    if (has)
        jw_i64(w, key, v);
    else
        jw_null(w, key);
}

static inline void jw_bool_or_null(struct jsonw *w, const char *key, bool has, bool v)
{
    if (has)
        jw_bool(w, key, v);
    else
        jw_null(w, key);
}

#endif
