/* Times as RFC 3339 text in UTC: the one writer and the one reader of the
 * snapshots', the recordings' and why's times ("2026-12-05T03:12:07Z",
 * "2026-12-05T03:12:07.250Z"). No locale and no TZ: the same text on every
 * machine. */
#ifndef SHMWATCH_RFC3339_H
#define SHMWATCH_RFC3339_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Room for any time rfc3339_format writes, its NUL included. */
#define RFC3339_LEN 32

/* Unix seconds t into dst, to the nearest millisecond, the fraction
 * (".250") written only when it is not zero: a time read by rfc3339_parse
 * is written back as it was. Returns dst. */
const char *rfc3339_format(char *dst, size_t n, double t);

/* The first time rfc3339_parse reads (four-digit years):
 * 0000-01-01T00:00:00Z. */
#define RFC3339_FIRST (-62167219200.0)

/* An RFC 3339 time, fractions and offsets ("+02:00") allowed, as Unix
 * seconds into *t; false when s is not one. */
bool rfc3339_parse(const char *s, double *t);

/* The whole seconds of t, rounded down (before 1970 too), without libm:
 * the program links none (tests/integration/link.sh). */
static inline time_t whole_seconds(double t)
{
    time_t w = (time_t)t;
    return (double)w > t ? w - 1 : w;
}

#endif
