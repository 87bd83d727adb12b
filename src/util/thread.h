/* Starting the program's background threads (the scan job, the dashboard's
 * poller) so that signals stay with the thread that started them, each
 * under a name of its own. */
#ifndef SHMWATCH_THREAD_H
#define SHMWATCH_THREAD_H

#include <pthread.h>

/* pthread_create of fn(arg) with every signal blocked in the new thread:
 * SIGINT, SIGWINCH and the like reach the caller's thread, which watches
 * the clock and the terminal. The thread takes name as its comm (at most
 * 15 bytes: what /proc/PID/task/TID/comm, top -H and htop show; the
 * process's own comm stays the main thread's); name must outlive the
 * thread's start (a literal). Returns 0 or pthread_create's error number. */
int thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

#endif
