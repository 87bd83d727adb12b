/* An event (model/events.h) in one line of plain words, as the dashboard
 * shows the latest ones: who ended and how, with the fill of its /dev/shm
 * for a Bus error, in the words of doc/guide.md. Pure. */
#ifndef SHMWATCH_EVLINE_H
#define SHMWATCH_EVLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/events.h"

/* The mount of st an exit's process wrote to: the fullest of its
 * container's mounts (the host's for a process of none), NULL when st
 * has none. */
const struct ev_mount *evline_mount(const struct ev_state *st, const struct event *e);

/* The container e happened in as the lines name it: its name, else its
 * id; one of a containerd namespace as NAMESPACE/NAME (container_label,
 * util/ctrref.h). A new string, NULL for none (the host's). Raw: the
 * caller escapes it. */
char *evline_where(const struct event *e);

/* e in one line into dst (raw: names as they are, the caller escapes
 * them); mt: the exit's mount (evline_mount, its figures as fresh as the
 * caller has them), or NULL. E.g. "worker 1234 of main 1200 died of
 * SIGBUS: /dev/shm 64.0 of 64.0 MiB full". */
const char *evline_text(const struct event *e, const struct ev_mount *mt, char *dst, size_t n);

/* Whether e is a death the user must see at once: a Bus error, an OOM
 * kill, a critical fill. */
bool evline_critical(const struct event *e);

#endif
