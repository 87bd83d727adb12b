/* Writers of a model for people and programs: JSON (schema 1, doc/shmwatch.1
 * "JSON SNAPSHOT"), a plain-text report and the Prometheus text format. */
#ifndef SHMWATCH_REPORT_H
#define SHMWATCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "model/events.h"
#include "model/model.h"
#include "util/buf.h"

#define SNAPSHOT_SCHEMA 1

/* One JSON object on one line, no trailing newline. */
void report_json(struct buf *out, const struct model *m);
/* The same, written to sink as it is made (see struct jsonw): what is left in
 * out at the end is the rest of the line. */
void report_json_stream(struct buf *out, const struct model *m, FILE *sink);
/* A recorded snapshot (doc/recording.md): the same object with its time
 * to the millisecond and "reason" ("interval" or "event") added. */
void report_json_record(struct buf *out, const struct model *m, const char *reason);

/* ascii: no UTF-8 bar characters or names beyond ASCII. */
void report_text(struct buf *out, const struct model *m, bool ascii);

/* The Prometheus text exposition format. */
void report_prometheus(struct buf *out, const struct model *m);
/* What stands in the metrics while a scan has not ended (stalled: the
 * model of scan_stalled's stand-in): no figure of the last scan (they would pass for current),
 * only when that scan's data was collected (last_scan_time, wall clock
 * seconds; none when 0) and how long the current one has been running,
 * with a comment saying what it is reading. */
void report_prometheus_stalled(struct buf *out, const struct model *stalled, double last_scan_time);

/* One event line (doc/recording.md, "Events"), no trailing newline. */
void report_event_json(struct buf *out, const struct event *e);

/* The deaths seen while a long-running exporter runs
 * (shmwatch_process_deaths_total, by signal, role and container). */
void report_prometheus_deaths(struct buf *out, const struct death_counts *c);

/* Mount i's id ("MAJ:MIN" of its device, as the scan's node facts say),
 * written into buf when the scan has none; NULL for no such mount. */
const char *report_mount_id(const struct model *m, size_t i, char *buf, size_t n);

/* plan --observe's "observed" object (doc/shmwatch.1): the batch figures
 * model/loader.c found for a DataLoader group, under the names plan gives
 * them; the snapshot's groups carry the same figures. */
struct jsonw;
void report_json_observed(struct jsonw *w, const struct group *g);

/* Percentage used of a mount, 0 when its size is unknown. */
double mount_used_pct(const struct shm_mount *mt);

#endif
