/* meminfo through procps-ng's libproc2. (The process table is read by
 * walk.c in the same pass over /proc as the holders.) */
#include <libproc2/meminfo.h>

#include "collect/procs.h"

int procs_meminfo(struct meminfo *mi)
{
    struct meminfo_info *info = NULL;
    int rc = procps_meminfo_new(&info);
    if (rc < 0)
        return rc;
    mi->total = (uint64_t)MEMINFO_GET(info, MEMINFO_MEM_TOTAL, ul_int) * 1024u;
    mi->shmem = (uint64_t)MEMINFO_GET(info, MEMINFO_MEM_SHARED, ul_int) * 1024u;
    procps_meminfo_unref(&info);
    return 0;
}
