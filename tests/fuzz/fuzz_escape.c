/* utf8_valid_len, esc_json and esc_term on arbitrary bytes, with the
 * promises they make checked: the JSON escape is valid UTF-8 with no control
 * bytes, the terminal escape holds no control bytes (nor C1 controls), and
 * with ascii set no byte above 0x7f. */
#include "fuzz.h"

#include <stdbool.h>

#include "util/buf.h"
#include "util/escape.h"

static void check_utf8(const struct buf *b, bool no_c1, bool ascii)
{
    const unsigned char *s = (const unsigned char *)b->data;
    for (size_t i = 0; i < b->len;) {
        if (s[i] < 0x20 || s[i] == 0x7f || (ascii && s[i] >= 0x80))
            abort();
        size_t len = utf8_valid_len(s + i, b->len - i);
        if (len == 0)
            abort();
        if (no_c1 && len == 2 && s[i] == 0xc2 && s[i + 1] <= 0x9f)
            abort(); /* a C1 control */
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: utf8_valid_len must not read past n. */
    uint8_t *exact = malloc(size ? size : 1);
    memcpy(exact, data, size);
    size_t len = utf8_valid_len(exact, size);
    if (len > size || len > 4)
        abort();
    free(exact);

    char *s = fuzz_cstr(data, size);
    struct buf b;
    buf_init(&b);
    esc_json(&b, s);
    if (b.len < 2 || b.data[0] != '"' || b.data[b.len - 1] != '"')
        abort();
    check_utf8(&b, false, false); /* JSON may carry C1 controls as they are */
    for (int ascii = 0; ascii < 2; ascii++) {
        buf_reset(&b);
        esc_term(&b, s, ascii);
        if (b.len)
            check_utf8(&b, true, ascii);
    }
    buf_free(&b);
    free(s);
    return 0;
}
