/* What the action keys share (actions.c: unlink; actions_proc.c: signals
 * and reap): the action log, progress in the status line and the list of
 * results. */
#ifndef SHMWATCH_UI_ACTIONS_PRIV_H
#define SHMWATCH_UI_ACTIONS_PRIV_H

#include <stddef.h>

struct ui;
struct actlog;

/* The action log, opened on first use: the log_file setting (--log), else
 * $XDG_STATE_HOME/shmwatch/actions.log. Never NULL (a disabled log is a
 * no-op; actions_log_note says why). */
struct actlog *actions_log(struct ui *u);
/* " (not logged: why)" when the log could not be opened, or when a write
 * failed since the last call (an action's summary calls it once), else "". */
const char *actions_log_note(struct ui *u);

/* The theme role of an action's summary, as htop-like tools colour their
 * messages: error when something the user asked for was tried and failed
 * (an unlink or a signal returned an error, a process survived SIGKILL) or
 * its log line could not be written (log_note not empty); warning when
 * something was refused by a safety check and left as it was; else status. */
int actions_outcome_role(size_t refused, size_t failed, const char *log_note);

/* A status-line message drawn at once (during actions that take time). */
void actions_progress(struct ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Lines of safe text, malloc'd. */
struct actions_lines {
    char **v;
    size_t n, cap;
};
void actions_line(struct actions_lines *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void actions_lines_free(struct actions_lines *l);
/* Shows the lines under a title until Enter, Esc or q. */
void actions_show(struct ui *u, const char *title, const struct actions_lines *l);

/* An untrusted name (segment, comm, command line) made safe, in a rotating
 * buffer: valid until 8 more calls. */
const char *actions_safe(const char *s);

#endif
