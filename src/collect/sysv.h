/* System V shared memory segments, from proc's sysvipc/shm. */
#ifndef SHMWATCH_SYSV_H
#define SHMWATCH_SYSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/sysroot.h"

struct sysv_seg {
    long long key;
    int shmid;
    uint64_t size;
    uint64_t rss; /* resident bytes, 0 if the kernel does not say */
    unsigned long nattch;
    pid_t cpid, lpid;
    uid_t uid;
};

struct sysv_list {
    struct sysv_seg *items;
    size_t n, cap;
};

/* Parses the whole file text; returns -EINVAL if the header is not recognised. */
int sysv_parse(const char *text, struct sysv_list *out);
/* Reads sysvipc/shm below sys->proc. Returns 0 or -errno. */
int sysv_collect(const struct sysroot *sys, struct sysv_list *out);
void sysv_free(struct sysv_list *sl);

#endif
