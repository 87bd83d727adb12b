/* procstat_parse, the one parser of /proc/PID/stat (whose comm may hold
 * spaces, parentheses and any byte), and the process table's use of it. */
#include "fuzz.h"

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
    free(text);
    return 0;
}
