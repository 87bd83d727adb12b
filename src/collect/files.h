/* Named entries in each shm mount: readdir + fstatat, never following links. */
#ifndef SHMWATCH_FILES_H
#define SHMWATCH_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/mounts.h"
#include "util/warn.h"

enum file_type { FT_REGULAR, FT_SYMLINK, FT_DIR, FT_FIFO, FT_SOCKET, FT_OTHER };

const char *file_type_name(enum file_type t);

struct shm_file {
    size_t mount;   /* index into the mount list */
    char *name;     /* path relative to the mount; any bytes but NUL and '/' in a component */
    dev_t dev;
    ino_t ino;
    uint64_t size;  /* st_size: apparent size */
    uint64_t alloc; /* st_blocks * 512: pages actually allocated */
    int64_t mtime;
    enum file_type type;
    uid_t uid;
};

struct file_list {
    struct shm_file *items;
    size_t n, cap;
};

/* Maximum directory depth below a mount that is listed. */
#define FILES_MAX_DEPTH 4

/* Lists every mount of ml into out (appending). */
void files_collect(const struct mount_list *ml, struct file_list *out, struct warnings *w);

void files_free(struct file_list *fl);

#endif
