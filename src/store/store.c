/* The recording store (doc/recording.md): the writer keeps a list of the
 * store's files with their sizes and start times, appends one line per
 * write() to the newest and drops the oldest past the limits; the reader
 * lists the files by name and indexes each line by the start of its text. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/jsondoc.h"
#include "util/rfc3339.h"
#include "util/safefile.h"
#include "util/xalloc.h"

#define STORE_FILE_MIN (1ull << 20)
#define STORE_FILE_MAX (16ull << 20)
#define STORE_FILE_FLOOR (64ull << 10) /* a file's share never shrinks below this */
#define STORE_FILE_SPAN 3600.0
#define STORE_NAME_MAX 48
#define STORE_LATE_S 60.0

const char *store_default_dir(char *buf, size_t n)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    int w;
    if (geteuid() == 0)
        w = snprintf(buf, n, "/var/lib/shmwatch");
    else if (xdg && xdg[0] == '/')
        w = snprintf(buf, n, "%s/shmwatch", xdg);
    else if (home && home[0] == '/')
        w = snprintf(buf, n, "%s/.local/state/shmwatch", home);
    else
        return NULL;
    return w < 0 || (size_t)w >= n ? NULL : buf;
}

/* A store file's name, YYYYMMDDTHHMMSSZ.jsonl or YYYYMMDDTHHMMSSZ-N.jsonl:
 * its start time and N (0 without); false for any other name. */
static bool parse_name(const char *name, double *start, unsigned *seq)
{
    /* The name's time in RFC 3339's form, for the one reader of times. */
    char iso[RFC3339_LEN];
    if (strlen(name) < 22 || name[8] != 'T' || name[15] != 'Z')
        return false;
    snprintf(iso, sizeof(iso), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", name, name + 4, name + 6,
             name + 9, name + 11, name + 13);
    if (!rfc3339_parse(iso, start))
        return false;
    const char *p = name + 16;
    *seq = 0;
    if (*p == '-') {
        if (p[1] < '1' || p[1] > '9')
            return false;
        unsigned long v = 0;
        for (p++; *p >= '0' && *p <= '9' && v < 100000; p++)
            v = v * 10 + (unsigned)(*p - '0');
        *seq = (unsigned)v;
    }
    return strcmp(p, ".jsonl") == 0;
}

struct sfile {
    char name[STORE_NAME_MAX];
    double start;
    unsigned seq;
    uint64_t size;
};

static int sfile_cmp(const void *a, const void *b)
{
    const struct sfile *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The store files of the directory dfd, in time order, with their sizes. */
static int list_files(int dfd, struct sfile **out, size_t *nout)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dh = fd < 0 ? NULL : fdopendir(fd);
    if (!dh) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return -err;
    }
    struct sfile *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        double start;
        unsigned seq;
        struct stat st;
        size_t len = strlen(e->d_name);
        if (len >= STORE_NAME_MAX || !parse_name(e->d_name, &start, &seq) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        struct sfile *f = VEC_PUSH(v, n, cap);
        memcpy(f->name, e->d_name, len + 1);
        f->start = start;
        f->seq = seq;
        f->size = (uint64_t)st.st_size;
    }
    closedir(dh);
    if (n)
        qsort(v, n, sizeof(*v), sfile_cmp);
    *out = v;
    *nout = n;
    return 0;
}

/* ---- Writing ---- */

struct store {
    char *dir;          /* as given, for messages */
    int dfd, lockfd, fd;
    struct store_limits lim;
    uint64_t file_max;
    double file_span;   /* a file's time: an hour, at most half of max_age */
    char *header;
    struct sfile *files; /* every file, in time order; the last is the current one when fd >= 0 */
    size_t nfiles, cap;
    uint64_t total;
    bool lost;          /* the last write failed: a failure that stays (a full disk, a
                         * directory removed) is said once, until a record is written */
    struct buf line;
};

/* The store directory opened, made 0700 when missing; an existing one must
 * be a directory (a link is never followed), the caller's, and writable by
 * neither group nor others: what a recorder running as root writes there
 * no other user may replace or read. */
static int open_dir(const char *dir, const char *shown, char *msg, size_t n)
{
    safefile_make_parents(dir); /* the state directory of a new account may not exist yet */
    struct stat st;
    int rc = 0, dfd = -1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        snprintf(msg, n, "cannot make %s: %s", shown, strerror(-rc));
    } else if (lstat(dir, &st) != 0) {
        rc = -errno;
        snprintf(msg, n, "%s: %s", shown, strerror(-rc));
    } else if (S_ISLNK(st.st_mode)) {
        snprintf(msg, n, "%s: %s", shown, safefile_strerror(SAFEFILE_ESYMLINK));
        rc = -ELOOP;
    } else if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        rc = -errno;
        snprintf(msg, n, "%s: %s", shown,
                 rc == -ENOTDIR ? "refused: not a directory"
                 : rc == -ELOOP ? safefile_strerror(SAFEFILE_ESYMLINK)
                                : strerror(-rc));
    } else if (fstat(dfd, &st) != 0) {
        rc = -errno;
        snprintf(msg, n, "%s: %s", shown, strerror(-rc));
    } else if (st.st_uid != geteuid()) {
        snprintf(msg, n, "%s: %s (uid %u)", shown, safefile_strerror(SAFEFILE_EOWNER),
                 (unsigned)st.st_uid);
        rc = -EPERM;
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(msg, n, "%s: refused: writable by group or others (chmod go-w)", shown);
        rc = -EPERM;
    }
    if (rc == 0)
        return dfd;
    if (dfd >= 0)
        close(dfd);
    return rc;
}

/* The lock file: flock'ed for the recorder's life, its pid inside. */
static int take_lock(struct store *st, char *msg, size_t n)
{
    int fd = openat(st->dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    struct stat sb;
    int rc = fd < 0 ? -errno : fstat(fd, &sb) != 0 ? -errno : safefile_check(&sb, geteuid());
    if (rc < 0) {
        snprintf(msg, n, "%s/lock: %s", st->dir,
                 safefile_strerror(rc == -ELOOP ? SAFEFILE_ESYMLINK : -rc));
        goto fail;
    }
    char text[24] = "";
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
        ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
        long pid = got > 0 ? strtol(text, NULL, 10) : 0;
        if (rc == -EBUSY && pid > 0)
            snprintf(msg, n, "%s is being recorded by pid %ld", st->dir, pid);
        else if (rc == -EBUSY)
            snprintf(msg, n, "%s is being recorded by another process", st->dir);
        else
            snprintf(msg, n, "%s/lock: %s", st->dir, strerror(-rc));
        goto fail;
    }
    int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
        rc = -errno;
        snprintf(msg, n, "%s/lock: %s", st->dir, strerror(errno));
        goto fail;
    }
    st->lockfd = fd;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    return rc;
}

int store_open(const char *dir, const struct store_limits *lim, const char *header,
               struct store **out, char *msg, size_t n)
{
    snprintf(msg, n, "%s", "");
    *out = NULL;
    struct store *st = xcalloc(1, sizeof(*st));
    st->dir = esc_term_dup(dir);
    st->fd = st->lockfd = -1;
    st->lim.max_size = lim && lim->max_size ? lim->max_size : STORE_MAX_SIZE_DEFAULT;
    st->lim.max_age_s = lim && lim->max_age_s > 0 ? lim->max_age_s : STORE_MAX_AGE_DEFAULT;
    st->file_max = st->lim.max_size / 32;
    if (st->file_max < STORE_FILE_MIN)
        st->file_max = STORE_FILE_MIN;
    if (st->file_max > STORE_FILE_MAX)
        st->file_max = STORE_FILE_MAX;
    /* A limit below 2 MiB still holds: no file grows past half of it. */
    if (st->file_max > st->lim.max_size / 2)
        st->file_max = st->lim.max_size / 2;
    /* An age below two hours still holds: a file spans at most half of it,
     * so that no record outlives the age by more than half of it. */
    st->file_span = STORE_FILE_SPAN;
    if (st->file_span > st->lim.max_age_s / 2)
        st->file_span = st->lim.max_age_s / 2;
    st->header = xstrdup(header ? header : "");
    buf_init(&st->line);
    /* "DIR/" would follow a link at DIR: the slashes at the end go. */
    char *path = xstrdup(dir);
    for (size_t len = strlen(path); len > 1 && path[len - 1] == '/';)
        path[--len] = '\0';
    int rc = st->dfd = open_dir(path, st->dir, msg, n);
    free(path);
    if (rc >= 0)
        rc = take_lock(st, msg, n);
    if (rc >= 0) {
        rc = list_files(st->dfd, &st->files, &st->nfiles);
        st->cap = st->nfiles;
        if (rc < 0)
            snprintf(msg, n, "%s: %s", st->dir, strerror(-rc));
    }
    if (rc < 0) {
        store_close(st);
        return rc;
    }
    for (size_t i = 0; i < st->nfiles; i++)
        st->total += st->files[i].size;
    *out = st;
    return 0;
}

/* Drops the oldest file, never the current one: false when there is none. */
static bool drop_oldest(struct store *st)
{
    size_t keep = st->fd >= 0 ? 1 : 0;
    if (st->nfiles <= keep)
        return false;
    struct sfile *f = &st->files[0];
    if (unlinkat(st->dfd, f->name, 0) != 0 && errno != ENOENT)
        return false;
    st->total -= f->size;
    memmove(st->files, st->files + 1, (st->nfiles - 1) * sizeof(*st->files));
    st->nfiles--;
    return true;
}

/* The oldest files dropped while the store is over its size, or while the
 * file after the oldest began more than max_age before now. */
static void prune(struct store *st, double now)
{
    while (st->nfiles > 1 &&
           (st->total > st->lim.max_size || st->files[1].start < now - st->lim.max_age_s))
        if (!drop_oldest(st))
            break;
}

/* One write of len bytes at the file's end; a short or failed one cut back
 * to where the file ended, so that only whole lines stay. 0 or -errno (a
 * short write counts as a full disk: that is what cuts one short). */
static int put(struct store *st, const char *data, size_t len)
{
    struct sfile *f = &st->files[st->nfiles - 1];
    ssize_t w;
    do
        w = write(st->fd, data, len);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)len) {
        f->size += len;
        st->total += len;
        return 0;
    }
    int err = w < 0 ? errno : ENOSPC;
    if (ftruncate(st->fd, (off_t)f->size) != 0)
        err = errno;
    return -err;
}

/* The name a new file is begun under: no reader lists it. */
#define STORE_BEGUN ".begun"

/* A new current file for a first record at time t. Its header is written
 * under STORE_BEGUN, then the file is renamed to its own name: a reader
 * never meets a store file without its header. */
static int rotate(struct store *st, double t)
{
    time_t whole = whole_seconds(t);
    struct tm tm;
    gmtime_r(&whole, &tm);
    char stamp[20];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    char when[RFC3339_LEN];
    rfc3339_format(when, sizeof(when), t);
    char *h = str_printf("{\"recording\":1,\"time\":\"%s\"%s%s}\n", when, st->header[0] ? "," : "",
                         st->header);
    size_t hlen = strlen(h);
    char name[STORE_NAME_MAX];
    unsigned seq = 0;
    /* One left by a recorder killed while it began a file goes first. */
    unlinkat(st->dfd, STORE_BEGUN, 0);
    int flags = O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    int fd = openat(st->dfd, STORE_BEGUN, flags, 0600);
    int rc = fd < 0 ? -errno : write_all(fd, h, hlen);
    /* The first free name; the directory is this recorder's alone (its
     * lock), so no other file takes the name between the look and the
     * rename, which every file system has, hard links or not. */
    for (; rc == 0 && seq < 1000; seq++) {
        if (seq)
            snprintf(name, sizeof(name), "%s-%u.jsonl", stamp, seq);
        else
            snprintf(name, sizeof(name), "%s.jsonl", stamp);
        struct stat sb;
        if (fstatat(st->dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        rc = errno == ENOENT ? 0 : -errno;
        if (rc == 0 && renameat(st->dfd, STORE_BEGUN, st->dfd, name) != 0)
            rc = -errno;
        break;
    }
    if (rc == 0 && seq == 1000)
        rc = -EEXIST;
    if (rc < 0 && fd >= 0)
        unlinkat(st->dfd, STORE_BEGUN, 0);
    free(h);
    if (rc < 0) {
        /* No file begun: the old one stays current. */
        if (fd >= 0)
            close(fd);
        return rc;
    }
    if (st->fd >= 0)
        close(st->fd);
    st->fd = fd;
    struct sfile *f = VEC_PUSH(st->files, st->nfiles, st->cap);
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->start = (double)whole;
    f->seq = seq;
    f->size = hlen;
    st->total += hlen;
    return 0;
}

/* The record at time t into the current file, a new one begun when the
 * record would take it past its share of the size or of the time. */
static int append(struct store *st, double t)
{
    struct sfile *f = st->fd >= 0 ? &st->files[st->nfiles - 1] : NULL;
    bool full = !f || f->size + st->line.len > st->file_max || t - f->start >= st->file_span;
    int rc = full ? rotate(st, t) : 0;
    return rc < 0 ? rc : put(st, st->line.data, st->line.len);
}

/* Room on a full disk: the oldest file dropped, its name into name. When
 * the current file is the only one (a disk smaller than a file's share,
 * or one that others filled) it ends and goes, and the files after it
 * take half its size, so that the disk then holds older files to drop. */
static bool make_room(struct store *st, char *name, size_t n)
{
    snprintf(name, n, "%s", st->nfiles ? st->files[0].name : "");
    if (drop_oldest(st))
        return true;
    const struct sfile *cur = st->fd >= 0 ? &st->files[st->nfiles - 1] : NULL;
    if (!cur || cur->size < 2 * STORE_FILE_FLOOR)
        return false;
    st->file_max = cur->size / 2;
    close(st->fd);
    st->fd = -1;
    return drop_oldest(st);
}

int store_write(struct store *st, double t, const char *line, size_t len, char *msg, size_t n)
{
    snprintf(msg, n, "%s", "");
    buf_reset(&st->line);
    buf_add(&st->line, line, len);
    buf_addc(&st->line, '\n');
    int rc = append(st, t);
    bool full = rc == -ENOSPC || rc == -EDQUOT;
    if (full) {
        char oldest[STORE_NAME_MAX]; /* the file make_room drops */
        if (!make_room(st, oldest, sizeof(oldest))) {
            if (!st->lost)
                snprintf(msg, n,
                         "%s: disk full, and no older file to drop: records lost until there is "
                         "room",
                         st->dir);
        } else if ((rc = append(st, t)) < 0) {
            snprintf(msg, n,
                     "%s: disk full: dropped the oldest file, %s, and still no room: a record lost",
                     st->dir, oldest);
        } else {
            snprintf(msg, n, "%s: disk full: dropped the oldest file, %s, to write", st->dir,
                     oldest);
        }
    } else if (rc < 0) {
        if (!st->lost)
            snprintf(msg, n, "%s: cannot write: %s", st->dir, strerror(-rc));
    }
    st->lost = rc < 0;
    if (rc == 0)
        prune(st, t);
    return rc;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    if (st->fd >= 0)
        close(st->fd);
    if (st->lockfd >= 0)
        close(st->lockfd);
    if (st->dfd >= 0)
        close(st->dfd);
    free(st->files);
    free(st->header);
    free(st->dir);
    buf_free(&st->line);
    free(st);
}

/* ---- Reading ---- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* A JSON string at p without escapes (the kinds and times are plain) into
 * out (of n bytes): the byte after its closing quote, NULL when it is not
 * one or does not fit. */
static const char *plain_string(const char *p, const char *end, char *out, size_t n)
{
    if (p >= end || *p != '"')
        return NULL;
    size_t i = 0;
    for (p++; p < end && *p != '"'; p++) {
        if (*p == '\\' || (unsigned char)*p < 0x20 || i + 1 >= n)
            return NULL;
        out[i++] = *p;
    }
    if (p >= end)
        return NULL;
    out[i] = '\0';
    return p + 1;
}

enum line_kind { LINE_BAD, LINE_HEADER, LINE_SNAPSHOT, LINE_EVENT };

/* A member's key at p (after blanks) into key: the start of its value,
 * NULL when p holds no key and colon. */
static const char *member(const char *p, const char *end, char *key, size_t n)
{
    p = plain_string(skip_ws(p, end), end, key, n);
    if (!p || (p = skip_ws(p, end)) >= end || *p != ':')
        return NULL;
    return skip_ws(p + 1, end);
}

/* A line's kind, time and event kind from its first two members; for a
 * header or a snapshot, *version is its number ("recording": 1). */
static enum line_kind read_start(const char *p, const char *end, double *t, char *event, size_t en,
                                 unsigned long *version)
{
    char key[16], when[48];
    enum line_kind kind;
    p = skip_ws(p, end);
    if (p >= end || *p != '{' || !(p = member(p + 1, end, key, sizeof(key))))
        return LINE_BAD;
    event[0] = '\0';
    if (!strcmp(key, "event")) {
        kind = LINE_EVENT;
        p = plain_string(p, end, event, en);
        if (!p || !event[0])
            return LINE_BAD;
    } else if (!strcmp(key, "recording") || !strcmp(key, "schema")) {
        kind = key[0] == 'r' ? LINE_HEADER : LINE_SNAPSHOT;
        if (p >= end || *p < '1' || *p > '9')
            return LINE_BAD;
        for (*version = 0; p < end && *p >= '0' && *p <= '9'; p++)
            *version = *version < 1000000 ? *version * 10 + (unsigned long)(*p - '0') : *version;
    } else {
        return LINE_BAD;
    }
    p = skip_ws(p, end);
    if (p >= end || *p != ',' || !(p = member(p + 1, end, key, sizeof(key))) || strcmp(key, "time"))
        return LINE_BAD;
    p = plain_string(p, end, when, sizeof(when));
    if (!p || !rfc3339_parse(when, t))
        return LINE_BAD;
    return kind;
}

/* The whole file into b (replacing its content): 0 or -errno. */
static int slurp(int dfd, const char *name, struct buf *b)
{
    buf_reset(b);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = read_fd(fd, b, SIZE_MAX);
    close(fd);
    return rc;
}

__attribute__((format(printf, 3, 4))) static void warn(struct store_index *ix, size_t *cap,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *VEC_PUSH(ix->warnings, ix->nwarnings, *cap) = str_vprintf(fmt, ap);
    va_end(ap);
}

/* The lines of file fi (its text in data) into the index; damage warned.
 * False when the file is no recording this reader can read. */
static bool index_file(struct store_index *ix, size_t *icap, size_t *wcap, uint32_t fi,
                       const char *data, size_t len, double from, double to, const char *shown)
{
    const char *name = ix->files[fi];
    const char *end = data + len;
    size_t bad = 0, first_bad = 0;
    const char *cut = NULL; /* a last line with no newline: cut short */
    if (len == 0) {
        /* The recorder died between making the file and writing its header. */
        warn(ix, wcap, "%s/%s: not a recording (empty)", shown, name);
        return false;
    }
    for (const char *p = data; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        uint64_t off = (uint64_t)(p - data);
        if (!nl) {
            cut = p;
            break;
        }
        double t;
        char event[sizeof(ix->items[0].event)];
        unsigned long version = 0;
        enum line_kind k = read_start(p, nl, &t, event, sizeof(event), &version);
        if (off == 0 && k != LINE_HEADER) {
            warn(ix, wcap, "%s/%s: not a recording (no header)", shown, name);
            return false;
        }
        if (off == 0 && version != 1) {
            /* Fields are only ever added within version 1: another
             * version's records would be read wrongly. */
            warn(ix, wcap, "%s/%s: a recording of version %lu, not 1 (a newer shmwatch's): skipped",
                 shown, name, version);
            return false;
        }
        if (k == LINE_BAD || (k == LINE_HEADER && off)) {
            if (!bad++)
                first_bad = off;
        } else if (k != LINE_HEADER && (from <= 0 || t >= from) && (to <= 0 || t <= to) &&
                   nl - p <= UINT32_MAX) {
            struct store_entry *e = VEC_PUSH(ix->items, ix->n, *icap);
            e->t = t;
            e->kind = k == LINE_EVENT ? STORE_EVENT : STORE_SNAPSHOT;
            snprintf(e->event, sizeof(e->event), "%s", event);
            e->file = fi;
            e->offset = off;
            e->len = (uint32_t)(nl - p);
            e->sum = str_hash(STR_HASH_START, p, (size_t)(nl - p));
        }
        p = nl + 1;
    }
    if (bad == 1)
        warn(ix, wcap, "%s/%s: offset %zu: not a shmwatch record", shown, name, first_bad);
    else if (bad)
        warn(ix, wcap, "%s/%s: offset %zu: not a shmwatch record (and %zu more such lines)",
             shown, name, first_bad, bad - 1);
    if (cut) /* after the bad lines: each file's damage said in the file's order */
        warn(ix, wcap, "%s/%s: offset %zu: a record cut short (%zu bytes)", shown, name,
             (size_t)(cut - data), (size_t)(end - cut));
    return true;
}

/* Drops from the sorted index each record that another file holds too, the
 * same line at the same time (a store file copied beside itself under
 * another name): every reader sees each record once. */
static void drop_copies(struct store_index *ix)
{
    size_t kept = 0;
    for (size_t i = 0; i < ix->n; i++) {
        const struct store_entry *e = &ix->items[i];
        bool copy = false;
        for (size_t k = kept; k-- > 0 && ix->items[k].t == e->t && !copy;)
            copy = ix->items[k].file != e->file && ix->items[k].len == e->len &&
                   ix->items[k].sum == e->sum;
        if (!copy)
            ix->items[kept++] = *e;
    }
    ix->n = kept;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct store_entry *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The hostname of a recording's header (the first line of data), as a new
 * string; NULL when it names none. */
static char *header_host(const char *data, size_t len)
{
    const char *nl = memchr(data, '\n', len);
    struct jd *h = nl ? jd_parse(data, (size_t)(nl - data), NULL, 0) : NULL;
    char *host = jd_strdup(jd_get(h, "hostname"));
    jd_free(h);
    return host;
}

/* The lines of the store's files (dfd, in time order) that fall in the
 * window from..to into ix, sorted by time. False when files of the window
 * were there and none of them is a recording that can be read. */
static bool index_window(struct store_index *ix, int dfd, const struct sfile *files, size_t nfiles,
                         double from, double to, const char *shown)
{
    ix->files = xcalloc(nfiles, sizeof(*ix->files));
    ix->nfiles = nfiles;
    size_t icap = 0, wcap = 0, tried = 0, recordings = 0;
    char *host = NULL; /* the first recording's, that the others are held to */
    bool mixed = false;
    struct buf data;
    buf_init(&data);
    for (size_t i = 0; i < nfiles; i++) {
        ix->files[i] = xstrdup(files[i].name);
        /* A file ends where its successor begins: one that ends before from,
         * or begins after to, holds nothing of the window. A record may be
         * written a little after a later one (an event seen during the scan
         * of the snapshot before it): a file is read up to a minute past its end. */
        if ((from > 0 && i + 1 < nfiles && files[i + 1].start + STORE_LATE_S < from) ||
            (to > 0 && files[i].start > to))
            continue;
        int rc = slurp(dfd, files[i].name, &data);
        if (rc == -ENOENT) /* dropped by the recorder since the listing */
            continue;
        tried++;
        if (rc < 0) {
            warn(ix, &wcap, "%s/%s: %s", shown, files[i].name, strerror(-rc));
            continue;
        }
        if (!index_file(ix, &icap, &wcap, (uint32_t)i, data.data, data.len, from, to, shown))
            continue;
        recordings++;
        /* Files copied together from two machines: their records would be
         * read as one machine's, a death of one told with the other's
         * snapshots. Said once. */
        char *h = header_host(data.data, data.len);
        if (h && host && strcmp(h, host) != 0 && !mixed) {
            char *now_on = esc_term_dup(h), *before_on = esc_term_dup(host);
            warn(ix, &wcap, "%s/%s: recorded on host %s, the files before it on %s: read as one",
                 shown, files[i].name, now_on, before_on);
            free(now_on);
            free(before_on);
            mixed = true;
        }
        if (h && !host)
            host = h;
        else
            free(h);
    }
    free(host);
    buf_free(&data);
    if (ix->n)
        qsort(ix->items, ix->n, sizeof(*ix->items), entry_cmp);
    drop_copies(ix);
    return recordings > 0 || tried == 0;
}

int store_index_load(const char *dir, double from, double to, struct store_index *ix, char *msg,
                     size_t n)
{
    snprintf(msg, n, "%s", "");
    memset(ix, 0, sizeof(*ix));
    ix->dir = xstrdup(dir);
    char *shown = esc_term_dup(dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct sfile *files = NULL;
    size_t nfiles = 0;
    int rc = dfd < 0 ? -errno : list_files(dfd, &files, &nfiles);
    if (rc < 0) {
        snprintf(msg, n, "cannot read the recording %s: %s", shown, strerror(-rc));
    } else if (!nfiles) {
        snprintf(msg, n, "%s: nothing recorded (no YYYYMMDDTHHMMSSZ.jsonl files)", shown);
        rc = -ENOENT;
    } else if (!index_window(ix, dfd, files, nfiles, from, to, shown)) {
        /* Only what cannot be read: an answer from it would be no answer. */
        snprintf(msg, n, "%s%s", ix->warnings[0],
                 ix->nwarnings > 1 ? " (and more files that cannot be read)" : "");
        rc = -ENOENT;
    }
    if (rc < 0)
        store_index_free(ix);
    if (dfd >= 0)
        close(dfd);
    free(files);
    free(shown);
    return rc;
}

char *store_index_read(const struct store_index *ix, size_t i, char *msg, size_t n)
{
    if (i >= ix->n) {
        snprintf(msg, n, "no record %zu in the index", i);
        return NULL;
    }
    const struct store_entry *e = &ix->items[i];
    char *path = str_printf("%s/%s", ix->dir, ix->files[e->file]);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int err = errno;
    free(path);
    char *line = xmalloc((size_t)e->len + 1);
    ssize_t got = -1;
    if (fd >= 0) {
        do
            got = pread(fd, line, e->len, (off_t)e->offset);
        while (got < 0 && errno == EINTR);
        err = errno;
        close(fd);
    }
    if (got == (ssize_t)e->len && (!e->len || line[0] == '{')) {
        line[e->len] = '\0';
        return line;
    }
    if (got < 0)
        snprintf(msg, n, "%s", strerror(err));
    else
        snprintf(msg, n, "the record changed since it was read (dropped?)");
    free(line);
    return NULL;
}

char *store_index_read_once(struct store_index *ix, size_t i, char **warning)
{
    char msg[256];
    *warning = NULL;
    char *line = store_index_read(ix, i, msg, sizeof(msg));
    if (line || i >= ix->n)
        return line;
    const struct store_entry *e = &ix->items[i];
    if (!ix->unread)
        ix->unread = xcalloc(ix->nfiles, sizeof(*ix->unread));
    if (ix->unread[e->file])
        return NULL;
    ix->unread[e->file] = true;
    char *shown = esc_term_dup(ix->dir);
    *warning = str_printf("%s/%s: offset %llu: cannot be read: %s", shown, ix->files[e->file],
                          (unsigned long long)e->offset, msg);
    free(shown);
    return NULL;
}

void store_index_free(struct store_index *ix)
{
    for (size_t i = 0; i < ix->nfiles; i++)
        free(ix->files[i]);
    for (size_t i = 0; i < ix->nwarnings; i++)
        free(ix->warnings[i]);
    free(ix->files);
    free(ix->warnings);
    free(ix->items);
    free(ix->unread);
    free(ix->dir);
    memset(ix, 0, sizeof(*ix));
}
