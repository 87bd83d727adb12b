#include "collect/scanjob.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/scan.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/thread.h"
#include "util/xalloc.h"

static double test_stall_limit;

void scan_set_test_stall_limit(double limit_s)
{
    test_stall_limit = limit_s;
}

double scan_stall_limit(double interval_s)
{
    if (test_stall_limit > 0)
        return test_stall_limit;
    double l = SCAN_STALL_INTERVALS * interval_s;
    return l > SCAN_STALL_MIN_S ? l : SCAN_STALL_MIN_S;
}

static const char *stage_name(int stage)
{
    switch (stage) {
    case SCAN_MOUNTS: return "reading the watched mounts";
    case SCAN_FDS: return "reading the fds";
    case SCAN_MAPS: return "reading the mappings";
    case SCAN_DETAILS: return "reading the stat, status and command line";
    case SCAN_REST: return "reading meminfo, SysV segments and the memory cgroup";
    default: return "starting";
    }
}

void scan_beacon_describe(const struct scan_beacon *b, const struct sysroot *sys, char *out,
                          size_t n, pid_t *pid, int *fd)
{
    int stage = atomic_load_explicit(&b->stage, memory_order_relaxed);
    int p = atomic_load_explicit(&b->pid, memory_order_relaxed);
    int f = atomic_load_explicit(&b->fd, memory_order_relaxed);
    if (stage != SCAN_FDS || p <= 0)
        f = -1;
    if (stage != SCAN_FDS && stage != SCAN_MAPS && stage != SCAN_DETAILS)
        p = 0;
    *pid = p;
    *fd = f;
    if (p <= 0) {
        snprintf(out, n, "%s", stage_name(stage));
        return;
    }
    /* The comm is read now: /proc/PID/comm never waits on a file system. */
    char path[32];
    struct buf text;
    buf_init(&text);
    char *comm = NULL;
    if (read_file_at(sys->proc, pid_file_name(path, p, "comm"), &text, 64) == 0) {
        char *cur = text.data, *line = next_line(&cur);
        comm = esc_term_dup(line ? line : "");
    }
    if (f >= 0)
        snprintf(out, n, "reading fd %d of pid %d (%s)", f, p, comm ? comm : "?");
    else
        snprintf(out, n, "%s of pid %d (%s)", stage_name(stage), p, comm ? comm : "?");
    free(comm);
    buf_free(&text);
}

void scan_stalled(struct scan *s, const struct scan_opts *o, double stalled_s,
                  const struct scan_beacon *b)
{
    memset(s, 0, sizeof(*s));
    warn_init(&s->warn);
    clock_gettime(CLOCK_REALTIME, &s->time);
    s->target_pid = o->sys->pid;
    s->self_pid = getpid();
    s->stalled_s = stalled_s > 0 ? stalled_s : 1e-9;
    char where[256];
    scan_beacon_describe(b, o->sys, where, sizeof(where), &s->stalled_pid, &s->stalled_fd);
    warn_add(&s->warn,
             "the scan has not finished after %.0f s, %s (a file system whose server or "
             "daemon does not answer?): no figures until it does",
             stalled_s, where);
}

struct scan_job {
    struct scan_opts opts;
    struct scan_beacon beacon;
    struct scan scan;
    int rc;
    double started;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done, abandoned; /* under lock */
};

static void job_free(struct scan_job *j)
{
    pthread_cond_destroy(&j->cond);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

static void *job_run(void *arg)
{
    struct scan_job *j = arg;
    j->rc = scan_run(&j->opts, &j->scan);
    pthread_mutex_lock(&j->lock);
    j->done = true;
    bool abandoned = j->abandoned;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (abandoned) {
        scan_free(&j->scan);
        job_free(j);
    }
    return NULL;
}

struct scan_job *scan_job_start(const struct scan_opts *o)
{
    struct scan_job *j = xcalloc(1, sizeof(*j));
    j->opts = *o;
    j->opts.beacon = &j->beacon;
    scan_beacon_at(&j->beacon, SCAN_IDLE, 0, -1);
    pthread_mutex_init(&j->lock, NULL);
    clock_cond_init(&j->cond);
    j->started = clock_now();
    /* Signals go to the caller's thread, which watches the clock. */
    int rc = thread_start(&j->thread, "shmwatch-scan", job_run, j);
    if (rc != 0) {
        job_free(j);
        errno = rc;
        return NULL;
    }
    pthread_detach(j->thread);
    return j;
}

bool scan_job_wait(struct scan_job *j, double until)
{
    struct timespec ts = clock_deadline(until);
    pthread_mutex_lock(&j->lock);
    while (!j->done && pthread_cond_timedwait(&j->cond, &j->lock, &ts) != ETIMEDOUT)
        ;
    bool done = j->done;
    pthread_mutex_unlock(&j->lock);
    return done;
}

double scan_job_started(const struct scan_job *j)
{
    return j->started;
}

const struct scan_beacon *scan_job_beacon(const struct scan_job *j)
{
    return &j->beacon;
}

int scan_job_finish(struct scan_job *j, struct scan *out)
{
    *out = j->scan;
    int rc = j->rc;
    job_free(j);
    return rc;
}

void scan_job_abandon(struct scan_job *j)
{
    pthread_mutex_lock(&j->lock);
    bool done = j->done;
    j->abandoned = true;
    pthread_mutex_unlock(&j->lock);
    if (done) {
        scan_free(&j->scan);
        job_free(j);
    }
}
