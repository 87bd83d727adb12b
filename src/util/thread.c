#include "util/thread.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "util/xalloc.h"

struct start {
    const char *name;
    void *(*fn)(void *);
    void *arg;
};

/* The new thread's first steps: its name, set by the thread itself (no
 * /proc needed, and named before it does anything), then fn(arg). */
static void *named(void *arg)
{
    struct start s = *(struct start *)arg;
    free(arg);
    prctl(PR_SET_NAME, s.name);
    return s.fn(s.arg);
}

int thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
    struct start *s = xmalloc(sizeof(*s));
    *s = (struct start){name, fn, arg};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, named, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        free(s);
    return rc;
}
