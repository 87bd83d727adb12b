/* The one loop of everything that watches over time: snapshots at each
 * --interval (each scan in a thread watched for stalls), and between them
 * the events (src/model/events.h) from the kernel's process connector,
 * inotify on the shm mounts and the cgroups' OOM kill counts, polled with
 * a deadline. Streams (--json --interval) print the events between their
 * snapshot lines, the exporter (--prometheus-file) counts deaths, the
 * recorder (shmwatch record) writes both to a store. */
#ifndef SHMWATCH_WATCH_H
#define SHMWATCH_WATCH_H

#include <signal.h>
#include <stdbool.h>

#include "cli/options.h"
#include "config/config.h"

struct store;

/* Set by SIGTERM and SIGINT, and SIGHUP when hangup (watch_catch_signals):
 * the loop finishes the record it is writing and returns. The recorder
 * takes SIGHUP too: a terminal or session that closes ends it as SIGTERM
 * does, its store closed with a stop record. */
extern volatile sig_atomic_t watch_stop_requested;
void watch_catch_signals(bool hangup);

/* Runs the snapshots of o (MODE_ONCE, MODE_JSON, MODE_PROMETHEUS; a stream
 * with --interval) or, with store, the recorder (o->interval, o->count 0,
 * o->pid, o->all). Returns the exit status. */
int watch_run(const struct options *o, const struct config *cfg, struct store *store);

#endif
