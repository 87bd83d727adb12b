/* The memory cgroup of the watched process, v1 or v2, with the figures the
 * budget needs. Every path is read below the root seam (util/sysroot.h) so
 * that tests hand the reader fixture trees. */
#ifndef SHMWATCH_CGROUP_H
#define SHMWATCH_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/sysroot.h"
#include "util/warn.h"

struct mountinfo;

struct cgroup_info {
    bool present;        /* false: no memory controller found (no cgroup) */
    int version;         /* 1 or 2 */
    char *path;          /* cgroup path as /proc/PID/cgroup names it, e.g. "/docker/abc" */
    char *dir;           /* the directory that was read (below root) */
    bool has_limit;      /* false: unlimited */
    uint64_t limit;      /* memory.max / memory.limit_in_bytes, or a tighter hierarchical limit */
    bool limit_inherited; /* the limit was set on an ancestor, not on the cgroup itself */
    uint64_t usage;      /* memory.current / memory.usage_in_bytes */
    bool has_peak;
    uint64_t peak;       /* memory.peak / memory.max_usage_in_bytes */
    uint64_t anon;       /* v2 anon; v1 rss (total_rss when hierarchical) */
    uint64_t shmem;      /* v2 shmem; v1 shmem (total_shmem) */
    uint64_t file;       /* v2 file; v1 cache (total_cache) */
    bool has_oom_kills;  /* false: the kernel does not say (file or key missing) */
    uint64_t oom_kills;  /* processes the OOM killer ended in the cgroup, since it was made:
                          * v2 memory.events oom_kill (its subtree included), v1
                          * memory.oom_control oom_kill (this cgroup's own) */
};

/* The cgroups one scan has read, by version and path: containers that
 * share a cgroup (jobs in one slice, as Apptainer's are, or namespaces made
 * by unshare) have their memory files read once per scan. Start zeroed. */
struct cgroup_memo {
    struct cgroup_memo_entry *items;
    size_t n, cap;
};

/* The memory cgroup of pid (0: the watcher itself), from its cgroup file
 * below sys->proc ("self/cgroup" or "PID/cgroup").
 * mi: this process's mountinfo: where the cgroup hierarchies are mounted as
 * this process sees them; the mount points are read below sys->host.
 * Returns 0 (info->present may be false) or -errno when the cgroup file was
 * unreadable; problems are also described in w. memo (or NULL) answers a
 * cgroup read already in this scan, and keeps what is read; a cgroup that
 * could not be read is not read again, nor warned about twice. */
int cgroup_collect(const struct sysroot *sys, pid_t pid, const struct mountinfo *mi,
                   struct cgroup_info *info, struct warnings *w, struct cgroup_memo *memo);

/* cgroup_collect on the text of PID's cgroup file, read already (the
 * node view reads it once for the container's id and its cgroup). */
void cgroup_collect_text(const struct sysroot *sys, pid_t pid, const char *text,
                         const struct mountinfo *mi, struct cgroup_info *info, struct warnings *w,
                         struct cgroup_memo *memo);

void cgroup_memo_free(struct cgroup_memo *memo);

/* The oom_kill count of the cgroup a scan read (info->dir, below
 * sys->host; its version's file) read again now: 0, or -errno (-ENOENT
 * when the kernel does not say). */
int cgroup_read_oom_kills(const struct sysroot *sys, const char *dir, int version,
                          uint64_t *kills);

void cgroup_free(struct cgroup_info *info);

/* --- Pure parsers, exposed for the unit tests --------------------------- */

/* One line of /proc/PID/cgroup: "hierarchy-id:controller,list:/path".
 * v2 is "0::/path". Parsed in place; the strings point into the line. */
struct cgroup_line {
    unsigned id;
    char *controllers; /* "" for v2 */
    char *path;
};
bool cgroup_parse_line(char *line, struct cgroup_line *out);

/* True when the comma-separated list (controllers, mount options) holds name. */
bool cgroup_list_has(const char *list, const char *name);

/* The part of path below a mount whose root is mount_root ("" when path is
 * the mount root itself), or NULL when path is not below it. */
const char *cgroup_relative(const char *path, const char *mount_root);

/* v1 reads "no limit" back as LONG_MAX rounded down to the page size
 * (9223372036854771712 with 4 KiB pages); any value that high is unlimited. */
bool cgroup_v1_unlimited(uint64_t v);

/* The text of memory.max or memory.limit_in_bytes: "max", or a number of
 * bytes (the v1 sentinel counts as unlimited). False on junk. */
bool cgroup_parse_limit(const char *text, bool *limited, uint64_t *limit);

/* Looks key up in a flat-keyed file ("key value" lines, e.g. memory.stat). */
bool cgroup_stat_get(const char *text, const char *key, uint64_t *out);

/* The memory.stat figures: v2 anon/file/shmem; v1 total_rss/total_cache/
 * total_shmem (rss/cache/shmem when the total_* keys are missing) and
 * hierarchical_memory_limit. */
struct cgroup_stat {
    uint64_t anon, file, shmem;
    bool has_hier_limit;
    uint64_t hier_limit; /* v1 only; never the unlimited sentinel */
};
void cgroup_parse_stat(const char *text, int version, struct cgroup_stat *st);

/* The oom_kill count of v2 memory.events or v1 memory.oom_control (both
 * "key value" lines; the key exists since Linux 4.13). False when absent. */
bool cgroup_parse_oom_kills(const char *text, uint64_t *kills);

#endif
