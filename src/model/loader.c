/* What a running DataLoader shows of itself: per group, the bytes of a batch
 * as its segments hold it, the batches in flight, the shm per worker, and
 * the peak since this shmwatch started; and how many workers fit a size.
 *
 * A batch is one segment per tensor (default_collate puts each batch
 * tensor in one shared storage). Every batch in flight has exactly one
 * segment of the largest size (its biggest tensor): their count is the
 * number of batches in flight, and all the group's bytes divided by it are
 * one batch. A loader whose tensors are all of one shape counts each batch
 * once per tensor, so it reads as smaller batches: the estimate is a floor.
 * A batch the main holds it has received; one only a worker holds that
 * worker has prefetched (its descriptor until the main asks for it). */
#include <stdlib.h>
#include <string.h>

#include "model/capacity.h"
#include "model/model.h"
#include "util/xalloc.h"

/* Page-rounded apparent size: what plan counts for a tensor. */
static uint64_t seg_pages(const struct segment *sg)
{
    uint64_t page = PLAN_DEFAULT_PAGE;
    return sg->size / page * page + (sg->size % page ? page : 0);
}

/* The worker (its index in g->workers) that holds sg while the main does
 * not: a batch it prefetched and the main has not received; g->nworkers
 * for none. */
static size_t prefetcher(const struct group *g, const struct segment *sg)
{
    size_t w = g->nworkers;
    for (uint32_t k = 0; k < sg->nholders; k++) {
        const struct seg_holder *h = &sg->holders[k];
        if (h->proc >= 0 && (size_t)h->proc == g->main_proc)
            return g->nworkers;
        for (size_t i = 0; i < g->nworkers; i++)
            if (g->workers[i] == h->pid)
                w = i;
    }
    return w;
}

static void observe_group(const struct model *m, struct group *g)
{
    uint64_t largest = 0, total = 0;
    size_t nlargest = 0, torch = 0;
    bool held = false;
    size_t *prefetched = xcalloc(g->nworkers + 1, sizeof(*prefetched)); /* per worker */
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        if (sg->group != g->main_pid || sg->kind != KIND_TORCH)
            continue;
        uint64_t b = seg_pages(sg);
        total += b;
        torch++;
        if (b > largest) {
            largest = b;
            nlargest = 0;
            held = false;
            memset(prefetched, 0, g->nworkers * sizeof(*prefetched));
        }
        if (b == largest) {
            nlargest++;
            held = held || sg->nholders > 0;
            prefetched[prefetcher(g, sg)]++;
        }
    }
    g->worker_prefetched = 0;
    for (size_t w = 0; w < g->nworkers; w++)
        if (prefetched[w] > g->worker_prefetched)
            g->worker_prefetched = prefetched[w];
    g->worker_prefetched_known = held;
    free(prefetched);
    g->batches_in_flight = largest ? nlargest : 0;
    g->batch_shm_bytes = largest ? total / nlargest : 0;
    g->batch_segment_bytes = largest;
    g->batch_segments = torch;
    g->batch_segments_bytes = total;
    g->shm_per_worker = g->nworkers ? g->shm_bytes / g->nworkers : 0;
}

static const struct group_peak *peak_of(const struct group_peaks *gp, pid_t main_pid)
{
    for (size_t i = 0; gp && i < gp->n; i++)
        if (gp->items[i].main_pid == main_pid)
            return &gp->items[i];
    return NULL;
}

void loader_observe(struct model *m, const struct group_peaks *gp)
{
    for (size_t i = 0; i < m->ngroups; i++) {
        struct group *g = &m->groups[i];
        observe_group(m, g);
        const struct group_peak *p = peak_of(gp, g->main_pid);
        g->peak_shm = g->shm_bytes;
        g->peak_batch_shm = g->batch_shm_bytes;
        if (p && p->peak_shm > g->peak_shm)
            g->peak_shm = p->peak_shm;
        if (p && p->peak_batch_shm > g->peak_batch_shm)
            g->peak_batch_shm = p->peak_batch_shm;
    }
}

void group_peaks_learn(struct group_peaks *gp, const struct model *m)
{
    for (size_t i = 0; i < m->ngroups; i++) {
        const struct group *g = &m->groups[i];
        struct group_peak *p = (struct group_peak *)peak_of(gp, g->main_pid);
        if (!p) {
            if (gp->n >= GROUP_PEAKS_MAX)
                gp->n = 0; /* a long life of short jobs: start afresh */
            p = VEC_PUSH(gp->items, gp->n, gp->cap);
            p->main_pid = g->main_pid;
        }
        if (g->peak_shm > p->peak_shm)
            p->peak_shm = g->peak_shm;
        if (g->peak_batch_shm > p->peak_batch_shm)
            p->peak_batch_shm = g->peak_batch_shm;
    }
}

void group_peaks_free(struct group_peaks *gp)
{
    free(gp->items);
    memset(gp, 0, sizeof(*gp));
}

uint64_t loader_workers_fit(uint64_t room, uint64_t batch, uint64_t prefetch)
{
    if (batch == 0 || prefetch == 0)
        return 0;
    uint64_t batches = room / batch;
    return batches > PLAN_MAIN_HELD ? (batches - PLAN_MAIN_HELD) / prefetch : 0;
}

uint64_t loader_prefetch_of(const struct group *g)
{
    if (g->nworkers == 0 || g->batches_in_flight <= PLAN_MAIN_HELD)
        return PLAN_DEFAULT_PREFETCH;
    if (g->worker_prefetched_known && g->worker_prefetched > 0)
        return g->worker_prefetched;
    uint64_t f = (g->batches_in_flight - PLAN_MAIN_HELD + g->nworkers / 2) / g->nworkers;
    return f ? f : 1;
}

/* Fills b's loader figures from the busiest of the groups that pass: with
 * on_mount NULL every group (the top-level budget); else only the groups of
 * container ctr whose batches lie on the mount, on_mount[g] saying whether
 * group g has a torch segment there, so that a container's budget never
 * names another container's loader, nor a host mount another mount's. */
static void loader_budget_from(const struct model *m, size_t ctr, const bool *on_mount,
                               struct budget *b)
{
    const struct group *busiest = NULL;
    for (size_t i = 0; i < m->ngroups; i++) {
        const struct group *g = &m->groups[i];
        if (!g->batch_shm_bytes || (on_mount && (g->ctr != ctr || !on_mount[i])))
            continue;
        if (!busiest || g->shm_bytes > busiest->shm_bytes)
            busiest = g;
    }
    if (!busiest)
        return;
    b->loader_main = busiest->main_pid;
    b->loader_batch = busiest->batch_shm_bytes;
    b->loader_workers = busiest->nworkers;
    b->loader_batches = busiest->batches_in_flight;
    b->loader_prefetch = loader_prefetch_of(busiest);
    /* The loader's room: what the mount and the limit leave besides the
     * shm the others use and the app's memory (and under the limit, the
     * other shm mounts of the cgroup). */
    uint64_t others = b->shm_used > busiest->shm_bytes ? b->shm_used - busiest->shm_bytes : 0;
    uint64_t room_shm = b->shm_size > others ? b->shm_size - others : 0;
    b->fit_workers_shm = loader_workers_fit(room_shm, b->loader_batch, b->loader_prefetch);
    b->fit_workers_limit = UINT64_MAX;
    if (b->limit_source == LIMIT_CGROUP) {
        uint64_t used = b->peak_app + others + b->shm_other;
        uint64_t room = b->limit > used ? b->limit - used : 0;
        b->fit_workers_limit = loader_workers_fit(room, b->loader_batch, b->loader_prefetch);
    }
}

void loader_budget(struct model *m)
{
    loader_budget_from(m, NODE_HOST, NULL, &m->budget);
    /* One pass over the segments marks which group has a torch segment on which mount. */
    size_t nm = m->nmount_budgets;
    bool *on = xcalloc(m->ngroups * nm, sizeof(*on));
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        if (!sg->group || sg->kind != KIND_TORCH || sg->mount >= nm)
            continue;
        const struct group *g = model_find_group(m, sg->group);
        if (g)
            on[sg->mount * m->ngroups + (size_t)(g - m->groups)] = true;
    }
    for (size_t i = 0; i < nm; i++)
        loader_budget_from(m, node_owner_index(&m->scan->node, i), on + i * m->ngroups,
                           &m->mount_budgets[i]);
    free(on);
}
