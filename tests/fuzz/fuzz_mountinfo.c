/* mountinfo_parse_line: one line of /proc/PID/mountinfo, parsed in place. */
#include "fuzz.h"

#include "collect/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = fuzz_cstr(data, size);
    struct mountinfo_entry e;
    if (mountinfo_parse_line(line, &e)) {
        /* Every string must point into the line and be terminated there. */
        const char *end = line + size;
        const char *f[] = {e.root, e.mountpoint, e.fstype};
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
            if (f[i] < line || f[i] + strlen(f[i]) > end)
                abort();
        (void)strlen(e.super_opts);
    }
    free(line);
    return 0;
}
