/* An event line (doc/recording.md, "Events"), as a stream carries it and a
 * recording keeps it, read back into the struct event that wrote it
 * (report/eventjson.c), so that replay tells a recorded event with the
 * same words (model/evline.h) as the live dashboard. The one reader of
 * event lines into events. Pure: no I/O. */
#ifndef SHMWATCH_EVLOAD_H
#define SHMWATCH_EVLOAD_H

#include <stddef.h>

#include "model/events.h"
#include "util/jsondoc.h"

/* Fills e from doc, a parsed event object, at time t (Unix seconds: the
 * caller has its record's time, as the store's index read it). A member
 * missing, null or of another type is the field's "not known" (0, NULL).
 * 0; or -EINVAL with a one-line reason in err when doc is not an object of
 * a kind this version knows (e is then empty). Strings are e's own:
 * event_clear. Written again with report_event_json it is the line again,
 * for a line report_event_json wrote. */
int evload_build(const struct jd *doc, double t, struct event *e, char *err, size_t n);

#endif
