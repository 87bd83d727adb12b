/* Fill history of each shm mount: a ring of (time, used, size) samples per
 * mount, and what the dashboard derives from it: the fill rate, the peak,
 * the time until the mount is full while it is rising, and the cells of a
 * sparkline. Pure: the caller supplies every sample and its time. */
#ifndef SHMWATCH_HISTORY_H
#define SHMWATCH_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct history_sample {
    double t;      /* seconds on any monotonic clock */
    uint64_t used; /* bytes */
    uint64_t size; /* bytes; 0 when unknown */
};

struct history_series {
    char *key;                   /* the mount's path */
    struct history_sample *ring; /* capacity items */
    size_t capacity;
    size_t start, count;         /* oldest item and number of items */
    uint64_t peak;               /* highest used ever added */
};

struct history {
    size_t capacity; /* samples kept per series */
    struct history_series *series;
    size_t n, cap;
};

/* capacity: samples kept per mount (e.g. 10 minutes at 2 per second). */
void history_init(struct history *h, size_t capacity);
void history_free(struct history *h);

/* Appends a sample to the series of key (created on first use). A sample
 * not later than the newest one replaces it, so time never runs backwards. */
void history_add(struct history *h, const char *key, double t, uint64_t used, uint64_t size);

const struct history_series *history_find(const struct history *h, const char *key);

/* The i-th sample, 0 the oldest; NULL past the end. */
const struct history_sample *history_at(const struct history_series *s, size_t i);
const struct history_sample *history_last(const struct history_series *s);

/* Fill rate in bytes per second (negative when falling): the least-squares
 * slope of used over the samples of the last window_s seconds. False when
 * fewer than two samples, or no time, lie in the window. */
bool history_rate(const struct history_series *s, double window_s, double *bytes_per_s);

/* Seconds until used reaches size at the rate over window_s; false unless
 * the mount is rising by at least min_rate bytes per second. 0 when full. */
bool history_time_to_full(const struct history_series *s, double window_s, double min_rate,
                          double *seconds);

/* What a gauge says of where the mount is heading: the current rate, over
 * the short rate_window_s, and the time to full over the steadier
 * ttf_window_s, the latter only while the current rate itself rises by at
 * least min_rate: a mount that is steady or falling now is never said to be
 * filling up because it was a while ago (doc/shmwatch.1: "when it is
 * rising"). */
struct history_trend {
    bool has_rate, has_ttf;
    double rate;  /* bytes per second, negative when falling */
    double ttf_s; /* seconds until full, 0 when full */
};
void history_trend(const struct history_series *s, double rate_window_s, double ttf_window_s,
                   double min_rate, struct history_trend *t);

/* Sparkline cells over [t_end - span_s, t_end], oldest first: the highest
 * fill fraction (used / size, 0..1) sampled in each cell; a cell without a
 * sample repeats the value before it; -1 before the first sample. */
void history_sparkline(const struct history_series *s, double t_end, double span_s,
                       double *cells, size_t ncells);

/* A fraction 0..1 as one of levels steps, 0..levels-1, rounded up: 0 only
 * for an empty mount, so any use shows. */
int history_level(double fraction, int levels);

/* OOM kills of the watched cgroup over successive scans. The kernel's count
 * is cumulative (since the cgroup was made), so only a rise between two
 * scans says that the OOM killer has just fired: a first scan, a count that
 * falls (another cgroup, one made anew) or one that becomes unknown only
 * sets the baseline. */
struct oom_watch {
    bool known;         /* last holds a count */
    uint64_t last;      /* the count at the previous scan */
    double rise_t;      /* when the last rise was seen */
    uint64_t recent;    /* kills seen rising within OOM_RECENT_S of rise_t */
};

/* How long a rise keeps counting as recent (and the verdict critical): long
 * enough to be seen on a dashboard and by a --json stream between scans. */
#define OOM_RECENT_S 60.0

/* Feeds one scan's count (known false: the kernel did not say) at time t;
 * returns the kills new since the previous scan (0 on the first). */
uint64_t oom_watch_add(struct oom_watch *w, double t, bool known, uint64_t count);

/* The kills seen rising in the OOM_RECENT_S before t (0: none lately). */
uint64_t oom_watch_recent(const struct oom_watch *w, double t);

#endif
