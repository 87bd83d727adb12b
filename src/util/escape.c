#include "util/escape.h"

#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

static uint32_t utf8_decode(const unsigned char *s, size_t len)
{
    static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = s[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        cp = (cp << 6) | (s[i] & 0x3f);
    return cp;
}

size_t utf8_valid_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len == 0 || n < len)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = utf8_decode(s, len);
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if (cp >= 0xd800 && cp <= 0xdfff)
        return 0;
    return len;
}

/* Bytes that go into a JSON string as they are: printable ASCII but the
 * quote (0x22) and the backslash (0x5c); DEL (0x7f) is escaped. */
static const unsigned char json_plain[256] = {
    [0x20] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
};

void esc_json(struct buf *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    /* The plain start is found in one pass (the NUL is not plain); a plain
     * string, nearly every one, is then written in one copy. */
    size_t plain = 0;
    while (json_plain[s[plain]])
        plain++;
    size_t n = plain + strlen(str + plain), run = 0; /* s[run..i) is copied as it is, in one go */
    buf_reserve(out, n + 2);
    buf_addc(out, '"');
    for (size_t i = plain; i < n;) {
        unsigned char c = s[i];
        if (json_plain[c]) {
            i++;
            continue;
        }
        size_t len = c >= 0x80 ? utf8_valid_len(s + i, n - i) : 0;
        if (len && utf8_char_shown(s + i, len)) {
            i += len;
            continue;
        }
        buf_add(out, s + run, i - run);
        if (len) {
            /* A C1 control or an invisible character: as \u escapes (a
             * surrogate pair past U+FFFF), the same string to a parser,
             * harmless to a terminal the document is printed on. */
            uint32_t cp = utf8_decode(s + i, len);
            if (cp > 0xffff)
                buf_printf(out, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
                           0xdc00 + ((cp - 0x10000) & 0x3ff));
            else
                buf_printf(out, "\\u%04x", cp);
            run = i += len;
            continue;
        }
        switch (c) {
        case '"': buf_add(out, "\\\"", 2); break;
        case '\\': buf_add(out, "\\\\", 2); break;
        case '\n': buf_add(out, "\\n", 2); break;
        case '\t': buf_add(out, "\\t", 2); break;
        case '\r': buf_add(out, "\\r", 2); break;
        default:
            if (c < 0x20 || c == 0x7f)
                buf_printf(out, "\\u%04x", c);
            else
                buf_add(out, "\\ufffd", 6); /* invalid UTF-8 */
            break;
        }
        run = ++i;
    }
    buf_add(out, s + run, n - run);
    buf_addc(out, '"');
}

/* Characters a terminal draws as nothing, or that reorder or join what is
 * around them: Unicode's format characters (category Cf: bidirectional
 * overrides and isolates, zero-width spaces and joiners, the byte order
 * mark, tags...), the line and paragraph separators, and the blank Hangul
 * fillers. In a name they let one name pass for another (U+202E turns
 * "rtl_\u{202e}gpj.exe" into "rtl_exe.jpg" on screen) or shift columns. */
static bool invisible(uint32_t cp)
{
    static const uint32_t ranges[][2] = {
        {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},
        {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x115f, 0x1160},
        {0x180e, 0x180e},   {0x200b, 0x200f},   {0x2028, 0x202e},   {0x2060, 0x2064},
        {0x2066, 0x206f},   {0x3164, 0x3164},   {0xfeff, 0xfeff},   {0xffa0, 0xffa0},
        {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f},
        {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f},
    };
    if (cp < 0xad)
        return false;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (cp >= ranges[i][0] && cp <= ranges[i][1])
            return true;
    return false;
}

bool utf8_char_shown(const unsigned char *s, size_t len)
{
    uint32_t cp = utf8_decode(s, len);
    return !(cp >= 0x80 && cp <= 0x9f) && !invisible(cp);
}

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_locale_open(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* Whether cp is drawn over the cell before it (a combining mark): of no
 * width in C.UTF-8, whatever the program's own locale (the text output
 * runs without one); where C.UTF-8 is not installed (a static binary in a
 * bare container), in the program's locale. */
static bool combines(uint32_t cp)
{
    pthread_once(&utf8_once, utf8_locale_open);
    if (!utf8_locale)
        return wcwidth((wchar_t)cp) == 0;
    locale_t was = uselocale(utf8_locale);
    int w = wcwidth((wchar_t)cp);
    uselocale(was);
    return w == 0;
}

void esc_term(struct buf *out, const char *str, int ascii)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str);
    /* Whether the character written last is one a mark may be the accent
     * of: none at the start, after a space or a '/' (where a name begins
     * in a sentence, a path or a "NAMESPACE/NAME" label), after an escape
     * (the mark would land on its last digit). */
    bool base = false;
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '\\') {
            buf_adds(out, "\\\\");
            i++;
            base = false;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': buf_adds(out, "\\n"); break;
            case '\t': buf_adds(out, "\\t"); break;
            case '\r': buf_adds(out, "\\r"); break;
            case 0x1b: buf_adds(out, "\\e"); break;
            default: buf_printf(out, "\\x%02x", c); break;
            }
            i++;
            base = false;
        } else {
            size_t len = utf8_valid_len(s + i, n - i);
            if (len == 0) {
                buf_printf(out, "\\x%02x", c);
                i++;
                base = false;
                continue;
            }
            if (len > 1 && (ascii || !utf8_char_shown(s + i, len) ||
                            (!base && combines(utf8_decode(s + i, len))))) {
                buf_printf(out, "\\u{%x}", (unsigned)utf8_decode(s + i, len));
                base = false;
            } else {
                buf_add(out, s + i, len);
                base = c != ' ' && c != '/';
            }
            i += len;
        }
    }
}

char *esc_term_dup(const char *s)
{
    struct buf b;
    buf_init(&b);
    esc_term(&b, s, 0);
    return buf_steal(&b);
}

size_t utf8_cut(const char *s, size_t len)
{
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
        len--; /* s[len] continues a character: cut before it starts */
    return len;
}

size_t esc_term_cut(const char *s, size_t len)
{
    size_t n = strlen(s), cut = 0;
    for (size_t i = 0; i < n && i < len;) {
        size_t k;
        if (s[i] != '\\') {
            k = utf8_valid_len((const unsigned char *)s + i, n - i);
            k = k ? k : 1;
        } else if (s[i + 1] == 'x') {
            k = 4;
        } else if (s[i + 1] == 'u') {
            const char *end = strchr(s + i, '}');
            k = end ? (size_t)(end - (s + i)) + 1 : n - i;
        } else {
            k = 2; /* \\ \n \t \r \e */
        }
        if (i + k > len)
            break;
        i += k;
        cut = i;
    }
    return cut;
}

void utf8_vsnprintf(char *dst, size_t size, const char *fmt, va_list ap)
{
    struct buf b;
    buf_init(&b);
    buf_vprintf(&b, fmt, ap);
    size_t len = b.len < size ? b.len : utf8_cut(b.data, size - 1);
    if (len)
        memcpy(dst, b.data, len);
    dst[len] = '\0';
    buf_free(&b);
}
