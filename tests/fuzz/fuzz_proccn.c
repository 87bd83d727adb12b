/* proccn_parse: one datagram of the kernel's process connector (netlink
 * messages carrying connector messages), any bytes. */
#include "fuzz.h"

#include "collect/proccn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proc_exits x = {0};
    (void)proccn_parse(data, size, &x);
    proc_exits_free(&x);
    return 0;
}
