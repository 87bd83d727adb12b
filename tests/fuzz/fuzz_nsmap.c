/* nsmap_parse_mountinfo: a whole /proc/PID/mountinfo text, read for the
 * watched devices that are not hidden under another mount. The devices are
 * the first bytes' numbers, so that matches happen. */
#include "fuzz.h"

#include <sys/sysmacros.h>

#include "collect/nsmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    dev_t devs[2] = {makedev(0, data[0]), makedev(data[1] & 7, data[1] >> 3)};
    unsigned char sees[2] = {0, 0};
    char *text = fuzz_cstr(data + 2, size - 2);
    nsmap_parse_mountinfo(text, devs, 2, sees);
    if (sees[0] > 1 || sees[1] > 1)
        abort();
    free(text);
    return 0;
}
