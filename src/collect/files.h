/* Named entries in each shm mount: readdir + fstatat, never following links.
 * A regular file at the top of a tmpfs is listed by its directory entry
 * alone (the entry's inode number is the file's): its stat waits until the
 * holders are read, since a holder's fd stat already has the same facts,
 * and files_finish stats only the entries no holder stat'ed. */
#ifndef SHMWATCH_FILES_H
#define SHMWATCH_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/holders.h"
#include "collect/mounts.h"
#include "util/strpool.h"
#include "util/sysroot.h"
#include "util/warn.h"

enum file_type { FT_REGULAR, FT_SYMLINK, FT_DIR, FT_FIFO, FT_SOCKET, FT_OTHER };

const char *file_type_name(enum file_type t);
/* The type of an inode, from its st_mode. */
enum file_type file_type_of(mode_t mode);

struct shm_file {
    size_t mount;   /* index into the mount list */
    char *name;     /* path relative to the mount; any bytes but NUL and '/' in a component */
    dev_t dev;
    ino_t ino;
    uint64_t size;  /* st_size: apparent size */
    uint64_t alloc; /* st_blocks * 512: pages actually allocated */
    int64_t mtime;
    int64_t ctime;  /* status change time; 0 when the facts came from a holder's fd
                     * (files_finish), which only a held file has */
    enum file_type type;
    uid_t uid;
    bool stat_pending; /* dev and ino from the listing; the rest is not read yet */
};

/* A directory at the top of a mount, on the mount's own device: the listing
 * descends into it (a FILES_FOLDER_PREFIX folder is a file as well), and
 * records it for what clean reports (a directory named like a segment is
 * shown and refused, never removed: act/targets.c), so that no action
 * re-reads the mounts. */
struct shm_dir {
    size_t mount;   /* index into the mount list */
    char *name;     /* its entry at the mount's top */
    dev_t dev;
    ino_t ino;
    uid_t uid;
    int64_t mtime;
};

struct file_list {
    struct shm_file *items;
    size_t n, cap;
    struct shm_dir *dirs; /* in the order read */
    size_t ndirs, dirs_cap;
    struct strpool names; /* the bytes of every name above (files_name) */
};

/* A copy of name that lives as long as fl: what a shm_file's or shm_dir's
 * name points to. */
char *files_name(struct file_list *fl, const char *name);

/* A directory at the top of a mount whose name begins so (joblib's
 * memmapping folder) is listed itself as well as its files: the model makes
 * it one segment. Other directories are only descended into. */
#define FILES_FOLDER_PREFIX "joblib_memmapping_folder_"

/* Maximum directory depth below a mount that is listed. */
#define FILES_MAX_DEPTH 4

/* Lists every mount of ml (reached below sys->root) into out (appending)
 * and marks the mounts it could read as listed; some entries are left
 * stat_pending for files_finish. The directories at each mount's top go
 * to out->dirs. */
void files_collect(const struct sysroot *sys, struct mount_list *ml, struct file_list *out,
                   struct warnings *w);

/* Gives back the list's spare capacity, once it is complete: the list lives
 * as long as the scan (a dashboard keeps two). Not between the calls of
 * files_collect that fill one list (the node view's, one mount at a time):
 * each would grow it again from its exact size, and the array would be
 * copied into new pages each time. */
void files_trim(struct file_list *fl);

/* Completes the pending entries: from a holder of the same inode that was
 * stat'ed (hl may be NULL), else by a stat of the entry; drops entries that
 * were removed in the meantime. */
void files_finish(const struct sysroot *sys, const struct mount_list *ml, struct file_list *fl,
                  const struct holder_list *hl);
/* Its two halves, for a caller that stats each mount's entries through
 * another root (the node view): the facts of the holders, taken once for
 * the whole list, then the stats of the rest, mount by mount. */
void files_take_held(struct file_list *fl, const struct holder_list *hl);
void files_stat_rest(const struct sysroot *sys, const struct mount_list *ml,
                     struct file_list *fl);

/* Frees the list's records, once a model has copied their facts into its
 * segments (model_build): the directories and the names stay, for the
 * model points at them. The list is then empty of files. */
void files_drop_records(struct file_list *fl);
void files_free(struct file_list *fl);

#endif
