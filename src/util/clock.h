/* Monotonic and wall-clock time in seconds, sleeping for a while, and
 * waiting on a condition variable until a time of the monotonic clock. */
#ifndef SHMWATCH_CLOCK_H
#define SHMWATCH_CLOCK_H

#include <pthread.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC: for intervals and deadlines, never dates. */
double clock_now(void);
/* Unix seconds on CLOCK_REALTIME: for dates. */
double clock_wall(void);
/* A time of either clock in seconds. */
double clock_seconds(struct timespec ts);

/* Sleeps s seconds, resuming after signals that interrupt it. */
void clock_nap(double s);

/* A condition variable whose timed waits count on CLOCK_MONOTONIC, and the
 * deadline such a wait takes for a clock_now() time t. */
void clock_cond_init(pthread_cond_t *c);
struct timespec clock_deadline(double t);

#endif
