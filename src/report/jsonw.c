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

void jw_flush_(struct jsonw *w)
{
    fwrite(w->out->data, 1, w->out->len, w->sink);
    buf_reset(w->out);
}

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

