/* A checking JSON reader (RFC 8259) that keeps one string: recursive descent
 * over the whole document, with the depth bounded, so that a hostile file
 * costs at most one pass and JSONGET_MAX_DEPTH frames. */
#include "util/jsonget.h"

#include <string.h>

#include "util/buf.h"

struct reader {
    const unsigned char *p, *end;
    int depth;
    struct buf key;   /* the member name being compared */
    struct buf value; /* the string found so far */
    bool found;
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
        unsigned char c = r->p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    r->p += 4;
    return v;
}

static void put_utf8(struct buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    if (b)
        buf_add(b, u, n);
}

/* \uXXXX after the backslash and the u; a surrogate pair is one character. */
static bool unicode_escape(struct reader *r, struct buf *out)
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
            put_utf8(out, 0x10000 + ((unsigned)(cp - 0xd800) << 10) + (unsigned)(lo - 0xdc00));
            return true;
        }
        r->p = save; /* a lone high surrogate, then another escape */
    }
    put_utf8(out, cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : (unsigned)cp);
    return true;
}

/* A string at r->p (after the opening quote is checked here); decoded into
 * out unless out is NULL. */
static bool string(struct reader *r, struct buf *out)
{
    if (!eat(r, '"'))
        return false;
    if (out)
        buf_reset(out);
    for (;;) {
        const unsigned char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && *r->p >= 0x20)
            r->p++;
        if (out)
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
            if (out)
                buf_addc(out, decoded[plain - "\"\\/bfnrt"]);
        } else if (e != 'u' || !unicode_escape(r, out)) {
            return false;
        }
    }
}

static bool value(struct reader *r, const char *const *path, size_t npath, bool on_path);

static bool object(struct reader *r, const char *const *path, size_t npath, bool on_path)
{
    if (eat(r, '}'))
        return true;
    for (;;) {
        bool match = false;
        if (on_path && npath > 0) {
            if (!string(r, &r->key))
                return false;
            match = path[0] != JSONGET_FIRST && r->key.len == strlen(path[0]) &&
                    memcmp(r->key.data, path[0], r->key.len) == 0;
        } else if (!string(r, NULL)) {
            return false;
        }
        /* Off the path, there is no path to advance (it may be NULL). */
        if (!eat(r, ':') || !value(r, match ? path + 1 : NULL, match ? npath - 1 : 0, match))
            return false;
        if (eat(r, '}'))
            return true;
        if (!eat(r, ','))
            return false;
    }
}

/* An array; the first element is on the path when the path's next step is
 * JSONGET_FIRST. */
static bool array(struct reader *r, const char *const *path, size_t npath, bool on_path)
{
    if (eat(r, ']'))
        return true;
    bool first = on_path && npath > 0 && path[0] == JSONGET_FIRST;
    for (;;) {
        if (!value(r, first ? path + 1 : NULL, first ? npath - 1 : 0, first))
            return false;
        first = false;
        if (eat(r, ']'))
            return true;
        if (!eat(r, ','))
            return false;
    }
}

/* One value. on_path: the keys so far lead here; npath keys are left (none:
 * this is the value asked for). */
static bool value(struct reader *r, const char *const *path, size_t npath, bool on_path)
{
    skip_ws(r);
    if (r->p >= r->end)
        return false;
    bool target = on_path && npath == 0;
    if (target)
        r->found = false; /* the last of duplicate keys counts */
    switch (*r->p) {
    case '"':
        if (!string(r, target ? &r->value : NULL))
            return false;
        if (target)
            r->found = true;
        return true;
    case '{':
    case '[': {
        if (++r->depth > JSONGET_MAX_DEPTH)
            return false;
        bool ok = *r->p++ == '{' ? object(r, path, npath, on_path) : array(r, path, npath, on_path);
        r->depth--;
        return ok;
    }
    case 't':
        return literal(r, "true");
    case 'f':
        return literal(r, "false");
    case 'n':
        return literal(r, "null");
    default:
        return number(r);
    }
}

const char jsonget_first[] = "[0]";

bool jsonget_string(const char *text, size_t len, const char *const *path, size_t npath, char **out)
{
    struct reader r = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len};
    buf_init(&r.key);
    buf_init(&r.value);
    bool ok = value(&r, path, npath, true);
    skip_ws(&r);
    ok = ok && r.p == r.end && r.found && strlen(r.value.data) == r.value.len;
    *out = ok ? buf_steal(&r.value) : NULL;
    buf_free(&r.key);
    buf_free(&r.value);
    return ok;
}

/* The string the path leads to from the value at r->p. */
static bool string_at(struct reader *r, const char *const *path, size_t npath)
{
    r->found = false;
    return value(r, path, npath, true) && r->found && strlen(r->value.data) == r->value.len;
}

/* An object at r->p read whole; r->found when its member key is a string
 * without a NUL (then in r->value). False when it is malformed. */
static bool value_found(struct reader *r, const char *key)
{
    const char *path[] = {key};
    r->found = false;
    if (!value(r, path, 1, true))
        return false;
    r->found = r->found && strlen(r->value.data) == r->value.len;
    return true;
}

bool jsonget_string_where(const char *text, size_t len, const char *key, const char *want,
                          const char *const *path, size_t npath, char **out)
{
    struct reader r = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len};
    buf_init(&r.key);
    buf_init(&r.value);
    const unsigned char *match = NULL;
    bool ok = eat(&r, '[');
    if (ok && !eat(&r, ']')) {
        /* Each element read once for its key, the whole array checked. */
        r.depth = 1;
        for (;;) {
            skip_ws(&r);
            const unsigned char *start = r.p;
            if (r.p >= r.end || *r.p != '{' || !value_found(&r, key)) {
                ok = false;
                break;
            }
            if (r.found && strcmp(r.value.data, want) == 0)
                match = start;
            if (eat(&r, ']'))
                break;
            if (!eat(&r, ',')) {
                ok = false;
                break;
            }
        }
    }
    skip_ws(&r);
    ok = ok && r.p == r.end && match;
    if (ok) {
        r.p = match;
        ok = string_at(&r, path, npath);
    }
    *out = ok ? buf_steal(&r.value) : NULL;
    buf_free(&r.key);
    buf_free(&r.value);
    return ok;
}
