/* RFC 3339 times in UTC, written and read (rfc3339.h). */
#include "util/rfc3339.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *rfc3339_format(char *dst, size_t n, double t)
{
    time_t whole = whole_seconds(t);
    long ms = (long)((t - (double)whole) * 1000.0 + 0.5);
    if (ms >= 1000) {
        whole++;
        ms = 0;
    }
    struct tm tm;
    gmtime_r(&whole, &tm);
    char date[RFC3339_LEN];
    /* RFC 3339 wants four digits of year; %Y alone writes the year 99 as "99". */
    strftime(date, sizeof(date), "%04Y-%m-%dT%H:%M:%S", &tm);
    if (ms > 0)
        snprintf(dst, n, "%s.%03ldZ", date, ms);
    else
        snprintf(dst, n, "%sZ", date);
    return dst;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (timegm's work
 * without its locale or TZ). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at s as an int; false when one is not a digit. */
static bool digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

bool rfc3339_parse(const char *s, double *t)
{
    int y, mo, d, h, mi, sec;
    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || !strchr("Tt ", s[10]) ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return false;
    static const int month_days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (mo < 1 || mo > 12 || d < 1 || d > month_days[mo - 1] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || sec > 60)
        return false; /* a day the month has not (2026-02-31) is no date, not March 3 */
    const char *p = s + 19;
    double frac = 0, scale = 0.1;
    if (*p == '.') {
        if (p[1] < '0' || p[1] > '9')
            return false;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int off = 0; /* Z */
    if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
    } else if (!((*p == 'Z' || *p == 'z') && !p[1])) {
        return false;
    }
    int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    *t = (double)(days * 86400 + h * 3600 + mi * 60 + sec - off) + frac;
    return true;
}
