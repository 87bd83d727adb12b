/* The action log: every unlink and signal, with its time, target, owner,
 * bytes and result, appended as one tab-separated line to
 * $XDG_STATE_HOME/shmwatch/actions.log (or a file the user names). The last
 * lines written are also kept in memory for the dashboard. */
#ifndef SHMWATCH_ACTLOG_H
#define SHMWATCH_ACTLOG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ACTLOG_RECENT 64

struct actlog {
    int fd;            /* -1: not logging */
    char *path;
    int err;           /* why the file could not be opened, or why the last write
                        * failed (errno or SAFEFILE_*: safefile_strerror), else 0 */
    char *recent[ACTLOG_RECENT]; /* ring of the lines written, newest at head - 1 */
    size_t head, nrecent;
};

struct actlog_entry {
    time_t time;       /* 0: now */
    const char *action; /* "unlink", "signal TERM", ... */
    const char *target; /* raw bytes (a path, "pid 123 (comm)"): escaped when written */
    long long owner;   /* uid, -1 when unknown */
    uint64_t bytes;    /* bytes freed or concerned */
    const char *result; /* one word: removed, refused, failed, ended, sent... */
    const char *detail; /* a sentence, raw: escaped when written */
    const char *container; /* where it happened (clean/reap --pid, --all): a
                            * container's name or "pid N", raw; NULL: the
                            * watcher's own world */
};

/* $XDG_STATE_HOME/shmwatch/actions.log when XDG_STATE_HOME is absolute, else
 * HOME/.local/state/shmwatch/actions.log; NULL when neither is usable.
 * Either argument may be NULL. malloc'd. */
char *actlog_default_path(const char *xdg_state_home, const char *home);

/* Opens path for appending (NULL: the default path, its directories made
 * with mode 0700), as safefile_append does: never through a final symbolic
 * link, only the caller's regular file with one name. Returns 0, or -errno
 * (or -SAFEFILE_*) with the log disabled (fd -1) and the reason kept in
 * l->err (say it with safefile_strerror); l is usable (a no-op) either way. */
int actlog_open(struct actlog *l, const char *path);

/* One line: TIME ACTION TARGET owner=UID bytes=N RESULT DETAIL, tab-separated,
 * then container=NAME when the action was in a container, written with a
 * single append. Also kept in the in-memory ring. */
void actlog_write(struct actlog *l, const struct actlog_entry *e);

/* The i-th most recent line written (0 = newest), or NULL. */
const char *actlog_recent(const struct actlog *l, size_t i);

/* Formats an entry as the line actlog_write appends (no newline), into out. */
struct buf;
void actlog_format(struct buf *out, const struct actlog_entry *e);

void actlog_close(struct actlog *l);

#endif
