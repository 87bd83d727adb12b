#include "collect/procmap.h"

static _Atomic int forced = PROCMAP_WAY_QUERY; /* read by the scan's thread */

void procmap_force(enum procmap_way way)
{
    forced = (int)way;
}

enum procmap_way procmap_way(void)
{
    return (enum procmap_way)forced;
}
