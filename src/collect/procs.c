#include "collect/procs.h"

#include <stdlib.h>
#include <string.h>

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
    return (x > y) - (x < y);
}

void procs_sort(struct proc_list *pl)
{
    if (pl->n > 1)
        qsort(pl->items, pl->n, sizeof(*pl->items), cmp_pid);
}

const struct proc *procs_find(const struct proc_list *pl, pid_t pid)
{
    struct proc key = {.pid = pid};
    if (!pl->n)
        return NULL;
    return bsearch(&key, pl->items, pl->n, sizeof(*pl->items), cmp_pid);
}

void procs_free(struct proc_list *pl)
{
    for (size_t i = 0; i < pl->n; i++) {
        free(pl->items[i].cmdline);
        free(pl->items[i].exe);
    }
    free(pl->items);
    memset(pl, 0, sizeof(*pl));
}

bool status_parse_nspid(const char *status, pid_t *nspid)
{
    const char *p = status;
    while (p && *p) {
        if (strncmp(p, "NSpid:", 6) == 0) {
            const char *s = p + 6;
            long last = -1;
            for (;;) {
                while (*s == ' ' || *s == '\t')
                    s++;
                if (*s < '0' || *s > '9')
                    break;
                long v = 0;
                while (*s >= '0' && *s <= '9' && v < 100000000)
                    v = v * 10 + (*s++ - '0');
                last = v;
            }
            if (last <= 0)
                return false;
            *nspid = (pid_t)last;
            return true;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return false;
}

bool parse_sigmask(const char *hex, uint64_t *mask)
{
    uint64_t v = 0;
    int digits = 0;
    for (const char *s = hex; s && *s; s++, digits++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return false;
        if (digits >= 16)
            return false;
        v = (v << 4) | (uint64_t)d;
    }
    if (!digits)
        return false;
    *mask = v;
    return true;
}
