#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool parse_int(const char *s, long long min, long long max, long long *out)
{
    /* Digits, after a minus sign for a negative number: strtoll would also
     * take leading space and a plus sign, which no size or duration takes. */
    const char *digits = s && *s == '-' ? s + 1 : s;
    if (!digits || !isdigit((unsigned char)*digits))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The end of the plain decimal number that s starts with: digits with an
 * optional fraction (2, 0.5). s itself when it starts with no digit, NULL
 * when a point follows the digits without a digit after it (2.). */
static const char *decimal_end(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return s;
    const char *p = s;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        if (!isdigit((unsigned char)p[1]))
            return NULL;
        for (p++; isdigit((unsigned char)*p);)
            p++;
    }
    return p;
}

/* A plain decimal number (decimal_end), and in *rest what follows it: no
 * sign, no hexadecimal (0x10) and no exponent (1e1), which strtod would take
 * and no document names. */
static bool parse_number(const char *s, double *num, const char **rest)
{
    const char *p = decimal_end(s);
    if (!p || p == s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* the digits scanned, and no more (not 0x10, 1e1) */
    if (errno || end != p || !isfinite(v) || v < 0)
        return false;
    *num = v;
    *rest = end;
    return true;
}

bool units_not_plain(const char *s)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    const char *p = decimal_end(s);
    char *end;
    errno = 0;
    (void)strtod(s, &end);
    return !p || end > p;
}

/* The bytes of size s ("1.5k": 1536), as large as its number and unit say;
 * false on junk and negatives. */
static bool size_bytes(const char *s, double *bytes)
{
    double v;
    const char *u;
    if (!parse_number(s, &v, &u))
        return false;
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1.0},         {"b", 1.0},
        {"k", 1024.0},     {"kb", 1024.0},     {"ki", 1024.0},     {"kib", 1024.0},
        {"m", 1048576.0},  {"mb", 1048576.0},  {"mi", 1048576.0},  {"mib", 1048576.0},
        {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gi", 1073741824.0}, {"gib", 1073741824.0},
        {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"ti", 1099511627776.0},
        {"tib", 1099511627776.0},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(u, units[i].suffix) == 0) {
            *bytes = v * units[i].mult;
            return true;
        }
    }
    return false;
}

/* 2^64 bytes: the sizes a uint64_t holds are below it. */
#define SIZE_LIMIT 18446744073709551616.0

bool parse_size(const char *s, uint64_t *out)
{
    double bytes;
    if (!size_bytes(s, &bytes) || bytes >= SIZE_LIMIT)
        return false;
    *out = (uint64_t)(bytes + 0.5);
    return true;
}

bool units_too_large(const char *s)
{
    double bytes;
    return size_bytes(s, &bytes) && bytes >= SIZE_LIMIT;
}

bool parse_duration(const char *s, double *out_seconds)
{
    double v;
    const char *u;
    if (!parse_number(s, &v, &u))
        return false;
    double mult;
    if (*u == '\0' || strcmp(u, "s") == 0)
        mult = 1;
    else if (strcmp(u, "ms") == 0)
        mult = 0.001;
    else if (strcmp(u, "m") == 0 || strcmp(u, "min") == 0)
        mult = 60;
    else if (strcmp(u, "h") == 0)
        mult = 3600;
    else if (strcmp(u, "d") == 0)
        mult = 86400;
    else
        return false;
    if (!isfinite(v * mult)) /* "1e308d" */
        return false;
    *out_seconds = v * mult;
    return true;
}

const char *fmt_size(char *dst, size_t n, uint64_t bytes)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(dst, n, "%llu B", (unsigned long long)bytes);
        return dst;
    }
    double v = (double)bytes;
    size_t i = 0;
    while (v >= 1024.0 && i + 1 < sizeof(names) / sizeof(names[0])) {
        v /= 1024.0;
        i++;
    }
    snprintf(dst, n, v >= 100.0 ? "%.0f %s" : "%.1f %s", v, names[i]);
    return dst;
}

const char *fmt_size_of(char *dst, size_t n, uint64_t part, uint64_t whole)
{
    char a[32], b[32];
    fmt_size(a, sizeof(a), part);
    fmt_size(b, sizeof(b), whole);
    const char *ua = strchr(a, ' '), *ub = strchr(b, ' ');
    if (ua && ub && strcmp(ua, ub) == 0 && strcmp(ua, " B") != 0)
        snprintf(dst, n, "%.*s of %s", (int)(ua - a), a, b);
    else
        snprintf(dst, n, "%s of %s", a, b);
    return dst;
}

const char *fmt_duration(char *dst, size_t n, double seconds)
{
    if (!(seconds >= 0))
        seconds = 0;
    /* A value beyond 64 bits (a --min-age of 1e50s) has no integer: saturate. */
    unsigned long long s =
        seconds >= 18446744073709551616.0 ? ULLONG_MAX : (unsigned long long)seconds;
    if (s < 60)
        snprintf(dst, n, "%llus", s);
    else if (s < 3600)
        snprintf(dst, n, "%llum%02llus", s / 60, s % 60);
    else if (s < 86400)
        snprintf(dst, n, "%lluh%02llum", s / 3600, s % 3600 / 60);
    else
        snprintf(dst, n, "%llud%lluh", s / 86400, s % 86400 / 3600);
    return dst;
}
