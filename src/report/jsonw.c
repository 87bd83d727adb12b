#include "report/jsonw.h"

#include <math.h>
#include <string.h>

#include "util/escape.h"

void jw_init(struct jsonw *w, struct buf *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = true;
    w->sink = NULL;
}

void jw_stream(struct jsonw *w, FILE *sink)
{
    w->sink = sink;
}

static void item(struct jsonw *w, const char *key)
{
    jw_item_done_(w, jw_item_room_(w, key, 0));
}

static void open_(struct jsonw *w, const char *key, char c)
{
    char *d = jw_item_room_(w, key, 1);
    *d++ = c;
    jw_item_done_(w, d);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(struct jsonw *w, char c)
{
    buf_addc(w->out, c);
    if (w->depth > 0)
        w->depth--;
    if (w->sink && w->out->len >= JSONW_FLUSH_AT) {
        fwrite(w->out->data, 1, w->out->len, w->sink);
        buf_reset(w->out);
    }
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

void jw_dbl(struct jsonw *w, const char *key, double v)
{
    item(w, key);
    if (isfinite(v))
        buf_printf(w->out, "%.6g", v);
    else
        buf_adds(w->out, "null");
}

