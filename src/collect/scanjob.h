/* A scan that cannot hang its caller. Whatever the scan reads can in
 * principle wait forever (a process's fd on a FUSE or network file system
 * whose daemon or server does not answer is the known case, and the walk
 * never waits on it; see procfiles.h), so the one-shot and stream modes run
 * scan_run in a thread of its own and wait for it with a deadline, and the
 * dashboard's poller lets its drawing thread look at the same beacon
 * (beacon.h). */
#ifndef SHMWATCH_SCANJOB_H
#define SHMWATCH_SCANJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct scan;
struct scan_opts;

#include "collect/beacon.h"

/* How long a scan may take before it is said to be stalled: a few scan
 * intervals, never less than SCAN_STALL_MIN_S (a scan of a large node
 * under load takes seconds). */
#define SCAN_STALL_MIN_S 10.0
#define SCAN_STALL_INTERVALS 3.0
double scan_stall_limit(double interval_s);

/* Test hook: a positive limit, set, is scan_stall_limit's answer for every
 * interval, so that the tests of the watchdog wait seconds, not tens of
 * seconds, for each stall (tests/helpers/shmwatch_hooked.c). 0, the
 * default, in the program; set before any scan starts. */
void scan_set_test_stall_limit(double limit_s);

/* What a stalled scan waits on, for people: "reading fd 4 of pid 123
 * (python3)" (the comm read now, escaped), or the stage alone. pid and fd
 * as the beacon has them (also returned in *pid and *fd, 0 and -1 when
 * unknown); the comm is read below sys->proc. */
struct sysroot;
void scan_beacon_describe(const struct scan_beacon *b, const struct sysroot *sys, char *out,
                          size_t n, pid_t *pid, int *fd);

struct scan_job;

/* Starts scan_run(o) in a thread of its own (o is copied; its strings must
 * outlive the job; o->beacon is replaced by the job's own). Returns NULL with
 * errno set when no thread can be started. */
struct scan_job *scan_job_start(const struct scan_opts *o);
/* Waits until the scan has ended or CLOCK_MONOTONIC (clock_now) reaches
 * until; true when it has ended. */
bool scan_job_wait(struct scan_job *j, double until);
/* When the scan started (clock_now), and its beacon. */
double scan_job_started(const struct scan_job *j);
const struct scan_beacon *scan_job_beacon(const struct scan_job *j);
/* After scan_job_wait returned true: moves the scan into *out, frees the job
 * and returns scan_run's status. */
int scan_job_finish(struct scan_job *j, struct scan *out);
/* Gives up on a scan that has not ended: its thread frees everything when
 * (if ever) it ends. The process may exit meanwhile, but with _exit: a
 * leak checker's exit handler would wait for the stuck thread. */
void scan_job_abandon(struct scan_job *j);

#endif
