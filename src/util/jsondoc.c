/* The project's one JSON reader (RFC 8259): recursive descent over the
 * whole document into a tree, with the depth bounded, so that a hostile file
 * costs one pass and JSONDOC_MAX_DEPTH frames. jsonget (a runtime's state
 * file) and the recordings' readers (why, replay) both read through it. */
#include "util/jsondoc.h"
#include "util/jsonget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/procstat.h"
#include "util/xalloc.h"

struct reader {
    const unsigned char *start, *p, *end;
    int depth;
    struct buf str; /* the string being decoded */
    bool too_deep;
};

static void skip_ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool eat(struct reader *r, char c)
{
    skip_ws(r);
    if (r->p < r->end && *r->p == (unsigned char)c) {
        r->p++;
        return true;
    }
    return false;
}

static bool literal(struct reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return false;
    r->p += n;
    return true;
}

static bool digits(struct reader *r)
{
    const unsigned char *start = r->p;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        r->p++;
    return r->p > start;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number(struct reader *r)
{
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (r->p < r->end && *r->p == '0')
        r->p++;
    else if (!digits(r))
        return false;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (!digits(r))
            return false;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (!digits(r))
            return false;
    }
    return true;
}

static int hex4(struct reader *r)
{
    if (r->end - r->p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned d = hex_digit1[r->p[i]];
        if (!d)
            return -1;
        v = v << 4 | (int)(d - 1);
    }
    r->p += 4;
    return v;
}

/* cp as UTF-8: the low six bits in each continuation byte, last first,
 * what is left in the lead byte. */
static void put_utf8(struct buf *b, unsigned cp)
{
    static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0}; /* by length */
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    char u[4];
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        u[i] = (char)(0x80 | (cp & 0x3f));
    u[0] = (char)(lead[n] | cp);
    buf_add(b, u, n);
}

/* \uXXXX after the backslash and the u; a surrogate pair is one character. */
static bool unicode_escape(struct reader *r)
{
    int cp = hex4(r);
    if (cp < 0)
        return false;
    if (cp >= 0xd800 && cp <= 0xdbff && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
        const unsigned char *save = r->p;
        r->p += 2;
        int lo = hex4(r);
        if (lo < 0)
            return false;
        if (lo >= 0xdc00 && lo <= 0xdfff) {
            put_utf8(&r->str, 0x10000 + ((unsigned)(cp - 0xd800) << 10) + (unsigned)(lo - 0xdc00));
            return true;
        }
        r->p = save; /* a lone high surrogate, then another escape */
    }
    put_utf8(&r->str, cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : (unsigned)cp);
    return true;
}

/* A string at r->p (the opening quote is checked here), decoded into
 * r->str. */
static bool string(struct reader *r)
{
    struct buf *out = &r->str;
    if (!eat(r, '"'))
        return false;
    buf_reset(out);
    for (;;) {
        const unsigned char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && *r->p >= 0x20)
            r->p++;
        buf_add(out, run, (size_t)(r->p - run));
        if (r->p >= r->end || *r->p < 0x20)
            return false; /* unterminated, or a raw control character */
        if (*r->p++ == '"')
            return true;
        if (r->p >= r->end)
            return false;
        unsigned char e = *r->p++;
        const char *plain = strchr("\"\\/bfnrt", e);
        if (e && plain) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            buf_addc(out, decoded[plain - "\"\\/bfnrt"]);
        } else if (e != 'u' || !unicode_escape(r)) {
            return false;
        }
    }
}

static bool value(struct reader *r, struct jd *v);

/* Appends a slot to v's items (and keys, for an object). */
static struct jd *grow(struct jd *v, size_t *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        v->items = xrealloc(v->items, *cap * sizeof *v->items);
        if (v->type == JD_OBJ)
            v->keys = xrealloc(v->keys, *cap * sizeof *v->keys);
    }
    struct jd *slot = &v->items[v->n];
    *slot = (struct jd){.type = JD_NULL};
    return slot;
}

/* The members of an object or the elements of an array (v->type says
 * which), after its opening bracket. */
static bool members(struct reader *r, struct jd *v)
{
    bool obj = v->type == JD_OBJ;
    char close = obj ? '}' : ']';
    size_t cap = 0;
    if (eat(r, close))
        return true;
    for (;;) {
        if (obj && !string(r))
            return false;
        struct jd *slot = grow(v, &cap);
        if (obj)
            v->keys[v->n] = buf_steal(&r->str);
        v->n++;
        if ((obj && !eat(r, ':')) || !value(r, slot))
            return false;
        if (eat(r, close))
            return true;
        if (!eat(r, ','))
            return false;
    }
}

static bool value(struct reader *r, struct jd *v)
{
    skip_ws(r);
    if (r->p >= r->end)
        return false;
    switch (*r->p) {
    case '"':
        if (!string(r))
            return false;
        v->type = JD_STR;
        v->n = r->str.len;
        v->str = buf_steal(&r->str);
        return true;
    case '{':
    case '[': {
        if (++r->depth > JSONDOC_MAX_DEPTH) {
            r->too_deep = true;
            return false;
        }
        v->type = *r->p++ == '{' ? JD_OBJ : JD_ARR;
        bool ok = members(r, v);
        r->depth--;
        return ok;
    }
    case 't':
        v->type = JD_BOOL;
        v->b = true;
        return literal(r, "true");
    case 'f':
        v->type = JD_BOOL;
        return literal(r, "false");
    case 'n':
        return literal(r, "null");
    default: {
        const unsigned char *start = r->p;
        if (!number(r))
            return false;
        char num[64];
        size_t n = (size_t)(r->p - start);
        if (n >= sizeof num)
            n = sizeof num - 1; /* digits past 63 change nothing a double holds */
        memcpy(num, start, n);
        num[n] = '\0';
        v->type = JD_NUM;
        v->num = strtod(num, NULL);
        return true;
    }
    }
}

static void jd_clear(struct jd *v)
{
    for (size_t i = 0; (v->type == JD_ARR || v->type == JD_OBJ) && i < v->n; i++) {
        jd_clear(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void jd_free(struct jd *v)
{
    if (!v)
        return;
    jd_clear(v);
    free(v);
}

struct jd *jd_parse(const char *text, size_t len, char *err, size_t n)
{
    struct reader r = {.start = (const unsigned char *)text,
                       .p = (const unsigned char *)text,
                       .end = (const unsigned char *)text + len};
    buf_init(&r.str);
    struct jd *v = xcalloc(1, sizeof *v);
    bool ok = value(&r, v);
    skip_ws(&r);
    buf_free(&r.str);
    if (ok && r.p == r.end)
        return v;
    if (err && n)
        snprintf(err, n, "at byte %zu: %s", (size_t)(r.p - r.start),
                 r.too_deep ? "nested too deep" :
                 ok ? "more after the value" : "not valid JSON");
    jd_free(v);
    return NULL;
}

const struct jd *jd_get(const struct jd *v, const char *key)
{
    if (!v || v->type != JD_OBJ)
        return NULL;
    for (size_t i = v->n; i-- > 0;)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

const struct jd *jd_at(const struct jd *v, size_t i)
{
    return v && v->type == JD_ARR && i < v->n ? &v->items[i] : NULL;
}

int64_t jd_int(const struct jd *v, int64_t dflt)
{
    if (!v || v->type != JD_NUM || !(v->num > -9.2e18 && v->num < 9.2e18))
        return dflt;
    return (int64_t)v->num;
}

bool jd_bool(const struct jd *v, bool dflt)
{
    return v && v->type == JD_BOOL ? v->b : dflt;
}

const char *jd_str(const struct jd *v, const char *dflt)
{
    /* A string holding a NUL (\u0000) is no C string: not one here. */
    return v && v->type == JD_STR && strlen(v->str) == v->n ? v->str : dflt;
}

double jd_getnum(const struct jd *v, const char *key, double dflt)
{
    const struct jd *n = jd_get(v, key);
    return n && n->type == JD_NUM ? n->num : dflt;
}

int64_t jd_getint(const struct jd *v, const char *key, int64_t dflt)
{
    return jd_int(jd_get(v, key), dflt);
}

uint64_t jd_getu64(const struct jd *v, const char *key)
{
    double x = jd_getnum(v, key, 0);
    return x > 0 && x < 0x1p64 ? (uint64_t)x : 0;
}

int64_t jd_getpid(const struct jd *v, const char *key)
{
    int64_t x = jd_getint(v, key, 0);
    return x > 0 && x <= INT32_MAX ? x : 0;
}

const char *jd_getstr(const struct jd *v, const char *key, const char *dflt)
{
    return jd_str(jd_get(v, key), dflt);
}

bool jd_getbool(const struct jd *v, const char *key, bool dflt)
{
    return jd_bool(jd_get(v, key), dflt);
}

bool jd_has(const struct jd *v, const char *key, enum jd_type type)
{
    return jd_is(jd_get(v, key), type);
}

char *jd_strdup(const struct jd *v)
{
    const char *s = jd_str(v, NULL);
    return s ? xstrdup(s) : NULL;
}

bool jd_is(const struct jd *v, enum jd_type type)
{
    return v && v->type == type;
}

size_t jd_len(const struct jd *v)
{
    return jd_is(v, JD_ARR) ? v->n : 0;
}

const char jsonget_first[] = "[0]";

/* The string path leads to from v, as a new string. */
static bool string_at(const struct jd *v, const char *const *path, size_t npath, char **out)
{
    for (size_t i = 0; v && i < npath; i++)
        v = path[i] == JSONGET_FIRST ? jd_at(v, 0) : jd_get(v, path[i]);
    *out = jd_strdup(v);
    return *out != NULL;
}

bool jsonget_string(const char *text, size_t len, const char *const *path, size_t npath, char **out)
{
    struct jd *doc = jd_parse(text, len, NULL, 0);
    bool ok = doc && string_at(doc, path, npath, out);
    if (!ok)
        *out = NULL;
    jd_free(doc);
    return ok;
}

bool jsonget_string_where(const char *text, size_t len, const char *key, const char *want,
                          const char *const *path, size_t npath, char **out)
{
    struct jd *doc = jd_parse(text, len, NULL, 0);
    const struct jd *match = NULL;
    bool ok = doc && doc->type == JD_ARR;
    for (size_t i = 0; ok && i < doc->n; i++) {
        const struct jd *el = &doc->items[i];
        ok = el->type == JD_OBJ;
        const char *id = jd_getstr(el, key, NULL);
        if (ok && id && strcmp(id, want) == 0)
            match = el;
    }
    ok = ok && match && string_at(match, path, npath, out);
    if (!ok)
        *out = NULL;
    jd_free(doc);
    return ok;
}
