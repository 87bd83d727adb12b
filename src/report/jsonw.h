/* A minimal streaming JSON writer: keeps track of commas so that callers
 * only say what comes next. Output is compact, on one line. */
#ifndef SHMWATCH_JSONW_H
#define SHMWATCH_JSONW_H

#include <assert.h>
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
    FILE *sink; /* NULL: everything stays in out */
    char *run_limit; /* the end of the room of the run being written (jw_run_room) */
};

void jw_init(struct jsonw *w, struct buf *out);
/* From now on, out is written to sink whenever it holds JSONW_FLUSH_AT bytes
 * at the end of an object or array, and emptied: a snapshot of 100,000
 * segments (30 MB) then never sits in memory whole. What is left at the end
 * stays in out for the caller. A failed write is seen by ferror(sink).
 * 48 KiB, so that the buffer, with the element that crosses the mark,
 * stays within 64 KiB: at 64 KiB that element doubled it to 128 KiB,
 * copied into pages made for it. */
void jw_stream(struct jsonw *w, FILE *sink);
#define JSONW_FLUSH_AT (48u << 10)
/* key may be NULL inside arrays (and at the top level); keys are written as
 * they are, so they must be plain ASCII names (values are escaped).
 * jw_obj, jw_obj_end, jw_arr and jw_arr_end are inline, below. */
void jw_str(struct jsonw *w, const char *key, const char *s);
void jw_dbl(struct jsonw *w, const char *key, double v);


/* The writers of scalars are inline: a key is nearly always a literal, so
 * its length is known where the call is compiled and the copy is a few
 * moves; with 14 keys per segment this is most of a snapshot's user time.
 * The names ending in _ are the writer's own. */

/* The comma and the key of the next value, with room made for extra more
 * bytes after them; returns where the value goes (the caller adds its
 * length to out->len and terminates). */
static inline char *jw_item_room_(struct jsonw *w, const char *key, size_t extra)
{
    size_t n = key ? strlen(key) : 0;
    buf_reserve(w->out, n + 4 + extra);
    char *d = w->out->data + w->out->len;
    if (!w->first[w->depth])
        *d++ = ',';
    w->first[w->depth] = false;
    if (key) {
        /* Keys are the writer's own names, plain ASCII: no escaping to do. */
        *d++ = '"';
        memcpy(d, key, n);
        d += n;
        *d++ = '"';
        *d++ = ':';
    }
    return d;
}

/* Ends a value written in place by jw_item_room_'s caller at end. */
static inline void jw_item_done_(struct jsonw *w, char *end)
{
    *end = '\0';
    w->out->len = (size_t)(end - w->out->data);
}

/* Pairs of decimal digits, "00" to "99", and the powers of ten 10^0 to
 * 10^19 (jsonw.c). */
extern const char jw_digits2_[200];
extern const uint64_t jw_pow10_[20];

/* jw_put_u64_ of a number of more than 32 bits (out of line: rare). */
char *jw_put_u64_big_(char *d, uint64_t v);

/* Writes v in decimal at d; returns the end (at most 20 bytes). The
 * number of digits comes from the bit length (a multiply and one compare,
 * no division), then the digits are written in place from the last, two at
 * a time: most numbers of a snapshot (pids, fds, sizes) have 1 to 10
 * digits, and a copy of a length known only at run time would be a call to
 * memcpy. Numbers that fit 32 bits, nearly all, divide in 32 bits. */
static inline char *jw_put_u64_(char *d, uint64_t v)
{
    if (v < 10) {
        *d = (char)('0' + v);
        return d + 1;
    }
    if (v > UINT32_MAX)
        return jw_put_u64_big_(d, v);
    uint32_t x = (uint32_t)v;
    /* bits * 1233 / 4096 is bits * log10(2), rounded down: the digit count
     * less one, or less two when x is below the power of ten it names. */
    unsigned t = ((32u - (unsigned)__builtin_clz(x)) * 1233u) >> 12;
    char *end = d + t + (x >= jw_pow10_[t]);
    char *p = end;
    while (x >= 100) {
        uint32_t r = x % 100;
        x /= 100;
        p -= 2;
        memcpy(p, jw_digits2_ + 2 * r, 2);
    }
    if (x >= 10)
        memcpy(p - 2, jw_digits2_ + 2 * x, 2);
    else
        p[-1] = (char)('0' + x);
    return end;
}

static inline void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    jw_item_done_(w, jw_put_u64_(jw_item_room_(w, key, 20), v));
}

static inline void jw_i64(struct jsonw *w, const char *key, int64_t v)
{
    char *d = jw_item_room_(w, key, 21);
    if (v < 0)
        *d++ = '-';
    jw_item_done_(w, jw_put_u64_(d, v < 0 ? 0 - (uint64_t)v : (uint64_t)v));
}

/* A string the program itself names (an enum's name: plain ASCII, nothing
 * to escape), written without the escaper's scan. */
static inline void jw_name(struct jsonw *w, const char *key, const char *s)
{
    size_t n = strlen(s);
    char *d = jw_item_room_(w, key, n + 2);
    *d++ = '"';
    memcpy(d, s, n);
    d[n] = '"';
    jw_item_done_(w, d + n + 1);
}

/* Text that is JSON already (a value escaped once and written many times). */
static inline void jw_raw(struct jsonw *w, const char *key, const char *json, size_t n)
{
    char *d = jw_item_room_(w, key, n);
    memcpy(d, json, n);
    jw_item_done_(w, d + n);
}

/* Opening and closing objects and arrays: a few per segment, inline. */
static inline void jw_open_(struct jsonw *w, const char *key, char c)
{
    char *d = jw_item_room_(w, key, 1);
    *d++ = c;
    jw_item_done_(w, d);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

/* Writes out and empties the buffer (jw_stream's sink). */
void jw_flush_(struct jsonw *w);

static inline void jw_close_(struct jsonw *w, char c)
{
    buf_addc(w->out, c);
    if (w->depth > 0)
        w->depth--;
    if (w->sink && w->out->len >= JSONW_FLUSH_AT)
        jw_flush_(w);
}

static inline void jw_obj(struct jsonw *w, const char *key) { jw_open_(w, key, '{'); }
static inline void jw_obj_end(struct jsonw *w) { jw_close_(w, '}'); }
static inline void jw_arr(struct jsonw *w, const char *key) { jw_open_(w, key, '['); }
static inline void jw_arr_end(struct jsonw *w) { jw_close_(w, ']'); }

static inline void jw_bool(struct jsonw *w, const char *key, bool v)
{
    char *d = jw_item_room_(w, key, 5);
    memcpy(d, v ? "true" : "false", v ? 4 : 5);
    jw_item_done_(w, d + (v ? 4 : 5));
}

static inline void jw_null(struct jsonw *w, const char *key)
{
    char *d = jw_item_room_(w, key, 4);
    memcpy(d, "null", 4);
    jw_item_done_(w, d + 4);
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

/* Writing an object in one piece, for the arrays of a snapshot that hold
 * thousands of them (json.c's segments and processes): the caller makes
 * room once for an upper bound of a run of its bytes, writes them with the
 * unchecked jw_put_* below (keys as literals with their comma,
 * ",\"size_bytes\":"), and ends the run with jw_run_end, or with jw_put_str
 * and a string of any length, which starts the next run; jw_elem_end after
 * the whole element. One check per run instead of a reservation, a comma
 * test and a key copy per value. A run that outgrows its room is caught by
 * an assertion (the tests build with them). */

/* Room for n bytes of a new element of the array being written (its comma
 * made); returns where the element goes. */
static inline char *jw_elem_room(struct jsonw *w, size_t n)
{
    char *d = jw_item_room_(w, NULL, n);
    w->run_limit = d + n;
    return d;
}

/* Room for n more bytes after what is written; returns where they go. */
static inline char *jw_run_room(struct jsonw *w, size_t n)
{
    buf_reserve(w->out, n);
    char *d = w->out->data + w->out->len;
    w->run_limit = d + n;
    return d;
}

/* Ends a run of bytes written by jw_put_* at end (in the room made). */
static inline void jw_run_end(struct jsonw *w, char *end)
{
    assert(end <= w->run_limit);
    jw_item_done_(w, end);
}

/* Ends the run at d, writes s as jw_str writes a value (escaped; null for
 * NULL), and starts a run of room bytes after it: returns where they go. */
static inline char *jw_put_str(struct jsonw *w, char *d, const char *s, size_t room)
{
    jw_run_end(w, d);
    if (s)
        esc_json(w->out, s);
    else
        buf_add(w->out, "null", 4);
    return jw_run_room(w, room);
}

/* After an element written in runs: streams out as jw_obj_end would. */
static inline void jw_elem_end(struct jsonw *w)
{
    if (w->sink && w->out->len >= JSONW_FLUSH_AT)
        jw_flush_(w);
}

/* A string literal's bytes at d; evaluates to the end (d, a variable, twice). */
#define JW_PUT_LIT(d, lit) (memcpy((d), (lit), sizeof(lit) - 1), (d) + sizeof(lit) - 1)

/* At most 20 bytes. */
static inline char *jw_put_i64(char *d, int64_t v)
{
    if (v < 0)
        *d++ = '-';
    return jw_put_u64_(d, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

static inline char *jw_put_u64(char *d, uint64_t v)
{
    return jw_put_u64_(d, v);
}

/* At most 5 bytes. */
static inline char *jw_put_bool(char *d, bool v)
{
    return v ? JW_PUT_LIT(d, "true") : JW_PUT_LIT(d, "false");
}

static inline char *jw_put_raw(char *d, const char *json, size_t n)
{
    memcpy(d, json, n);
    return d + n;
}

/* A short JSON text kept for writing many times (an enum's name, quoted):
 * copied whole, a fixed size, without a call to memcpy; then only its
 * length counts. */
struct jw_word {
    char s[24];
    size_t n;
};
/* The quoted name s (plain ASCII, at most 22 bytes: the program's own). */
void jw_word_set(struct jw_word *wd, const char *s);
/* Writes wd at d; needs sizeof(wd->s) bytes of room. */
static inline char *jw_put_word(char *d, const struct jw_word *wd)
{
    memcpy(d, wd->s, sizeof(wd->s));
    return d + wd->n;
}

#endif
