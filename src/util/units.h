/* Sizes and durations, parsed from users and printed for them. */
#ifndef SHMWATCH_UNITS_H
#define SHMWATCH_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "64m", "64MiB", "2G", "1.5g", "536870912", "512k" (powers of 1024, as Docker
 * and Kubernetes' Mi/Gi read them). Returns false on junk, negatives, overflow. */
bool parse_size(const char *s, uint64_t *out);

/* "10m", "30s", "2h", "1d", "90" (seconds). */
bool parse_duration(const char *s, double *out_seconds);

/* Whether s, refused by parse_size or parse_duration, starts with a number
 * in a form they never take though strtod does: an exponent (1e1), a
 * hexadecimal number (0x10), a point without a digit after it (2.). Then
 * the form is the fault, not the value or its unit. */
bool units_not_plain(const char *s);

/* Whether s, refused by parse_size, is a size written as it takes one but
 * of 2^64 bytes (16777216t) or more: the value is the fault, not its form. */
bool units_too_large(const char *s);

/* Strict decimal integer in [min, max]: digits, a minus sign before them
 * for a negative number; no plus sign, no space. */
bool parse_int(const char *s, long long min, long long max, long long *out);

/* "1.5 GiB", "64.0 MiB", "512 B" into dst. */
const char *fmt_size(char *dst, size_t n, uint64_t bytes);

/* A part of a whole: "64.0 of 64.0 MiB" when both sizes have one unit
 * above bytes, else "900 KiB of 64.0 MiB", "512 B of 900 B". */
const char *fmt_size_of(char *dst, size_t n, uint64_t part, uint64_t whole);

/* "3s", "4m05s", "2h10m", "3d4h" into dst. */
const char *fmt_duration(char *dst, size_t n, double seconds);

#endif
