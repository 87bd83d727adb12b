/* A point in a recording as a user names it (`shmwatch replay --at` and the
 * replay's go-to prompt): an RFC 3339 time ("2026-12-05T03:12:07Z",
 * fractions and offsets allowed), a time of today in local time ("03:12"
 * or "03:12:07"), or a duration before now ("-10m", "-2h", "-90": seconds;
 * the units of parse_duration). No I/O. */
#ifndef SHMWATCH_WHEN_H
#define SHMWATCH_WHEN_H

#include <stdbool.h>

/* s as Unix seconds into *t, now being the Unix time of "now"; false when
 * it is none of the forms above. */
bool when_parse(const char *s, double now, double *t);

#endif
