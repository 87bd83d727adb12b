#include "util/clock.h"

#include <errno.h>
#include <time.h>

double clock_seconds(struct timespec ts)
{
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return clock_seconds(ts);
}

double clock_now(void)
{
    return seconds(CLOCK_MONOTONIC);
}

double clock_wall(void)
{
    return seconds(CLOCK_REALTIME);
}

void clock_nap(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void clock_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

struct timespec clock_deadline(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
