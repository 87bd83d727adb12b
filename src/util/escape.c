#include "util/escape.h"

#include <stdint.h>

size_t utf8_valid_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if (cp >= 0xd800 && cp <= 0xdfff)
        return 0;
    return len;
}

static uint32_t utf8_decode(const unsigned char *s, size_t len)
{
    static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = s[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        cp = (cp << 6) | (s[i] & 0x3f);
    return cp;
}

void esc_json(struct buf *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = 0;
    while (s[n])
        n++;
    buf_addc(out, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            buf_addc(out, '\\');
            buf_addc(out, (char)c);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': buf_adds(out, "\\n"); break;
            case '\t': buf_adds(out, "\\t"); break;
            case '\r': buf_adds(out, "\\r"); break;
            default: buf_printf(out, "\\u%04x", c); break;
            }
            i++;
        } else {
            size_t len = utf8_valid_len(s + i, n - i);
            if (len == 0) {
                buf_adds(out, "\\ufffd");
                i++;
            } else {
                buf_add(out, s + i, len);
                i += len;
            }
        }
    }
    buf_addc(out, '"');
}

void esc_term(struct buf *out, const char *str, int ascii)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = 0;
    while (s[n])
        n++;
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '\\') {
            buf_adds(out, "\\\\");
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': buf_adds(out, "\\n"); break;
            case '\t': buf_adds(out, "\\t"); break;
            case '\r': buf_adds(out, "\\r"); break;
            case 0x1b: buf_adds(out, "\\e"); break;
            default: buf_printf(out, "\\x%02x", c); break;
            }
            i++;
        } else {
            size_t len = utf8_valid_len(s + i, n - i);
            if (len == 0) {
                buf_printf(out, "\\x%02x", c);
                i++;
                continue;
            }
            uint32_t cp = utf8_decode(s + i, len);
            /* C1 controls (U+0080..U+009F) act as escape introducers on some terminals. */
            if ((cp >= 0x80 && cp <= 0x9f) || (ascii && cp >= 0x80))
                buf_printf(out, "\\u{%x}", (unsigned)cp);
            else
                buf_add(out, s + i, len);
            i += len;
        }
    }
}
