/* The answer of `shmwatch why` (model/why.h) for people and for programs:
 * a paragraph per abnormal end, and the JSON document doc/shmwatch.1
 * describes under "WHY". Names from the recording (processes, containers,
 * mounts) may hold any byte: they are escaped here. */
#ifndef SHMWATCH_WHYREPORT_H
#define SHMWATCH_WHYREPORT_H

#include <stddef.h>

#include "model/why.h"
#include "util/buf.h"

struct whyreport_in {
    const struct why_result *r;
    double from, to;          /* the window, Unix seconds */
    char *const *warnings;    /* what the store's reader found damaged (JSON only:
                               * the caller says them on stderr) */
    size_t nwarnings;
};

void whyreport_text(struct buf *out, const struct whyreport_in *in);
/* One JSON object and a newline. */
void whyreport_json(struct buf *out, const struct whyreport_in *in);

#endif
