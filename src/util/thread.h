/* Starting the program's background threads (the scan job, the dashboard's
 * poller) so that signals stay with the thread that started them. */
#ifndef SHMWATCH_THREAD_H
#define SHMWATCH_THREAD_H

#include <pthread.h>

/* pthread_create of fn(arg) with every signal blocked in the new thread:
 * SIGINT, SIGWINCH and the like reach the caller's thread, which watches
 * the clock and the terminal. Returns 0 or pthread_create's error number. */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
