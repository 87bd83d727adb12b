/* The error messages users meet when /dev/shm or the memory limit runs out
 * (doc/guide.md, "Errors you will meet"), and which of them the current
 * state leads to: those of the kinds present on the mount, for whichever
 * runs out first. */
#include "model/model.h"

static const struct shm_error errors[] = {
    {KIND_TORCH, SHM_LIMIT_SHM_SIZE,
     "RuntimeError: unable to write to file </torch_...>: No space left on device (28)"},
    {KIND_TORCH, SHM_LIMIT_SHM_SIZE,
     "RuntimeError: DataLoader worker (pid N) is killed by signal: Bus error"},
    {KIND_NCCL, SHM_LIMIT_SHM_SIZE,
     "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-XXXXXX (size N)"},
    {KIND_NCCL, SHM_LIMIT_SHM_SIZE, "NCCL WARN failed to extend /dev/shm/nccl-XXXXXX to N bytes"},
    {KIND_PYTHON, SHM_LIMIT_SHM_SIZE,
     "OSError: [Errno 28] No space left on device (multiprocessing's SemLock or shared_memory)"},
    {KIND_RAY, SHM_LIMIT_SHM_SIZE,
     "The object store is using /tmp instead of /dev/shm because /dev/shm has only N bytes "
     "available"},
    {KIND_TORCH, SHM_LIMIT_MEMORY,
     "RuntimeError: DataLoader worker (pid N) is killed by signal: Killed (the OOM killer)"},
    {KIND_OTHER, SHM_LIMIT_MEMORY,
     "a process ends with \"Killed\" (exit status 137): the OOM killer, at the memory limit"},
};

const char *shm_limit_name(enum shm_limit l)
{
    return l == SHM_LIMIT_MEMORY ? "the memory limit (-m)" : "the size of /dev/shm (--shm-size)";
}

size_t shm_errors_all(const struct shm_error **out)
{
    *out = errors;
    return sizeof(errors) / sizeof(errors[0]);
}

/* Whether the kind k has a segment on mount `mount`. */
static bool present(const struct model *m, size_t mount, enum seg_kind k)
{
    for (size_t i = 0; i < m->nsegs; i++) {
        enum seg_kind sk = m->segs[i].kind == KIND_SEM ? KIND_PYTHON : m->segs[i].kind;
        if (m->segs[i].mount == mount && sk == k)
            return true;
    }
    return false;
}

size_t shm_errors_ahead(const struct model *m, size_t mount, enum shm_limit *first,
                        const struct shm_error **out, size_t max)
{
    const struct budget *b = model_mount_budget(m, mount);
    uint64_t avail = mount < model_nmounts(m) ? model_mount(m, mount)->avail : 0;
    *first = b->limit_source == LIMIT_CGROUP && b->headroom < avail ? SHM_LIMIT_MEMORY
                                                                    : SHM_LIMIT_SHM_SIZE;
    bool any = false;
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].kind != KIND_OTHER && errors[i].limit == *first &&
            present(m, mount, errors[i].kind))
            any = true;
    size_t n = 0;
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]) && n < max; i++) {
        const struct shm_error *e = &errors[i];
        if (e->limit != *first)
            continue;
        /* Nothing of a known kind yet: a DataLoader's, and the generic. */
        bool wanted = any ? (e->kind == KIND_OTHER || present(m, mount, e->kind))
                          : (e->kind == KIND_TORCH || e->kind == KIND_OTHER);
        if (wanted)
            out[n++] = e;
    }
    return n;
}
