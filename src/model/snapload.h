/* A JSON snapshot (schema 1, as `shmwatch --json` writes it and a
 * recording keeps it) read back into the struct scan and struct model that
 * the reports and the dashboard read through the model's accessors, so that
 * replay shows a recorded moment on the same screens as a live scan.
 *
 * The model is not rebuilt from facts: every figure the snapshot carries
 * (states, roles, groups, each mount's figures, the budgets, the totals) is
 * taken as it was written, and the scan holds what the accessors give out
 * (mounts, processes, the node's containers, cgroups, SysV segments,
 * warnings, the scan's account of itself). Writing the model with
 * report_json gives the snapshot back. What a snapshot does not carry is
 * zero (a process's exe, namespaces and signals; a budget's peaks; the
 * directories at each mount's top). Pure: no I/O. */
#ifndef SHMWATCH_SNAPLOAD_H
#define SHMWATCH_SNAPLOAD_H

#include <stddef.h>

#include "collect/scan.h"
#include "model/model.h"
#include "util/jsondoc.h"

/* Fills s and m (m points into s) from doc, a parsed snapshot object.
 * 0, or -EINVAL with a one-line reason in err when doc is not a schema-1
 * snapshot; s and m are then empty but valid (scan_free, model_free). */
int snapload_build(const struct jd *doc, struct scan *s, struct model *m, char *err, size_t n);

#endif
