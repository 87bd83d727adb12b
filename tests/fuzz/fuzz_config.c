/* config_load on an arbitrary file: malformed YAML, wrong types, bad values.
 * Every failure must be one line starting "file:line:column: ". */
#include "fuzz.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    struct config cfg;
    config_defaults(&cfg);
    char *err = NULL;
    int rc = config_load(path, &cfg, &err);
    if (rc != 0) {
        fuzz_check_one_line(err);
        size_t n = strlen(path);
        unsigned line, col;
        char c;
        if (strncmp(err, path, n) != 0 || sscanf(err + n, ":%u:%u%c", &line, &col, &c) != 3 ||
            c != ':' || line == 0 || col == 0) {
            fprintf(stderr, "error without file:line:column: %s\n", err);
            abort();
        }
        free(err);
    } else if (config_check(&cfg, &err) != 0) {
        fuzz_check_one_line(err);
        free(err);
    }
    config_free(&cfg);
    return 0;
}
