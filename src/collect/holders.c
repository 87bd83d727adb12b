#include "collect/holders.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"

void holders_warn_denied(struct warnings *w, size_t denied_before)
{
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
                    "denied: more privileged than this shmwatch)",
                 n, whose);
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

