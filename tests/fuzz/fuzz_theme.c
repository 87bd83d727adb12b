/* theme_load_trusted on an arbitrary theme file. Every failure must be one line of
 * valid UTF-8 starting "file:line:column: ". */
#include "fuzz.h"

#include "config/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    struct theme t;
    char *err = NULL;
    int rc = theme_load_trusted(path, NULL, CONFIG_TRUST_ANY, &t, &err, NULL);
    if (rc != 0) {
        fuzz_check_located(err, path);
    } else {
        for (int i = 0; i < THEME_NROLES; i++) {
            short fg, bg;
            unsigned attrs;
            theme_pick(&t.role[i], 256, &fg, &bg, &attrs);
            theme_pick(&t.role[i], 8, &fg, &bg, &attrs);
        }
    }
    return 0;
}
