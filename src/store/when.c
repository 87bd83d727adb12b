/* The times replay takes (store/when.h). */
#include "store/when.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/rfc3339.h"
#include "util/units.h"

/* "HH:MM" or "HH:MM:SS" of the local day of now. */
static bool clock_today(const char *s, double now, double *t)
{
    size_t len = strlen(s);
    if (len != 5 && len != 8)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((i == 2 || i == 5) ? s[i] != ':' : (s[i] < '0' || s[i] > '9'))
            return false;
    /* Two digits each, as checked: "HH:MM" leaves sec 0. */
    int h = 0, m = 0, sec = 0;
    sscanf(s, "%2d:%2d:%2d", &h, &m, &sec);
    if (h > 23 || m > 59 || sec > 59)
        return false;
    time_t day = (time_t)now;
    struct tm tm;
    localtime_r(&day, &tm);
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    tm.tm_isdst = -1; /* as the day has it */
    time_t when = mktime(&tm);
    if (when == (time_t)-1)
        return false;
    *t = (double)when;
    return true;
}

bool when_parse(const char *s, double now, double *t)
{
    if (!s || !*s)
        return false;
    if (s[0] == '-') {
        /* No record is older than year 0000: a duration back past it is
         * none a recording can hold, and too far back for a time_t. */
        double ago;
        if (!parse_duration(s + 1, &ago) || ago < 0 || now - ago < RFC3339_FIRST)
            return false;
        *t = now - ago;
        return true;
    }
    if (strlen(s) > 10 && s[4] == '-')
        return rfc3339_parse(s, t);
    return clock_today(s, now, t);
}
