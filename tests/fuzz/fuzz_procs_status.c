/* procs_parse_status, status_parse_nspid and procs_status_uids:
 * /proc/PID/status. */
#include "fuzz.h"

#include "collect/procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct proc p;
    memset(&p, 0, sizeof(p));
    procs_parse_status(text, &p);
    pid_t nspid = 1;
    if (status_parse_nspid(text, &nspid) < 0 || nspid <= 0)
        abort();
    uid_t ruid, euid;
    (void)procs_status_uids(text, &ruid, &euid);
    free(text);
    return 0;
}
