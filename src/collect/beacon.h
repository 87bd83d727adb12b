/* Where a scan is: written by the scanning thread as it goes (which stage,
 * which process, which fd), read at any time by a watchdog (scanjob.h).
 * A header of plain data: the readers (walk, pidscan, scan) and the watchdog
 * include it without using each other. */
#ifndef SHMWATCH_BEACON_H
#define SHMWATCH_BEACON_H

#include <stdatomic.h>
#include <sys/types.h>

enum scan_stage {
    SCAN_IDLE,
    SCAN_MOUNTS,  /* mountinfo, statfs and the listing of the watched mounts */
    SCAN_FDS,     /* a process's fd/ entries (pid, fd) */
    SCAN_MAPS,    /* a process's mappings (pid) */
    SCAN_DETAILS, /* a process's status, cmdline, exe (pid) */
    SCAN_REST,    /* SysV, meminfo, the memory cgroup */
};

/* Written by the scanning thread with relaxed stores (a few per process:
 * nothing next to the system calls they stand beside), read by any. */
struct scan_beacon {
    _Atomic int stage; /* enum scan_stage */
    _Atomic int pid;   /* the process being read, 0 for none */
    _Atomic int fd;    /* its fd being read, -1 for none */
};

static inline void scan_beacon_at(struct scan_beacon *b, enum scan_stage stage, pid_t pid, int fd)
{
    if (!b)
        return;
    atomic_store_explicit(&b->stage, (int)stage, memory_order_relaxed);
    atomic_store_explicit(&b->pid, (int)pid, memory_order_relaxed);
    atomic_store_explicit(&b->fd, fd, memory_order_relaxed);
}

static inline void scan_beacon_stage(struct scan_beacon *b, enum scan_stage stage)
{
    if (!b)
        return;
    atomic_store_explicit(&b->stage, (int)stage, memory_order_relaxed);
    atomic_store_explicit(&b->fd, -1, memory_order_relaxed);
}

static inline void scan_beacon_fd(struct scan_beacon *b, int fd)
{
    if (b)
        atomic_store_explicit(&b->fd, fd, memory_order_relaxed);
}

#endif
