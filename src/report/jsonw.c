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

static void item(struct jsonw *w, const char *key)
{
    if (!w->first[w->depth])
        buf_addc(w->out, ',');
    w->first[w->depth] = false;
    if (key) {
        /* Keys are the writer's own names, plain ASCII: no escaping to do. */
        size_t n = strlen(key);
        buf_reserve(w->out, n + 3);
        char *d = w->out->data + w->out->len;
        d[0] = '"';
        memcpy(d + 1, key, n);
        d[n + 1] = '"';
        d[n + 2] = ':';
        d[n + 3] = '\0';
        w->out->len += n + 3;
    }
}

static void open_(struct jsonw *w, const char *key, char c)
{
    item(w, key);
    buf_addc(w->out, c);
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

/* Decimal digits of v, written backwards from end; returns the first. */
static char *digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    item(w, key);
    char b[24], *end = b + sizeof(b), *s = digits(end, v);
    buf_add(w->out, s, (size_t)(end - s));
}

void jw_i64(struct jsonw *w, const char *key, int64_t v)
{
    item(w, key);
    char b[24], *end = b + sizeof(b);
    char *s = digits(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--s = '-';
    buf_add(w->out, s, (size_t)(end - s));
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
    item(w, key);
    buf_adds(w->out, v ? "true" : "false");
}

void jw_null(struct jsonw *w, const char *key)
{
    item(w, key);
    buf_adds(w->out, "null");
}
