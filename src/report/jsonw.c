#include "report/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/escape.h"

void jw_init(struct jsonw *w, struct buf *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = true;
}

/* The comma and the key of the next value, with room made for extra more
 * bytes after them; returns where the value goes (the caller adds its
 * length to out->len and terminates). */
static char *item_room(struct jsonw *w, const char *key, size_t extra)
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

/* Ends a value written in place by item_room's caller at end. */
static void item_done(struct jsonw *w, char *end)
{
    *end = '\0';
    w->out->len = (size_t)(end - w->out->data);
}

static void item(struct jsonw *w, const char *key)
{
    item_done(w, item_room(w, key, 0));
}

static void open_(struct jsonw *w, const char *key, char c)
{
    char *d = item_room(w, key, 1);
    *d++ = c;
    item_done(w, d);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
    buf_addc(w->out, c);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj(struct jsonw *w, const char *key) { open_(w, key, '{'); }
void jw_obj_end(struct jsonw *w) { close_(w, '}'); }
void jw_arr(struct jsonw *w, const char *key) { open_(w, key, '['); }
void jw_arr_end(struct jsonw *w) { close_(w, ']'); }

void jw_str(struct jsonw *w, const char *key, const char *s)
{
    item(w, key);
    if (s)
        esc_json(w->out, s);
    else
        buf_adds(w->out, "null");
}

/* Writes v in decimal at d; returns the end. */
static char *put_u64(char *d, uint64_t v)
{
    char b[20], *s = b + sizeof(b);
    do {
        *--s = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t n = (size_t)(b + sizeof(b) - s);
    memcpy(d, s, n);
    return d + n;
}

void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    item_done(w, put_u64(item_room(w, key, 20), v));
}

void jw_i64(struct jsonw *w, const char *key, int64_t v)
{
    char *d = item_room(w, key, 21);
    if (v < 0)
        *d++ = '-';
    item_done(w, put_u64(d, v < 0 ? 0 - (uint64_t)v : (uint64_t)v));
}

void jw_dbl(struct jsonw *w, const char *key, double v)
{
    item(w, key);
    if (isfinite(v))
        buf_printf(w->out, "%.6g", v);
    else
        buf_adds(w->out, "null");
}

void jw_bool(struct jsonw *w, const char *key, bool v)
{
    char *d = item_room(w, key, 5);
    memcpy(d, v ? "true" : "false", v ? 4 : 5);
    item_done(w, d + (v ? 4 : 5));
}

void jw_null(struct jsonw *w, const char *key)
{
    char *d = item_room(w, key, 4);
    memcpy(d, "null", 4);
    item_done(w, d + 4);
}
