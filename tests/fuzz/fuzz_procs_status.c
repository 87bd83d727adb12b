/* procs_parse_status and status_parse_nspid: /proc/PID/status. */
#include "fuzz.h"

#include "collect/procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct proc p;
    memset(&p, 0, sizeof(p));
    procs_parse_status(text, &p);
    pid_t nspid;
    if (status_parse_nspid(text, &nspid) && nspid <= 0)
        abort();
    free(text);
    return 0;
}
