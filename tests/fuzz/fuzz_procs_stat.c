/* procstat_parse, the one parser of /proc/PID/stat (whose comm may hold
 * spaces, parentheses and any byte), and its two callers' copies. */
#include "fuzz.h"

#include "act/procid.h"
#include "collect/procs.h"
#include "util/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct procstat st;
    if (procstat_parse(text, &st) && strnlen(st.comm, sizeof(st.comm)) == sizeof(st.comm))
        abort();
    struct proc p;
    memset(&p, 0, sizeof(p));
    if (procs_parse_stat(text, &p) && strnlen(p.comm, sizeof(p.comm)) == sizeof(p.comm))
        abort(); /* comm must be terminated */
    struct procid id;
    (void)procid_parse_stat(text, &id);
    free(text);
    return 0;
}
