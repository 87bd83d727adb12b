#include "util/warn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xalloc.h"

void warn_init(struct warnings *w)
{
    memset(w, 0, sizeof(*w));
}

void warn_free(struct warnings *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->msg[i]);
    free(w->msg);
    warn_init(w);
}

void warn_add(struct warnings *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < w->n; i++) {
        if (strcmp(w->msg[i], s) == 0) {
            free(s);
            return;
        }
    }
    *VEC_PUSH(w->msg, w->n, w->cap) = s;
}

void warn_count_errno(struct warnings *w, int err, pid_t pid)
{
    if (err == ENOENT || err == ESRCH)
        w->vanished++;
    else if (err == EACCES || err == EPERM)
        warn_denied(w, pid);
}

void warn_denied(struct warnings *w, pid_t pid)
{
    if (w->denied < WARN_DENIED_PIDS)
        w->denied_pid[w->denied] = pid;
    w->denied++;
}
