/* The `shmwatch plan` calculator: how much /dev/shm a PyTorch DataLoader
 * needs, from its batch size, sample shapes, dtype, workers and prefetch
 * factor, and whether that fits a container's --shm-size and -m.
 * Pure arithmetic, every step overflow-checked; errors come back as a
 * sentence in *cause (the caller frees it; a NULL cause asks for none). */
#ifndef SHMWATCH_CAPACITY_H
#define SHMWATCH_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLAN_MAX_TENSORS 16
#define PLAN_MAX_DIMS 8
#define PLAN_DEFAULT_PREFETCH 2
/* Batches the main process holds besides the prefetched ones: the batch the
 * training step is using, and the next one while it is received (the loop
 * variable still refers to the previous batch while `for batch in loader`
 * fetches the next) or copied into pinned memory by the pin-memory thread. */
#define PLAN_MAIN_HELD 2
#define PLAN_DEFAULT_PAGE 4096

/* One tensor of a sample, e.g. the image "3x224x224" or the label "1". */
struct capacity_tensor {
    uint64_t dims[PLAN_MAX_DIMS];
    size_t ndims;
    const char *dtype; /* canonical name, static storage */
    unsigned elem_size;
};

struct capacity_input {
    uint64_t batch_size;
    struct capacity_tensor tensors[PLAN_MAX_TENSORS];
    size_t ntensors;
    uint64_t workers;   /* 0: the main process loads, nothing goes through shm */
    uint64_t prefetch;  /* batches prefetched per worker; 0 means the default, 2 */
    bool has_memory;
    uint64_t memory;    /* --memory (-m) */
    bool has_shm_size;
    uint64_t shm_size;  /* --shm-size */
    uint64_t page_size; /* 0 means 4096 */
    /* plan --observe: one batch's shm as a running loader holds it; when
     * set, batch_size and the tensors are not used (and may be absent). */
    uint64_t observed_batch_shm;
    /* And what that loader holds now: the peak is never less (its batch is
     * a floor where a sample has several tensors of the largest size). */
    uint64_t observed_held;
};

struct capacity_tensor_result {
    uint64_t elems;           /* values per sample */
    uint64_t sample_bytes;    /* elems x dtype size */
    uint64_t batch_bytes;     /* sample_bytes x batch size */
    uint64_t batch_shm_bytes; /* batch_bytes rounded up to whole pages: one segment each */
};

enum capacity_verdict { PLAN_UNCHECKED, PLAN_FITS, PLAN_DOES_NOT_FIT };

struct capacity_result {
    struct capacity_tensor_result t[PLAN_MAX_TENSORS];
    uint64_t prefetch;        /* the factor used */
    uint64_t page_size;
    uint64_t sample_bytes, batch_bytes, batch_shm_bytes;
    uint64_t prefetched;      /* workers x prefetch */
    uint64_t held;            /* PLAN_MAIN_HELD, or 0 without workers */
    uint64_t batches;         /* prefetched + held */
    uint64_t shm_peak;        /* batches x batch_shm_bytes, or observed_held when more */
    bool peak_held;           /* shm_peak is observed_held */
    uint64_t shm_margin;      /* shm_peak x 1.5, before rounding */
    uint64_t rec_shm_size;    /* recommended --shm-size (0 without workers) */
    bool shm_floored;         /* rec_shm_size was raised to Docker's default 64 MiB */
    /* Against --shm-size: the peak must fit in it; tightly when it is below
     * shm_margin rounded up (Docker's default, the floor of rec_shm_size, is
     * no part of the margin). */
    bool shm_fits;
    bool shm_tight;
    /* Against --memory: shm is charged to the memory limit. planned_shm is
     * --shm-size when given, else the recommendation. */
    bool memory_fits;         /* shm_peak < memory */
    bool shm_not_below_memory; /* planned_shm >= memory: the OOM killer fires before ENOSPC */
    uint64_t planned_shm;
    uint64_t app_room_peak;   /* memory - shm_peak */
    uint64_t app_room_full;   /* memory - planned_shm (0 at the least) */
    enum capacity_verdict verdict;
};

/* Looks a dtype up: float32/float, float64/double, float16/half, bfloat16,
 * uint8, int8, int16/short, int32/int, int64/long, bool (a "torch." prefix
 * is accepted). Returns false for an unknown name. */
bool capacity_dtype(const char *name, const char **canonical, unsigned *size);

/* Parses "3x224x224,1" into in->tensors: tensors separated by commas,
 * dimensions by 'x'; a tensor may name its own dtype ("1:int64"), the others
 * take default_dtype, which must be known even when no tensor uses it.
 * Returns 0 or -EINVAL with *cause set. */
int capacity_parse_shapes(const char *spec, const char *default_dtype, struct capacity_input *in,
                      char **cause);

/* Returns 0, -EINVAL (a zero batch size, no tensors) or -EOVERFLOW (a figure
 * beyond 64 bits), with *cause set on error. */
int capacity_compute(const struct capacity_input *in, struct capacity_result *r, char **cause);

const char *capacity_verdict_name(enum capacity_verdict v);

#endif
