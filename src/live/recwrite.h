/* The recorder's records (doc/recording.md), one writer for `shmwatch
 * record` and the dashboard's --record: the header's members and a record
 * put into the store with what a full disk asks for (a snapshot's record
 * is report_json_record's). */
#ifndef SHMWATCH_RECWRITE_H
#define SHMWATCH_RECWRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

struct store;

/* The header record's members after "recording" and "time" (a new string):
 * hostname, interval_s, watch ("host", "all" or "pid N"), version. */
char *recwrite_header(double interval_s, long long pid, bool all);

/* Puts one record of time t (Unix seconds) into st. A write the store
 * could not make, or made after dropping its oldest file on a full disk,
 * leaves its sentence in msg (else msg is ""): the caller says it; the
 * latter is recorded too, as a disk_full record. */
void recwrite_put(struct store *st, double t, const struct buf *b, char *msg, size_t n);

#endif
