#include "report/jsonw.h"

#include <math.h>

void jw_init(struct jsonw *w, struct buf *out)
{
    *w = (struct jsonw){.out = out, .first[0] = true};
}

void jw_flush_(struct jsonw *w)
{
    fwrite(w->out->data, 1, w->out->len, w->sink);
    buf_reset(w->out);
}

void jw_dbl(struct jsonw *w, const char *key, double v)
{
    if (!isfinite(v)) {
        jw_null(w, key);
        return;
    }
    jw_end_(w, jw_key_(w, key, 0));
    buf_printf(w->out, "%.6g", v);
}
