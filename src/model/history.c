#include "model/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void history_init(struct history *h, size_t capacity)
{
    memset(h, 0, sizeof(*h));
    h->capacity = capacity ? capacity : 1;
}

void history_free(struct history *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->series[i].key);
        free(h->series[i].ring);
    }
    free(h->series);
    memset(h, 0, sizeof(*h));
}

const struct history_series *history_find(const struct history *h, const char *key)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->series[i].key, key) == 0)
            return &h->series[i];
    return NULL;
}

const struct history_sample *history_at(const struct history_series *s, size_t i)
{
    if (!s || i >= s->count)
        return NULL;
    return &s->ring[(s->start + i) % s->capacity];
}

const struct history_sample *history_last(const struct history_series *s)
{
    return s && s->count ? history_at(s, s->count - 1) : NULL;
}

void history_add(struct history *h, const char *key, double t, uint64_t used, uint64_t size)
{
    struct history_series *s = (struct history_series *)history_find(h, key);
    if (!s) {
        s = VEC_PUSH(h->series, h->n, h->cap);
        s->key = xstrdup(key);
        s->capacity = h->capacity;
        s->ring = xcalloc(s->capacity, sizeof(*s->ring));
    }
    struct history_sample *last = (struct history_sample *)history_last(s);
    struct history_sample *slot;
    if (last && t <= last->t) {
        slot = last;
        t = last->t;
    } else if (s->count < s->capacity) {
        slot = &s->ring[(s->start + s->count++) % s->capacity];
    } else {
        slot = &s->ring[s->start];
        s->start = (s->start + 1) % s->capacity;
    }
    slot->t = t;
    slot->used = used;
    slot->size = size;
    if (used > s->peak)
        s->peak = used;
}

bool history_rate(const struct history_series *s, double window_s, double *bytes_per_s)
{
    const struct history_sample *last = history_last(s);
    if (!last)
        return false;
    double from = last->t - window_s;
    /* Least squares over (t - t0, used - u0): offsets keep the sums small. */
    double t0 = last->t, u0 = (double)last->used;
    double n = 0, st = 0, su = 0, stt = 0, stu = 0;
    for (size_t i = s->count; i-- > 0;) {
        const struct history_sample *x = history_at(s, i);
        if (x->t < from)
            break;
        double dt = x->t - t0, du = (double)x->used - u0;
        n++;
        st += dt;
        su += du;
        stt += dt * dt;
        stu += dt * du;
    }
    double den = n * stt - st * st;
    if (n < 2 || !(den > 1e-12))
        return false;
    *bytes_per_s = (n * stu - st * su) / den;
    return true;
}

bool history_time_to_full(const struct history_series *s, double window_s, double min_rate,
                          double *seconds)
{
    double rate;
    const struct history_sample *last = history_last(s);
    if (!last || !last->size || !history_rate(s, window_s, &rate) || !(rate >= min_rate) ||
        !(rate > 0))
        return false;
    *seconds = last->used >= last->size ? 0 : (double)(last->size - last->used) / rate;
    return true;
}

void history_trend(const struct history_series *s, double rate_window_s, double ttf_window_s,
                   double min_rate, struct history_trend *t)
{
    t->has_rate = history_rate(s, rate_window_s, &t->rate);
    t->has_ttf = t->has_rate && t->rate >= min_rate &&
                 history_time_to_full(s, ttf_window_s, min_rate, &t->ttf_s);
}

static double fraction(const struct history_sample *x)
{
    if (!x->size)
        return 0;
    double f = (double)x->used / (double)x->size;
    return f > 1 ? 1 : f;
}

void history_sparkline(const struct history_series *s, double t_end, double span_s,
                       double *cells, size_t ncells)
{
    for (size_t c = 0; c < ncells; c++)
        cells[c] = -1;
    if (!s || !s->count || !ncells || !(span_s > 0))
        return;
    double t_start = t_end - span_s, width = span_s / (double)ncells;
    double before = -1; /* the newest value before the window */
    for (size_t i = 0; i < s->count; i++) {
        const struct history_sample *x = history_at(s, i);
        if (x->t < t_start) {
            before = fraction(x);
            continue;
        }
        if (x->t > t_end)
            break;
        size_t c = (size_t)((x->t - t_start) / width);
        if (c >= ncells)
            c = ncells - 1;
        double f = fraction(x); /* 0 or more: above a cell's -1 */
        if (f > cells[c])
            cells[c] = f;
    }
    /* Carry the last value through cells without a sample (still -1), so
     * that a sampling interval longer than a cell leaves no holes; nothing
     * after the newest sample is invented. */
    const struct history_sample *newest = history_last(s);
    double carry = before;
    for (size_t c = 0; c < ncells; c++) {
        double cell_start = t_start + width * (double)c;
        if (cells[c] >= 0)
            carry = cells[c];
        else if (cell_start <= newest->t)
            cells[c] = carry;
    }
}

int history_level(double f, int levels)
{
    if (levels < 2 || !(f > 0))
        return 0;
    if (f >= 1)
        return levels - 1;
    return (int)ceil(f * (levels - 1)); /* 0 < f < 1: 1 to levels - 1 */
}

uint64_t oom_watch_add(struct oom_watch *w, double t, bool known, uint64_t count)
{
    uint64_t fresh = known && w->known && count > w->last ? count - w->last : 0;
    if (fresh) {
        /* Rises close together add up; a rise after a quiet spell starts anew. */
        w->recent = oom_watch_recent(w, t) ? w->recent + fresh : fresh;
        w->rise_t = t;
    }
    w->known = known;
    w->last = known ? count : 0;
    return fresh;
}

uint64_t oom_watch_recent(const struct oom_watch *w, double t)
{
    return w->recent && t - w->rise_t < OOM_RECENT_S && t >= w->rise_t ? w->recent : 0;
}
