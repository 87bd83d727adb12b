/* mountinfo_parse and nsmap_sees_of: a whole /proc/PID/mountinfo text,
 * parsed and read for the watched devices that are not hidden under
 * another mount. The devices are
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
    struct mountinfo mi;
    mountinfo_parse(fuzz_cstr(data + 2, size - 2), &mi);
    nsmap_sees_of(&mi, devs, 2, sees);
    for (int k = 0; k < 2; k++)
        if ((sees[k] & ~(NSMAP_SHOWS | NSMAP_AT_SHM)) || sees[k] == NSMAP_AT_SHM)
            abort(); /* only the two bits, and at /dev/shm only where shown */
    for (size_t i = 0; i < mi.n; i++)
        if (mountinfo_find(&mi, mi.items[i].mountpoint) == NULL && !mountinfo_hidden(&mi, i))
            abort(); /* a mount point with an entry not hidden is found */
    mountinfo_free(&mi);
    return 0;
}
