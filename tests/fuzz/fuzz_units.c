/* parse_size, parse_duration and parse_int (command-line flags and config
 * values), and the formatters on what they give. */
#include "fuzz.h"

#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    char out[64];
    uint64_t bytes;
    if (parse_size(s, &bytes))
        fmt_size(out, sizeof(out), bytes);
    double secs;
    if (parse_duration(s, &secs))
        fmt_duration(out, sizeof(out), secs);
    long long v;
    if (parse_int(s, 0, 100, &v) && (v < 0 || v > 100))
        abort();
    (void)parse_int(s, INT64_MIN, INT64_MAX, &v);
    free(s);
    return 0;
}
