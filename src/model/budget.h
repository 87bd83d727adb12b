/* The memory budget: the container's limit against app memory and shm, the
 * verdict and plain-sentence advice. Pure arithmetic, no I/O. */
#ifndef SHMWATCH_BUDGET_H
#define SHMWATCH_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/cgroup.h"

enum verdict { VERDICT_OK, VERDICT_WARN, VERDICT_CRITICAL };
enum limit_source { LIMIT_CGROUP, LIMIT_MEMTOTAL };

struct budget_input {
    const struct cgroup_info *cg; /* may be NULL or !present */
    uint64_t mem_total;           /* MemTotal, bytes */
    uint64_t shm_size;            /* size of the primary shm mount (0 if none) */
    uint64_t shm_used;
    uint64_t shm_avail;
    uint64_t inodes, inodes_free; /* the mount's (collect/mounts.h); inodes 0: no limit */
    uint64_t pending;             /* apparent minus allocated bytes of live segments */
    uint64_t rss_anon_sum;        /* RssAnon summed over the watched processes (fallback app) */
    bool workers_present;         /* DataLoader workers exist */
    uint64_t peak_shm;            /* observed peak shm used (0: use shm_used) */
    uint64_t peak_app;            /* observed peak app bytes (0: use the current app) */
    double warn_pct, crit_pct;    /* fill thresholds, percent (defaults 80, 95) */
    uint64_t oom_recent;          /* OOM kills seen rising lately (oom_watch_recent) */
    uint64_t leftover;            /* allocation of the orphans an earlier run of a
                                   * restarted container left on the mount */
    /* The used bytes of the other listed shm mounts charged to the same
     * cgroup (a container's --tmpfs /run/shm beside its /dev/shm): they
     * count against the same limit. Sentences that add them up name this
     * mount by path (NULL: "/dev/shm") and them by other (the one mount's
     * path, or "2 other shm mounts"). */
    uint64_t shm_other;
    /* The recommended sizes of those mounts (each its own budget's
     * rec_shm_size): the -m recommended here counts them at those, so that
     * every mount of one cgroup recommends the same -m. */
    uint64_t shm_other_rec;
    const char *path, *other;
};

struct budget {
    uint64_t limit;
    enum limit_source limit_source;
    uint64_t shm_size, shm_used, app, headroom;
    uint64_t shm_other;           /* as budget_input: in headroom, not in shm_used */
    uint64_t shm_effective;       /* more shm writable before ENOSPC or the limit */
    enum verdict verdict;
    char **advice;                /* most important first */
    size_t nadvice;
    uint64_t rec_shm_size;        /* recommended --shm-size (0: no shm use seen yet) */
    uint64_t rec_memory;          /* recommended -m */
    uint64_t peak_shm, peak_app;  /* the figures the recommendation was made from */
    /* What the busiest DataLoader group shows (model/loader.c); loader_main
     * 0 when no group holds a batch. */
    int loader_main;
    uint64_t loader_batch;        /* one batch's shm */
    uint64_t loader_workers, loader_batches; /* its workers, batches in flight */
    uint64_t loader_prefetch;     /* prefetch factor read from them (2 when unknown) */
    uint64_t fit_workers_shm;     /* workers that fit in /dev/shm at that factor */
    uint64_t fit_workers_limit;   /* ... and under the memory limit (UINT64_MAX: none) */
    uint64_t oom_recent;          /* OOM kills seen rising lately: the verdict is critical */
};

/* Fills out from in:
 *   app       = cgroup anon when a memory cgroup is present, else rss_anon_sum;
 *   limit     = the cgroup limit when there is one (and it is below MemTotal),
 *               else MemTotal (limit_source says which);
 *   headroom  = limit - app - shm_used - shm_other (0 at the least);
 *   shm_effective = min(shm_avail, headroom).
 * Advice, most important first: OOM kills of the cgroup (critical while new
 * ones are seen, information otherwise), the OOM killer firing before /dev/shm fills,
 * Docker's 64 MiB default with DataLoader workers, fill and memory
 * thresholds, pending bytes that can end in SIGBUS, the MemTotal fallback,
 * and the recommended --shm-size (peak shm x 1.5, rounded up, never below
 * Docker's 64 MiB but for a current size below it that holds that much: then
 * the current size, kept) and -m ((app peak + that + shm_other_rec) x 1.2,
 * rounded up) with their arithmetic. */
void budget_compute(const struct budget_input *in, struct budget *out);
void budget_free(struct budget *b);
const char *verdict_name(enum verdict v);

/* Docker's /dev/shm when --shm-size is not given. */
#define DOCKER_DEFAULT_SHM (UINT64_C(64) << 20)

/* A recommended size rounded up: to a whole MiB up to 1 GiB, a whole GiB above. */
uint64_t budget_round_up(uint64_t bytes);
/* The unit budget_round_up rounded a size to: "GiB" or "MiB". */
const char *budget_unit_word(uint64_t rounded);

/* The recommended --shm-size for a peak: peak x 1.5 (into *margin), rounded
 * up, never below Docker's default (*floored says it was raised to it).
 * UINT64_MAX when it does not fit. Shared by the budget and plan. */
uint64_t budget_rec_shm(uint64_t peak, uint64_t *margin, bool *floored);

/* The recommended -m for an application's peak and a recommended
 * --shm-size: (peak_app + rec_shm) x 1.2 (into *margin), rounded up. Shared
 * by the budget and why. */
uint64_t budget_rec_memory(uint64_t peak_app, uint64_t rec_shm, uint64_t *margin);

/* x * num / den rounded up; UINT64_MAX when it does not fit. */
uint64_t budget_scale_up(uint64_t x, uint64_t num, uint64_t den);

/* A size as docker's flags take it: "2g" for whole GiB, else "276m" (rounded up
 * to whole MiB). */
const char *budget_flag_size(char *dst, size_t n, uint64_t bytes);

/* A size for a line of arithmetic, precise enough to follow: "512 B",
 * "183.8 MiB", "1.17 GiB". */
const char *budget_fmt_step(char *dst, size_t n, uint64_t bytes);

#endif
