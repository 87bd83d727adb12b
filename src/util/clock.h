/* Monotonic time in seconds, and sleeping for a while. */
#ifndef SHMWATCH_CLOCK_H
#define SHMWATCH_CLOCK_H

/* Seconds on CLOCK_MONOTONIC: for intervals and deadlines, never dates. */
double clock_now(void);

/* Sleeps s seconds, resuming after signals that interrupt it. */
void clock_nap(double s);

#endif
