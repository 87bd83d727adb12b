#include "report/jsonw.h"

#include <math.h>
#include <string.h>

#include "util/escape.h"

const char jw_digits2_[200] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

const uint64_t jw_pow10_[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

char *jw_put_u64_big_(char *d, uint64_t v)
{
    unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;
    char *end = d + t + (v >= jw_pow10_[t]);
    char *p = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, jw_digits2_ + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(p - 2, jw_digits2_ + 2 * v, 2);
    else
        p[-1] = (char)('0' + v);
    return end;
}

void jw_init(struct jsonw *w, struct buf *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = true;
    w->sink = NULL;
    w->run_limit = NULL;
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

void jw_word_set(struct jw_word *wd, const char *s)
{
    size_t n = strlen(s);
    assert(n + 2 <= sizeof(wd->s));
    if (n + 2 > sizeof(wd->s))
        n = sizeof(wd->s) - 2; /* never: the names are the program's own */
    memset(wd->s, 0, sizeof(wd->s));
    wd->s[0] = '"';
    memcpy(wd->s + 1, s, n);
    wd->s[n + 1] = '"';
    wd->n = n + 2;
}
