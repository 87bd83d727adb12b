#include "collect/holders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"

/* ": pid 1", ": pids 1, 33 and 4 more": the refused processes w remembers
 * past the first denied_before, or "" when it remembers none of them. */
static const char *denied_pids(const struct warnings *w, size_t denied_before, char *dst,
                               size_t len)
{
    size_t known = w->denied < WARN_DENIED_PIDS ? w->denied : WARN_DENIED_PIDS;
    size_t n = w->denied - denied_before, used = 0;
    dst[0] = '\0';
    for (size_t i = denied_before; i < known && used < len; i++) {
        const char *sep = i == denied_before ? (n == 1 ? ": pid " : ": pids ")
                          : i + 1 == known && known == w->denied ? " and "
                                                                 : ", ";
        used += (size_t)snprintf(dst + used, len - used, "%s%d", sep, (int)w->denied_pid[i]);
    }
    if (used && used < len && w->denied > known)
        snprintf(dst + used, len - used, " and %zu more", w->denied - known);
    return dst;
}

void holders_warn_denied(struct warnings *w, size_t denied_before)
{
    char pids[96];
    size_t n = w->denied - denied_before;
    if (n == 0)
        return;
    const char *whose = n == 1 ? "process's" : "processes'";
    if (geteuid() != 0)
        warn_add(w, "%zu %s fds or maps could not be read (permission denied): "
                    "run as root to see other users' holders",
                 n, whose);
    else /* e.g. a process with capabilities root here lacks, or in a parent user namespace */
        warn_add(w, "%zu %s fds or maps could not be read, even as root (permission "
                    "denied: more privileged than this shmwatch)%s",
                 n, whose, denied_pids(w, denied_before, pids, sizeof(pids)));
}

bool holders_torch_loaded(const struct holder_list *hl, pid_t pid)
{
    return hl->ntorch && bsearch(&pid, hl->torch_pids, hl->ntorch, sizeof(pid_t), pid_cmp);
}

void holders_free(struct holder_list *hl)
{
    free(hl->items);
    strpool_free(&hl->paths);
    free(hl->torch_pids);
    memset(hl, 0, sizeof(*hl));
}

