/* The memory cgroup of the watched process.
 *
 * /proc/PID/cgroup names the cgroup in each hierarchy: "N:memory:/path" on
 * v1, "0::/path" on v2; a hybrid host has both, and memory lives in the v1
 * line when one names it. mountinfo says where that hierarchy is mounted and
 * which part of it the mount shows (its root): a container without a cgroup
 * namespace sees the host's path in /proc/PID/cgroup but has only its own
 * subtree mounted, so the mount root is subtracted from the path. */
#include "collect/cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collect/mounts.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* --- Pure parsers ------------------------------------------------------- */

bool cgroup_parse_line(char *line, struct cgroup_line *out)
{
    char *c1 = strchr(line, ':');
    if (!c1 || c1 == line)
        return false;
    char *c2 = strchr(c1 + 1, ':');
    if (!c2)
        return false;
    *c1 = *c2 = '\0';
    char *end;
    errno = 0;
    unsigned long id = strtoul(line, &end, 10);
    if (errno || *end || !isdigit((unsigned char)line[0]) || id > UINT_MAX)
        return false;
    if (c2[1] != '/')
        return false;
    out->id = (unsigned)id;
    out->controllers = c1 + 1;
    out->path = c2 + 1;
    return true;
}

bool cgroup_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

const char *cgroup_relative(const char *path, const char *mount_root)
{
    if (strcmp(mount_root, "/") == 0)
        return strcmp(path, "/") == 0 ? "" : path;
    size_t n = strlen(mount_root);
    while (n > 1 && mount_root[n - 1] == '/')
        n--;
    if (strncmp(path, mount_root, n) != 0)
        return NULL;
    if (path[n] == '\0' || strcmp(path + n, "/") == 0)
        return "";
    return path[n] == '/' ? path + n : NULL;
}

bool cgroup_v1_unlimited(uint64_t v)
{
    /* LONG_MAX rounded down to 64 KiB covers every page size up to 64 KiB. */
    return v >= ((uint64_t)INT64_MAX & ~(uint64_t)0xffff);
}

static bool parse_u64(const char *s, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

bool cgroup_parse_limit(const char *text, bool *limited, uint64_t *limit)
{
    size_t n = strcspn(text, "\n");
    if (n == 3 && strncmp(text, "max", 3) == 0) {
        *limited = false;
        *limit = 0;
        return true;
    }
    uint64_t v;
    if (!parse_u64(text, &v))
        return false;
    *limited = !cgroup_v1_unlimited(v);
    *limit = *limited ? v : 0;
    return true;
}

bool cgroup_stat_get(const char *text, const char *key, uint64_t *out)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
            char num[32];
            size_t len = nl ? (size_t)(nl - (p + klen)) : strlen(p + klen);
            if (len >= sizeof(num))
                return false;
            memcpy(num, p + klen, len);
            num[len] = '\0';
            return parse_u64(num, out);
        }
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

void cgroup_parse_stat(const char *text, int version, struct cgroup_stat *st)
{
    memset(st, 0, sizeof(*st));
    if (version == 2) {
        cgroup_stat_get(text, "anon", &st->anon);
        cgroup_stat_get(text, "file", &st->file);
        cgroup_stat_get(text, "shmem", &st->shmem);
        return;
    }
    if (!cgroup_stat_get(text, "total_rss", &st->anon))
        cgroup_stat_get(text, "rss", &st->anon);
    if (!cgroup_stat_get(text, "total_cache", &st->file))
        cgroup_stat_get(text, "cache", &st->file);
    if (!cgroup_stat_get(text, "total_shmem", &st->shmem))
        cgroup_stat_get(text, "shmem", &st->shmem);
    uint64_t h;
    if (cgroup_stat_get(text, "hierarchical_memory_limit", &h) && !cgroup_v1_unlimited(h)) {
        st->has_hier_limit = true;
        st->hier_limit = h;
    }
}

bool cgroup_parse_oom_kills(const char *text, uint64_t *kills)
{
    return cgroup_stat_get(text, "oom_kill", kills);
}

/* --- Reading the files --------------------------------------------------- */

struct reader {
    int host; /* the watcher's root: the mount points are below it */
    struct buf path, text;
    struct warnings *w;
};

/* Reads dir + name (name starts with '/'; the path as the watcher sees it,
 * kept in r->path for messages) below r->host into r->text. */
static int read_in(struct reader *r, const char *dir, const char *name)
{
    buf_reset(&r->path);
    buf_printf(&r->path, "%s%s", dir, name);
    return read_file_at(r->host, sysroot_rel(r->path.data), &r->text, READ_SMALL_MAX);
}

/* memory.stat: the usage by kind, and on v1 the hierarchical limit when it
 * is tighter than the cgroup's own. */
static void read_stat(struct reader *r, const char *dir, struct cgroup_info *info)
{
    int rc = read_in(r, dir, "/memory.stat");
    if (rc < 0) {
        warn_add(r->w, "cannot read %s: %s", r->path.data, strerror(-rc));
        return;
    }
    struct cgroup_stat st;
    cgroup_parse_stat(r->text.data, info->version, &st);
    info->anon = st.anon;
    info->file = st.file;
    info->shmem = st.shmem;
    if (st.has_hier_limit && (!info->has_limit || st.hier_limit < info->limit)) {
        info->has_limit = true;
        info->limit = st.hier_limit;
        info->limit_inherited = true;
    }
}

/* The oom_kill count in the file of dir's version that has it: 0, or -errno. */
static int read_oom_kills(struct reader *r, const char *dir, int version, uint64_t *kills)
{
    int rc = read_in(r, dir, version == 1 ? "/memory.oom_control" : "/memory.events");
    return rc == 0 && !cgroup_parse_oom_kills(r->text.data, kills) ? -ENOENT : rc;
}

int cgroup_read_oom_kills(const struct sysroot *sys, const char *dir, int version,
                          uint64_t *kills)
{
    struct reader r = {.host = sys->host};
    buf_init(&r.path);
    buf_init(&r.text);
    int rc = read_oom_kills(&r, strcmp(dir, "/") == 0 ? "" : dir, version, kills);
    buf_free(&r.path);
    buf_free(&r.text);
    return rc;
}

static bool read_v1(struct reader *r, const char *dir, struct cgroup_info *info)
{
    info->version = 1;
    int rc = read_in(r, dir, "/memory.usage_in_bytes");
    if (rc < 0) {
        warn_add(r->w, "cannot read %s: %s", r->path.data, strerror(-rc));
        return false;
    }
    if (!parse_u64(r->text.data, &info->usage)) {
        warn_add(r->w, "%s does not hold a number", r->path.data);
        return false;
    }
    rc = read_in(r, dir, "/memory.limit_in_bytes");
    if (rc < 0 || !cgroup_parse_limit(r->text.data, &info->has_limit, &info->limit))
        warn_add(r->w, "cannot read the limit in %s", r->path.data);
    return true;
}

/* v2: the usage, and the tightest memory.max from the cgroup (dir) up to
 * the root of its mount at mountpoint (the ancestors above it are not
 * visible, and limit it only through it). */
static bool read_v2(struct reader *r, const char *mountpoint, const char *dir,
                    struct cgroup_info *info)
{
    info->version = 2;
    int rc = read_in(r, dir, "/memory.current");
    if (rc == -ENOENT)
        return false; /* no memory controller here, or the root cgroup */
    if (rc < 0 || !parse_u64(r->text.data, &info->usage)) {
        warn_add(r->w, "cannot read %s: %s", r->path.data, rc < 0 ? strerror(-rc) : "junk");
        return false;
    }
    struct buf up; /* dir, then each of its parents in turn */
    buf_init(&up);
    buf_adds(&up, dir);
    size_t floor = strlen(mountpoint);
    size_t leaf = up.len; /* the length of the cgroup's own directory */
    for (;;) {
        bool limited;
        uint64_t v;
        if (read_in(r, up.data, "/memory.max") == 0 &&
            cgroup_parse_limit(r->text.data, &limited, &v) && limited &&
            (!info->has_limit || v < info->limit)) {
            info->has_limit = true;
            info->limit = v;
            info->limit_inherited = up.len < leaf;
        }
        char *slash = strrchr(up.data, '/');
        if (up.len <= floor || !slash || (size_t)(slash - up.data) < floor)
            break;
        *slash = '\0';
        up.len = (size_t)(slash - up.data);
    }
    buf_free(&up);
    return true;
}

/* A mount of the hierarchy that holds the memory controller: v1's cgroup
 * mount with the memory option, or the v2 mount. */
static bool memory_hierarchy(const struct mountinfo_entry *m, int version)
{
    if (version == 1)
        return strcmp(m->fstype, "cgroup") == 0 && cgroup_list_has(m->super_opts, "memory");
    return strcmp(m->fstype, "cgroup2") == 0;
}

/* The mount of this hierarchy whose root is the longest prefix of path. */
static bool find_mount(const struct mountinfo *mi, int version, const char *path,
                       const char **mountpoint, const char **rel)
{
    size_t best = 0; /* the length of its root, which starts with '/' */
    for (size_t i = 0; i < mi->n; i++) {
        const struct mountinfo_entry *m = &mi->items[i];
        if (m->root[0] != '/' || m->mountpoint[0] != '/')
            continue;
        if (!memory_hierarchy(m, version))
            continue;
        const char *r = cgroup_relative(path, m->root);
        size_t len = strlen(m->root);
        if (!r || len <= best)
            continue;
        *mountpoint = strcmp(m->mountpoint, "/") == 0 ? "" : m->mountpoint;
        *rel = r;
        best = len;
    }
    return best > 0;
}

/* A mount of this hierarchy whose root lies above the reader's cgroup
 * namespace ("/.." as the kernel shows it after unshare -C without a new
 * mount): its directories cannot be matched to the namespace's paths. */
static const struct mountinfo_entry *outside_mount(const struct mountinfo *mi, int version)
{
    for (size_t i = 0; i < mi->n; i++) {
        const struct mountinfo_entry *m = &mi->items[i];
        if (memory_hierarchy(m, version) && strncmp(m->root, "/..", 3) == 0 &&
            (m->root[3] == '/' || !m->root[3]))
            return m;
    }
    return NULL;
}

static bool try_hierarchy(struct reader *r, const struct mountinfo *mi, int version,
                          const char *path, struct cgroup_info *info)
{
    const char *mountpoint = NULL, *rel = NULL;
    if (!find_mount(mi, version, path, &mountpoint, &rel)) {
        const struct mountinfo_entry *m = outside_mount(mi, version);
        if (m)
            warn_add(r->w,
                     "the cgroup %s cannot be read: the %s mount at %s was made outside this "
                     "cgroup namespace (its root is %s); mount it afresh inside the namespace",
                     path, m->fstype, m->mountpoint, m->root);
        else
            warn_add(r->w, "the cgroup %s is not mounted where this process can read it", path);
        return false;
    }
    struct buf dir;
    buf_init(&dir);
    buf_printf(&dir, "%s%s", mountpoint, rel);
    struct cgroup_info tmp = {0};
    bool v1 = version == 1;
    bool ok = v1 ? read_v1(r, dir.data, &tmp) : read_v2(r, mountpoint, dir.data, &tmp);
    if (ok) {
        /* The figures both versions have, each in its own file, which a
         * kernel may not give (memory.peak, the oom_kill key): a missing
         * file or key says nothing. Not a warning: null is the honest figure. */
        const char *peak = v1 ? "/memory.max_usage_in_bytes" : "/memory.peak";
        tmp.has_peak = read_in(r, dir.data, peak) == 0 && parse_u64(r->text.data, &tmp.peak);
        tmp.has_oom_kills = read_oom_kills(r, dir.data, version, &tmp.oom_kills) == 0;
        read_stat(r, dir.data, &tmp);
        *info = tmp;
        info->present = true;
        info->path = xstrdup(path);
        info->dir = xstrdup(dir.data[0] ? dir.data : "/");
    }
    buf_free(&dir);
    return ok;
}

struct cgroup_memo_entry {
    int version;
    char *path;
    struct cgroup_info info; /* present false: it could not be read */
};

static void info_copy(struct cgroup_info *dst, const struct cgroup_info *src)
{
    *dst = *src;
    dst->path = src->path ? xstrdup(src->path) : NULL;
    dst->dir = src->dir ? xstrdup(src->dir) : NULL;
}

/* try_hierarchy through the memo. */
static void memo_hierarchy(struct reader *r, const struct mountinfo *mi, int version,
                           const char *path, struct cgroup_info *info, struct cgroup_memo *memo)
{
    for (size_t i = 0; memo && i < memo->n; i++) {
        const struct cgroup_memo_entry *e = &memo->items[i];
        if (e->version == version && strcmp(e->path, path) == 0) {
            if (e->info.present)
                info_copy(info, &e->info);
            return;
        }
    }
    bool ok = try_hierarchy(r, mi, version, path, info);
    if (memo) {
        struct cgroup_memo_entry *e = VEC_PUSH(memo->items, memo->n, memo->cap);
        e->version = version;
        e->path = xstrdup(path);
        if (ok)
            info_copy(&e->info, info);
    }
}

void cgroup_memo_free(struct cgroup_memo *memo)
{
    for (size_t i = 0; i < memo->n; i++) {
        free(memo->items[i].path);
        cgroup_free(&memo->items[i].info);
    }
    free(memo->items);
    memset(memo, 0, sizeof(*memo));
}

int cgroup_collect(const struct sysroot *sys, pid_t pid, const struct mountinfo *mi,
                   struct cgroup_info *info, struct warnings *w, struct cgroup_memo *memo)
{
    memset(info, 0, sizeof(*info));
    char cgroup_file[32];
    struct buf cg;
    buf_init(&cg);
    int rc = read_file_at(sys->proc, pid_file_name(cgroup_file, pid, "cgroup"), &cg, READ_SMALL_MAX);
    if (rc < 0)
        warn_add(w, "cannot read %s/%s: %s", sysroot_proc_shown(sys), cgroup_file, strerror(-rc));
    else
        cgroup_collect_text(sys, pid, cg.data, mi, info, w, memo);
    buf_free(&cg);
    return rc;
}

void cgroup_collect_text(const struct sysroot *sys, pid_t pid, const char *text,
                         const struct mountinfo *mi, struct cgroup_info *info, struct warnings *w,
                         struct cgroup_memo *memo)
{
    memset(info, 0, sizeof(*info));
    struct reader r = {.w = w, .host = sys->host};
    buf_init(&r.path);
    buf_init(&r.text);
    struct buf cg; /* a copy: its lines are parsed in place */
    buf_init(&cg);
    buf_adds(&cg, text);

    const char *v1_path = NULL, *v2_path = NULL; /* into cg */
    char *cursor = cg.data, *line;
    while ((line = next_line(&cursor))) {
        struct cgroup_line l;
        if (!cgroup_parse_line(line, &l))
            continue;
        if (l.id == 0 && l.controllers[0] == '\0' && !v2_path)
            v2_path = l.path;
        else if (cgroup_list_has(l.controllers, "memory") && !v1_path)
            v1_path = l.path;
    }
    /* The memory controller is bound to one hierarchy: v1 when a line names it. */
    if (v1_path) {
        memo_hierarchy(&r, mi, 1, v1_path, info, memo);
    } else if (v2_path) {
        memo_hierarchy(&r, mi, 2, v2_path, info, memo);
    } else {
        char cgroup_file[32];
        warn_add(w, "%s/%s names no cgroup: the memory limit is unknown", sysroot_proc_shown(sys),
                 pid_file_name(cgroup_file, pid, "cgroup"));
    }
    buf_free(&cg);
    buf_free(&r.path);
    buf_free(&r.text);
}

void cgroup_free(struct cgroup_info *info)
{
    free(info->path);
    free(info->dir);
    memset(info, 0, sizeof(*info));
}
