/* procs_parse_stat and procid_parse_stat: /proc/PID/stat, whose comm may
 * hold spaces, parentheses and any byte. */
#include "fuzz.h"

#include "act/procid.h"
#include "collect/procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct proc p;
    memset(&p, 0, sizeof(p));
    if (procs_parse_stat(text, &p) && strnlen(p.comm, sizeof(p.comm)) == sizeof(p.comm))
        abort(); /* comm must be terminated */
    struct procid id;
    (void)procid_parse_stat(text, &id);
    free(text);
    return 0;
}
