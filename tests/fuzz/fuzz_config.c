/* config_load_trusted on an arbitrary file: malformed YAML, wrong types, bad values.
 * Every failure must be one line of valid UTF-8 starting "file:line:column: ". */
#include "fuzz.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    struct config cfg;
    config_defaults(&cfg);
    char *err = NULL;
    int rc = config_load_trusted(path, CONFIG_TRUST_ANY, &cfg, &err, NULL);
    if (rc != 0) {
        fuzz_check_located(err, path);
    } else if (config_check(&cfg, &err) != 0) {
        fuzz_check_one_line(err);
        free(err);
    }
    config_free(&cfg);
    return 0;
}
