/* A minimal streaming JSON writer: keeps track of commas so that callers
 * only say what comes next. Output is compact, on one line. */
#ifndef SHMWATCH_JSONW_H
#define SHMWATCH_JSONW_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"

#define JSONW_MAX_DEPTH 16

struct jsonw {
    struct buf *out;
    int depth;
    bool first[JSONW_MAX_DEPTH];
};

void jw_init(struct jsonw *w, struct buf *out);
/* key may be NULL inside arrays (and at the top level); keys are written as
 * they are, so they must be plain ASCII names (values are escaped). */
void jw_obj(struct jsonw *w, const char *key);
void jw_obj_end(struct jsonw *w);
void jw_arr(struct jsonw *w, const char *key);
void jw_arr_end(struct jsonw *w);
void jw_str(struct jsonw *w, const char *key, const char *s);
void jw_u64(struct jsonw *w, const char *key, uint64_t v);
void jw_i64(struct jsonw *w, const char *key, int64_t v);
void jw_dbl(struct jsonw *w, const char *key, double v);
void jw_bool(struct jsonw *w, const char *key, bool v);
void jw_null(struct jsonw *w, const char *key);

#endif
