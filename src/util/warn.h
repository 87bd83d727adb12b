/* What a scan could not read, and why: collected, never fatal. */
#ifndef SHMWATCH_WARN_H
#define SHMWATCH_WARN_H

#include <stddef.h>
#include <sys/types.h>

/* How many of the refused processes a warning names by pid. */
enum { WARN_DENIED_PIDS = 3 };

struct warnings {
    char **msg;
    size_t n, cap;
    size_t vanished; /* processes that exited while being read */
    size_t denied;   /* /proc entries refused (EACCES/EPERM) */
    pid_t denied_pid[WARN_DENIED_PIDS]; /* the first refused processes, in their order */
};

void warn_init(struct warnings *w);
void warn_free(struct warnings *w);
/* Adds a message unless the same text is already there. */
void warn_add(struct warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Counts a /proc entry of process pid that failed with err: ENOENT/ESRCH
 * as vanished, EACCES/EPERM as denied (warn_denied); other errors are not
 * counted. */
void warn_count_errno(struct warnings *w, int err, pid_t pid);
/* Counts process pid as refused, remembered while fewer than
 * WARN_DENIED_PIDS are. */
void warn_denied(struct warnings *w, pid_t pid);

#endif
