/* Builds a recorded system from its description (scene_tree.h; the format
 * is tests/fixtures/scan/README.md). The /proc files are written in the
 * kernel's own formats (proc(5)): stat's 52 fields, status's tab-separated
 * lines, NUL-separated cmdline, maps lines padded to the kernel's column.
 * Links are what they are in /proc: fd/N and map_files/START-END are
 * symbolic links to files of the watched root (relative, so that a stat
 * through them reaches the tree's own files), ns/mnt and ns/pid are
 * dangling links whose text is "mnt:[INODE]". */
#include "scene_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/xalloc.h"

/* The init pid namespace's inode (PROC_PID_INIT_INO). */
#define INIT_PIDNS 4026531836ul

enum ref_kind { REF_SHM, REF_GONE, REF_ABS, REF_DIR };

struct fd_rec {
    int fd;
    enum ref_kind kind;
    char *target; /* a file name (shm:, gone:) or an absolute path */
};

struct map_rec {
    unsigned long long start, end, offset;
    char perms[8];
    enum ref_kind kind;
    char *target;
    bool nolink; /* no map_files/ link: as a reader without CAP_SYS_ADMIN sees it */
};

struct proc_rec {
    pid_t pid, ppid, pgid, sid, nspid;
    char state;
    char *comm;
    char *cmdline; /* arguments separated by single spaces */
    char *exe;
    char *mnt;     /* the name of its mountinfo block */
    char *cgroup;  /* /proc/PID/cgroup text, one line */
    unsigned long pidns;
    uid_t uid;
    unsigned long long start, rss_anon, rss_shmem, sigcatch;
    int threads;
    bool kthread;
    struct fd_rec *fds;
    size_t nfds, fds_cap;
    struct map_rec *maps;
    size_t nmaps, maps_cap;
    struct buf raw_maps; /* maps lines given verbatim */
};

struct mnt_rec {
    char *name;
    unsigned long inode;
    struct buf text;
};

struct text_rec {
    char *path; /* relative to the tree */
    struct buf text;
};

struct file_rec {
    enum ref_kind kind; /* REF_SHM, REF_GONE or REF_DIR (a directory below the mount) */
    char *name;
    ino_t ino;
    unsigned long long size, alloc, age;
};

struct desc {
    struct proc_rec *procs;
    size_t nprocs, procs_cap;
    struct mnt_rec *mnts;
    size_t nmnts, mnts_cap;
    struct text_rec *texts;
    size_t ntexts, texts_cap;
    struct file_rec *files;
    size_t nfiles, files_cap;
    pid_t self;
};

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the description ---- */

/* The next token of *p: spaces separate tokens; "..." quotes (with \\, \",
 * \n, \t and \xHH) may appear anywhere in one. NULL at the end. */
static char *token(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || *s == '#') {
        *p = s;
        return NULL;
    }
    struct buf b;
    buf_init(&b);
    bool quoted = false;
    for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
        if (*s == '"') {
            quoted = !quoted;
            continue;
        }
        if (quoted && *s == '\\' && s[1]) {
            s++;
            if (*s == 'n')
                buf_addc(&b, '\n');
            else if (*s == 't')
                buf_addc(&b, '\t');
            else if (*s == 'x' && s[1] && s[2]) {
                char hex[3] = {s[1], s[2], 0};
                buf_addc(&b, (char)strtoul(hex, NULL, 16));
                s += 2;
            } else
                buf_addc(&b, *s);
            continue;
        }
        buf_addc(&b, *s);
    }
    *p = s;
    buf_addc(&b, '\0');
    return buf_steal(&b);
}

/* A number with an optional binary suffix (K, M, G: KiB, MiB, GiB). */
static bool number(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return false;
    if (*end == 'K')
        v <<= 10, end++;
    else if (*end == 'M')
        v <<= 20, end++;
    else if (*end == 'G')
        v <<= 30, end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

static bool parse_time(const char *s, time_t *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end)
        return false;
    *out = timegm(&tm);
    return true;
}

static bool parse_ref(const char *s, enum ref_kind *kind, char **target)
{
    if (strncmp(s, "shm:", 4) == 0 && s[4]) {
        *kind = REF_SHM;
        *target = xstrdup(s + 4);
    } else if (strncmp(s, "gone:", 5) == 0 && s[5]) {
        *kind = REF_GONE;
        *target = xstrdup(s + 5);
    } else if (s[0] == '/') {
        *kind = REF_ABS;
        *target = xstrdup(s);
    } else {
        return false;
    }
    return true;
}

/* key=value: the value, or NULL when tok is not that key. */
static const char *val(const char *tok, const char *key)
{
    size_t n = strlen(key);
    return strncmp(tok, key, n) == 0 && tok[n] == '=' ? tok + n + 1 : NULL;
}

static int proc_key(struct proc_rec *p, const char *t, char *err, size_t n, int line)
{
    const char *v;
    unsigned long long x;
    if (strcmp(t, "kthread") == 0) {
        p->kthread = true;
        return 0;
    }
    if ((v = val(t, "comm"))) {
        free(p->comm);
        p->comm = xstrdup(v);
        return 0;
    }
    if ((v = val(t, "cmdline"))) {
        p->cmdline = xstrdup(v);
        return 0;
    }
    if ((v = val(t, "exe"))) {
        p->exe = xstrdup(v);
        return 0;
    }
    if ((v = val(t, "mnt"))) {
        p->mnt = xstrdup(v);
        return 0;
    }
    if ((v = val(t, "cgroup"))) {
        free(p->cgroup);
        p->cgroup = xstrdup(v);
        return 0;
    }
    if ((v = val(t, "state"))) {
        if (strlen(v) != 1)
            return fail(err, n, "line %d: state is one letter", line);
        p->state = v[0];
        return 0;
    }
    if ((v = val(t, "sigcatch"))) {
        char *end;
        p->sigcatch = strtoull(v, &end, 16);
        return *end ? fail(err, n, "line %d: sigcatch is hexadecimal", line) : 0;
    }
    static const char *const keys[] = {"ppid", "pgid", "sid", "nspid", "pidns", "uid",
                                       "start", "rss_anon", "rss_shmem", "threads"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
        if (!(v = val(t, keys[k])))
            continue;
        if (!number(v, &x))
            return fail(err, n, "line %d: %s is not a number", line, keys[k]);
        switch (k) {
        case 0: p->ppid = (pid_t)x; break;
        case 1: p->pgid = (pid_t)x; break;
        case 2: p->sid = (pid_t)x; break;
        case 3: p->nspid = (pid_t)x; break;
        case 4: p->pidns = (unsigned long)x; break;
        case 5: p->uid = (uid_t)x; break;
        case 6: p->start = x; break;
        case 7: p->rss_anon = x; break;
        case 8: p->rss_shmem = x; break;
        default: p->threads = (int)x; break;
        }
        return 0;
    }
    return fail(err, n, "line %d: unknown key %s", line, t);
}

/* A "proc", "fd", "map" or "maps" line (p is the last proc, or NULL). */
static int parse_proc_line(struct desc *d, const char *word, const char *rest, const char *line,
                           char *err, size_t n, int lineno)
{
    struct proc_rec *p = d->nprocs ? &d->procs[d->nprocs - 1] : NULL;
    if (strcmp(word, "proc") == 0) {
        char *pid = token(&rest);
        unsigned long long x;
        if (!pid || !number(pid, &x) || x == 0) {
            free(pid);
            return fail(err, n, "line %d: proc PID", lineno);
        }
        free(pid);
        p = VEC_PUSH(d->procs, d->nprocs, d->procs_cap);
        memset(p, 0, sizeof(*p));
        p->pid = p->nspid = (pid_t)x;
        p->state = 'S';
        p->comm = xstrdup("?");
        p->cgroup = xstrdup("0::/");
        p->pidns = INIT_PIDNS;
        p->threads = 1;
        p->pgid = -1;
        p->sid = -1;
        buf_init(&p->raw_maps);
        char *t;
        while ((t = token(&rest))) {
            int rc = proc_key(p, t, err, n, lineno);
            free(t);
            if (rc < 0)
                return rc;
        }
        if (p->pgid < 0) { /* a fork of its parent (the same exe) is in its group */
            p->pgid = p->pid;
            for (size_t i = 0; i + 1 < d->nprocs; i++)
                if (d->procs[i].pid == p->ppid && p->exe && d->procs[i].exe &&
                    strcmp(p->exe, d->procs[i].exe) == 0)
                    p->pgid = d->procs[i].pgid;
        }
        if (p->sid < 0)
            p->sid = p->pgid;
        return 0;
    }
    if (!p)
        return fail(err, n, "line %d: %s before any proc", lineno, word);
    if (strcmp(word, "maps") == 0) {
        /* The rest of the line verbatim. */
        const char *s = strstr(line, "maps") + 4;
        while (*s == ' ')
            s++;
        buf_printf(&p->raw_maps, "%s\n", s);
        return 0;
    }
    char *a = token(&rest), *b = token(&rest), *c = NULL, *e = NULL;
    int rc = 0;
    unsigned long long x;
    if (strcmp(word, "fd") == 0) {
        struct fd_rec *f = VEC_PUSH(p->fds, p->nfds, p->fds_cap);
        if (!a || !b || !number(a, &x) || !parse_ref(b, &f->kind, &f->target)) {
            p->nfds--;
            rc = fail(err, n, "line %d: fd N shm:NAME|gone:NAME|/PATH", lineno);
        } else {
            f->fd = (int)x;
        }
    } else if (strcmp(word, "map") == 0) {
        c = token(&rest);
        e = token(&rest);
        struct map_rec *m = VEC_PUSH(p->maps, p->nmaps, p->maps_cap);
        memset(m, 0, sizeof(*m));
        if (!a || !b || !c || !e || sscanf(a, "%llx-%llx", &m->start, &m->end) != 2 ||
            m->end <= m->start || strlen(b) != 4 || !number(c, &m->offset) ||
            !parse_ref(e, &m->kind, &m->target) || m->kind == REF_ABS) {
            p->nmaps--;
            rc = fail(err, n, "line %d: map START-END PERMS OFFSET shm:NAME|gone:NAME", lineno);
        } else {
            memcpy(m->perms, b, 5);
            char *opt = token(&rest);
            if (opt && strcmp(opt, "nolink") == 0)
                m->nolink = true;
            else if (opt)
                rc = fail(err, n, "line %d: map ... [nolink]", lineno);
            free(opt);
        }
    } else {
        rc = fail(err, n, "line %d: unknown record %s", lineno, word);
    }
    free(a);
    free(b);
    free(c);
    free(e);
    return rc;
}

static int parse_file(struct desc *d, enum ref_kind kind, const char *rest, char *err, size_t n,
                      int lineno)
{
    char *name = token(&rest);
    /* Below the mount: a path of plain components (a gone file: one). */
    bool bad = !name || !*name || name[0] == '/' || name[strlen(name) - 1] == '/' ||
               strstr(name, "//") || (kind == REF_GONE && strchr(name, '/'));
    for (const char *c = name; !bad && c; c = strchr(c, '/'), c = c ? c + 1 : c)
        bad = strncmp(c, "..", 2) == 0 && (c[2] == '/' || !c[2]);
    if (bad) {
        free(name);
        return fail(err, n, "line %d: shm|gone|shmdir NAME ino=N size=N alloc=N age=S", lineno);
    }
    struct file_rec *f = VEC_PUSH(d->files, d->nfiles, d->files_cap);
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->name = name;
    char *t;
    bool has_ino = false;
    while ((t = token(&rest))) {
        unsigned long long x = 0;
        const char *v;
        bool ok = false;
        if ((v = val(t, "ino")) && number(v, &x) && x > 0) {
            f->ino = (ino_t)x;
            ok = has_ino = true;
        } else if ((v = val(t, "size")) && number(v, &x)) {
            f->size = x;
            ok = true;
        } else if ((v = val(t, "alloc")) && number(v, &x)) {
            f->alloc = x;
            ok = true;
        } else if ((v = val(t, "age")) && number(v, &x)) {
            f->age = x;
            ok = true;
        }
        if (!ok) {
            int rc = fail(err, n, "line %d: bad %s", lineno, t);
            free(t);
            return rc;
        }
        free(t);
    }
    if (!has_ino)
        return fail(err, n, "line %d: %s needs ino=N", lineno, name);
    if (f->alloc > f->size || f->alloc % 4096)
        return fail(err, n, "line %d: alloc is whole pages, at most size", lineno);
    for (size_t i = 0; i + 1 < d->nfiles; i++)
        if (d->files[i].ino == f->ino)
            return fail(err, n, "line %d: ino %llu declared twice", lineno,
                        (unsigned long long)f->ino);
    return 0;
}

static int parse_kv(const char *rest, const char *const *keys, unsigned long long *vals, size_t nk,
                    char *err, size_t n, int lineno)
{
    char *t;
    size_t got = 0;
    while ((t = token(&rest))) {
        bool ok = false;
        for (size_t k = 0; k < nk && !ok; k++) {
            const char *v = val(t, keys[k]);
            if (v && number(v, &vals[k])) {
                ok = true;
                got++;
            }
        }
        if (!ok) {
            int rc = fail(err, n, "line %d: bad %s", lineno, t);
            free(t);
            return rc;
        }
        free(t);
    }
    return got == nk ? 0 : fail(err, n, "line %d: needs %zu values", lineno, nk);
}

static int parse(struct scene *sc, struct desc *d, char *text, char *err, size_t n)
{
    int lineno = 0;
    struct buf *block = NULL; /* inside a mountinfo or text block */
    bool has_now = false;
    for (char *line = text, *next; line; line = next) {
        /* Line by line, empty ones counted (and kept in a block). */
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        if (block) {
            if (strcmp(line, "end") == 0)
                block = NULL;
            else
                buf_printf(block, "%s\n", line);
            continue;
        }
        const char *rest = line;
        char *word = token(&rest);
        if (!word)
            continue;
        int rc = 0;
        unsigned long long x;
        char *a = NULL, *b = NULL;
        if (strcmp(word, "now") == 0) {
            a = token(&rest);
            if (!a || !parse_time(a, &sc->now))
                rc = fail(err, n, "line %d: now YYYY-MM-DDTHH:MM:SSZ", lineno);
            has_now = true;
        } else if (strcmp(word, "watch") == 0) {
            a = token(&rest);
            if (a && strcmp(a, "self") == 0)
                sc->watch = 0;
            else if (a && number(a, &x) && x > 0)
                sc->watch = (pid_t)x;
            else
                rc = fail(err, n, "line %d: watch self|PID", lineno);
        } else if (strcmp(word, "self") == 0) {
            a = token(&rest);
            if (a && number(a, &x) && x > 0)
                d->self = (pid_t)x;
            else
                rc = fail(err, n, "line %d: self PID", lineno);
        } else if (strcmp(word, "owner") == 0) {
            a = token(&rest);
            if (a && number(a, &x))
                sc->owner = (uid_t)x;
            else
                rc = fail(err, n, "line %d: owner UID", lineno);
        } else if (strcmp(word, "statvfs") == 0) {
            static const char *const keys[] = {"size", "used", "avail"};
            unsigned long long v[3];
            rc = parse_kv(rest, keys, v, 3, err, n, lineno);
            sc->size = v[0], sc->used = v[1], sc->avail = v[2];
            sc->has_statvfs = rc == 0;
        } else if (strcmp(word, "device") == 0) {
            unsigned maj, min;
            char end;
            a = token(&rest);
            if (a && sscanf(a, "%u:%u%c", &maj, &min, &end) == 2) {
                sc->declared_dev = makedev(maj, min);
                sc->has_device = true;
            } else {
                rc = fail(err, n, "line %d: device MAJ:MIN", lineno);
            }
        } else if (strcmp(word, "meminfo") == 0) {
            static const char *const keys[] = {"total", "available", "shmem"};
            unsigned long long v[3];
            rc = parse_kv(rest, keys, v, 3, err, n, lineno);
            sc->mem_total = v[0], sc->mem_available = v[1], sc->mem_shmem = v[2];
            sc->has_meminfo = rc == 0;
        } else if (strcmp(word, "mountinfo") == 0) {
            a = token(&rest);
            b = token(&rest);
            if (!a || !b || !number(b, &x)) {
                rc = fail(err, n, "line %d: mountinfo NAME MNTNS-INODE", lineno);
            } else {
                struct mnt_rec *m = VEC_PUSH(d->mnts, d->nmnts, d->mnts_cap);
                m->name = a;
                a = NULL;
                m->inode = (unsigned long)x;
                buf_init(&m->text);
                block = &m->text;
            }
        } else if (strcmp(word, "text") == 0) {
            a = token(&rest);
            if (!a || a[0] == '/' || strstr(a, "..")) {
                rc = fail(err, n, "line %d: text PATH (below the tree)", lineno);
            } else {
                struct text_rec *t = VEC_PUSH(d->texts, d->ntexts, d->texts_cap);
                t->path = a;
                a = NULL;
                buf_init(&t->text);
                block = &t->text;
            }
        } else if (strcmp(word, "shm") == 0) {
            rc = parse_file(d, REF_SHM, rest, err, n, lineno);
        } else if (strcmp(word, "gone") == 0) {
            rc = parse_file(d, REF_GONE, rest, err, n, lineno);
        } else if (strcmp(word, "shmdir") == 0) {
            rc = parse_file(d, REF_DIR, rest, err, n, lineno);
        } else {
            rc = parse_proc_line(d, word, rest, line, err, n, lineno);
        }
        free(a);
        free(b);
        free(word);
        if (rc < 0)
            return rc;
    }
    if (block)
        return fail(err, n, "a block has no end line");
    if (!has_now)
        return fail(err, n, "no now line");
    if (!d->self)
        return fail(err, n, "no self line");
    return 0;
}

/* ---- the tree ---- */

static int write_text(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t w = len ? write(fd, data, len) : 0;
    int rc = close(fd);
    return w == (ssize_t)len && rc == 0 ? 0 : -1;
}

/* Creates the directories of rel (relative to tree), as mkdir -p. */
static int mkdirs(const char *tree, const char *rel)
{
    char *p = str_printf("%s/%s", tree, rel);
    int rc = 0;
    for (char *s = p + strlen(tree) + 1; rc == 0; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            rc = -1;
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

static const char *file_dir(enum ref_kind k)
{
    return k == REF_GONE ? "root/.unlinked" : "root/dev/shm";
}

/* The file's name in the tree: a gone file's has " (deleted)" on, so that
 * the text of a link to it reads as the kernel writes one to an unlinked
 * file (and the scan strips it as it would). */
static char *file_path(const char *tree, enum ref_kind k, const char *name)
{
    return str_printf("%s/%s/%s%s", tree, file_dir(k), name, k == REF_GONE ? " (deleted)" : "");
}

/* A directory below the mount: made now, dated once its files are made
 * (date_dir), as making them changes its mtime. */
static int make_dir(struct scene *sc, const struct file_rec *f, char *err, size_t n)
{
    char *rel = str_printf("root/dev/shm/%s", f->name), *path = file_path(sc->tree, f->kind, f->name);
    struct stat st;
    int rc = 0;
    if (mkdirs(sc->tree, rel) != 0 || stat(path, &st) != 0)
        rc = fail(err, n, "cannot make %s: %s", path, strerror(errno));
    else if (sc->files_owned && chown(path, sc->owner, sc->owner) != 0)
        rc = fail(err, n, "cannot chown %s: %s", path, strerror(errno));
    if (rc == 0) {
        struct scene_ino *si = VEC_PUSH(sc->inos, sc->ninos, sc->inos_cap);
        si->real = st.st_ino;
        si->declared = f->ino;
    }
    free(rel);
    free(path);
    return rc;
}

static int date_dir(struct scene *sc, const struct file_rec *f, char *err, size_t n)
{
    char *path = file_path(sc->tree, f->kind, f->name);
    struct timespec ts[2] = {{.tv_sec = sc->now - (time_t)f->age}, {.tv_sec = sc->now - (time_t)f->age}};
    int rc = utimensat(AT_FDCWD, path, ts, 0) == 0 ? 0 : fail(err, n, "cannot date %s", path);
    free(path);
    return rc;
}

static int make_file(struct scene *sc, const struct file_rec *f, char *err, size_t n)
{
    if (f->kind == REF_DIR)
        return make_dir(sc, f, err, n);
    char *path = file_path(sc->tree, f->kind, f->name);
    int rc = -1;
    char *slash = strrchr(f->name, '/');
    if (slash) { /* in a directory below the mount */
        char *rel = str_printf("root/dev/shm/%.*s", (int)(slash - f->name), f->name);
        int made = mkdirs(sc->tree, rel);
        free(rel);
        if (made != 0) {
            fail(err, n, "cannot make the directory of %s", path);
            goto out;
        }
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fail(err, n, "cannot create %s: %s", path, strerror(errno));
        goto out;
    }
    static char page[65536];
    memset(page, 0x5a, sizeof(page));
    /* Sized first, then written inside the size: no write extends the
     * file, so no file system preallocates past it. */
    bool ok = ftruncate(fd, (off_t)f->size) == 0;
    for (unsigned long long at = 0; at < f->alloc && ok;) {
        size_t chunk = f->alloc - at < sizeof(page) ? (size_t)(f->alloc - at) : sizeof(page);
        ok = pwrite(fd, page, chunk, (off_t)at) == (ssize_t)chunk;
        at += chunk;
    }
    ok = ok && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        fail(err, n, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    struct timespec ts[2] = {{.tv_sec = sc->now - (time_t)f->age}, {.tv_sec = sc->now - (time_t)f->age}};
    struct stat st;
    if (utimensat(AT_FDCWD, path, ts, 0) != 0 || stat(path, &st) != 0) {
        fail(err, n, "cannot date %s: %s", path, strerror(errno));
        goto out;
    }
    if ((unsigned long long)st.st_blocks * 512u != f->alloc) {
        fail(err, n,
             "%s: its file system allocates %llu bytes for %llu written; the scenes need one "
             "that allocates what is written and no more (ext4, xfs, tmpfs): set TMPDIR",
             path, (unsigned long long)st.st_blocks * 512u, f->alloc);
        goto out;
    }
    if (sc->files_owned && chown(path, sc->owner, sc->owner) != 0) {
        fail(err, n, "cannot chown %s: %s", path, strerror(errno));
        goto out;
    }
    struct scene_ino *si = VEC_PUSH(sc->inos, sc->ninos, sc->inos_cap);
    si->real = st.st_ino;
    si->declared = f->ino;
    rc = 0;
out:
    free(path);
    return rc;
}

static ino_t real_ino(const struct scene *sc, const struct desc *d, enum ref_kind k,
                      const char *name)
{
    for (size_t i = 0; i < d->nfiles; i++)
        if (d->files[i].kind == k && strcmp(d->files[i].name, name) == 0)
            return sc->inos[i].real;
    return 0;
}

static char state_name(char c, const char **name)
{
    switch (c) {
    case 'R': *name = "R (running)"; break;
    case 'S': *name = "S (sleeping)"; break;
    case 'D': *name = "D (disk sleep)"; break;
    case 'T': *name = "T (stopped)"; break;
    case 't': *name = "t (tracing stop)"; break;
    case 'Z': *name = "Z (zombie)"; break;
    case 'X': *name = "X (dead)"; break;
    case 'I': *name = "I (idle)"; break;
    default: return 0;
    }
    return c;
}

/* The NS* line of status: the pid as the init namespace sees it, then as
 * its own does (when it is in another). */
static void ns_line(struct buf *b, const char *key, pid_t host, pid_t inner, bool nested)
{
    if (nested)
        buf_printf(b, "%s:\t%d\t%d\n", key, (int)host, (int)inner);
    else
        buf_printf(b, "%s:\t%d\n", key, (int)host);
}

static void status_text(struct buf *b, const struct proc_rec *p, const char *state)
{
    bool nested = p->pidns != INIT_PIDNS;
    buf_adds(b, "Name:\t");
    for (const char *c = p->comm; *c; c++) { /* as the kernel escapes it */
        if (*c == '\\')
            buf_adds(b, "\\\\");
        else if (*c == '\n')
            buf_adds(b, "\\n");
        else
            buf_addc(b, *c);
    }
    buf_printf(b, "\nUmask:\t0022\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n"
                  "TracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t64\n"
                  "Groups:\t\n",
               state, (int)p->pid, (int)p->pid, (int)p->ppid, p->uid, p->uid, p->uid, p->uid,
               p->uid, p->uid, p->uid, p->uid);
    ns_line(b, "NStgid", p->pid, p->nspid, nested);
    ns_line(b, "NSpid", p->pid, p->nspid, nested);
    ns_line(b, "NSpgid", p->pgid, p->pgid == p->pid ? p->nspid : p->pgid, nested);
    ns_line(b, "NSsid", p->sid, p->sid == p->pid ? p->nspid : p->sid, nested);
    if (p->state != 'Z' && !p->kthread) /* a zombie's and a kernel thread's have no mm */
        buf_printf(b, "VmPeak:\t  %llu kB\nVmSize:\t  %llu kB\nVmRSS:\t  %llu kB\n"
                      "RssAnon:\t  %llu kB\nRssFile:\t   12288 kB\nRssShmem:\t  %llu kB\n",
                   (p->rss_anon + p->rss_shmem) / 1024 + 65536,
                   (p->rss_anon + p->rss_shmem) / 1024 + 65536,
                   (p->rss_anon + p->rss_shmem) / 1024 + 12288, p->rss_anon / 1024,
                   p->rss_shmem / 1024);
    buf_printf(b, "Threads:\t%d\nSigQ:\t0/63459\nSigPnd:\t0000000000000000\n"
                  "ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
                  "SigIgn:\t0000000001001000\nSigCgt:\t%016llx\n",
               p->threads, p->sigcatch);
}

/* statm in pages as the kernel counts them: shared is file + shmem pages
 * (status's RssFile is 12288 kB), resident those and the anonymous ones. */
static void statm_text(struct buf *b, const struct proc_rec *p)
{
    unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE), size = 0, res = 0,
                       shared = 0;
    if (p->state != 'Z' && !p->kthread) {
        shared = (p->rss_shmem + (12288ull << 10)) / page;
        res = shared + p->rss_anon / page;
        size = res + (65536ull << 10) / page;
    }
    buf_printf(b, "%llu %llu %llu 0 0 %llu 0\n", size, res, shared, size);
}

/* stat's 52 fields (proc(5)), in the kernel's order. */
static void stat_text(struct buf *b, const struct proc_rec *p)
{
    unsigned flags = p->kthread ? 0x208040u : 0x400100u; /* PF_KTHREAD, or a forked task */
    unsigned long long vsize = p->kthread || p->state == 'Z' ? 0 : (p->rss_anon + (64u << 20));
    unsigned long long rss = p->kthread || p->state == 'Z' ? 0 : (p->rss_anon + p->rss_shmem) / 4096;
    buf_printf(b,
               "%d (%s) %c %d %d %d 0 -1 %u 100 0 0 0 5 3 0 0 20 0 %d 0 %llu %llu %llu "
               "18446744073709551615 1 1 0 0 0 0 0 16781312 %llu 0 0 0 17 1 0 0 0 0 0 0 0 0 0 "
               "0 0 0 %d\n",
               (int)p->pid, p->comm, p->state, (int)p->ppid, (int)p->pgid, (int)p->sid, flags,
               p->threads, p->start, vsize, rss, p->sigcatch, 0);
}

/* A maps line as the kernel writes one: the path from column 73. */
static void maps_line(struct buf *b, const struct map_rec *m, dev_t dev, ino_t ino)
{
    size_t at = b->len;
    buf_printf(b, "%08llx-%08llx %s %08llx %02x:%02x %llu", m->start, m->end, m->perms, m->offset,
               major(dev), minor(dev), (unsigned long long)ino);
    while (b->len - at < 72)
        buf_addc(b, ' ');
    buf_printf(b, " /dev/shm/%s%s\n", m->target, m->kind == REF_GONE ? " (deleted)" : "");
}

/* Text with @DEV@ (the tree's device, maj:min) and @OTHERDEV@ (a device
 * that is not the tree's, hex as maps writes it) put in. */
static void subst(struct buf *out, const char *text, dev_t dev)
{
    dev_t other = makedev(0, 1) == dev ? makedev(0, 2) : makedev(0, 1);
    for (const char *s = text; *s;) {
        if (strncmp(s, "@DEV@", 5) == 0) {
            buf_printf(out, "%u:%u", major(dev), minor(dev));
            s += 5;
        } else if (strncmp(s, "@OTHERDEV@", 10) == 0) {
            buf_printf(out, "%02x:%02x", major(other), minor(other));
            s += 10;
        } else {
            buf_addc(out, *s++);
        }
    }
}

/* Does a mountinfo text name dev other than as @DEV@ (a made-up device
 * that happens to be the test file system's)? */
static bool dev_collides(const char *text, dev_t dev)
{
    for (const char *l = text; l && *l;) {
        unsigned long id, parent;
        unsigned maj, min;
        if (sscanf(l, "%lu %lu %u:%u", &id, &parent, &maj, &min) == 4 && makedev(maj, min) == dev)
            return true;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return false;
}

static const struct mnt_rec *find_mnt(const struct desc *d, const char *name)
{
    for (size_t i = 0; name && i < d->nmnts; i++)
        if (strcmp(d->mnts[i].name, name) == 0)
            return &d->mnts[i];
    return NULL;
}

#define TRY(cond, ...)                                                                         \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            rc = fail(err, n, __VA_ARGS__);                                                    \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

static int make_proc(struct scene *sc, const struct desc *d, const struct proc_rec *p, char *err,
                     size_t n)
{
    int rc = 0;
    struct buf b, path;
    buf_init(&b);
    buf_init(&path);
    char dir[64];
    snprintf(dir, sizeof(dir), "proc/%d", (int)p->pid);
    const char *state;
    bool zombie = p->state == 'Z';
    TRY(state_name(p->state, &state), "proc %d: unknown state %c", (int)p->pid, p->state);
    TRY(mkdirs(sc->tree, dir) == 0, "cannot make %s: %s", dir, strerror(errno));
    const struct mnt_rec *mnt = find_mnt(d, p->mnt);
    TRY(zombie || p->kthread || mnt, "proc %d: mnt= names no mountinfo block", (int)p->pid);
#define AT(rel) (buf_reset(&path), buf_printf(&path, "%s/%s/%s", sc->tree, dir, rel), path.data)
    stat_text(&b, p);
    TRY(write_text(AT("stat"), b.data, b.len) == 0, "cannot write %s", path.data);
    buf_reset(&b);
    status_text(&b, p, state);
    TRY(write_text(AT("status"), b.data, b.len) == 0, "cannot write %s", path.data);
    buf_reset(&b);
    statm_text(&b, p);
    TRY(write_text(AT("statm"), b.data, b.len) == 0, "cannot write %s", path.data);
    buf_reset(&b);
    if (p->cmdline && !zombie && !p->kthread) {
        for (const char *c = p->cmdline; *c; c++)
            buf_addc(&b, *c == ' ' ? '\0' : *c);
        buf_addc(&b, '\0');
    }
    TRY(write_text(AT("cmdline"), b.data ? b.data : "", b.len) == 0, "cannot write %s",
        path.data);
    buf_reset(&b);
    buf_printf(&b, "%s\n", p->cgroup);
    TRY(write_text(AT("cgroup"), b.data, b.len) == 0, "cannot write %s", path.data);
    buf_reset(&b);
    TRY(mkdir(AT("fd"), 0755) == 0, "cannot make %s", path.data);
    TRY(mkdir(AT("map_files"), 0755) == 0, "cannot make %s", path.data);
    /* A zombie's fd/ and maps are empty, its links unreadable. */
    if (!zombie) {
        TRY(mkdir(AT("ns"), 0755) == 0, "cannot make %s", path.data);
        char link[64];
        if (mnt) {
            snprintf(link, sizeof(link), "mnt:[%lu]", mnt->inode);
            TRY(symlink(link, AT("ns/mnt")) == 0, "cannot link %s", path.data);
        }
        snprintf(link, sizeof(link), "pid:[%lu]", p->pidns);
        TRY(symlink(link, AT("ns/pid")) == 0, "cannot link %s", path.data);
        TRY(symlink("../../root", AT("root")) == 0, "cannot link %s", path.data);
        if (p->exe && !p->kthread)
            TRY(symlink(p->exe, AT("exe")) == 0, "cannot link %s", path.data);
        if (mnt) {
            TRY(!dev_collides(mnt->text.data, sc->dev),
                "mountinfo %s names the tree's own device other than as @DEV@", mnt->name);
            TRY(!dev_collides(mnt->text.data, sc->declared_dev),
                "mountinfo %s names the declared device other than as @DEV@", mnt->name);
            subst(&b, mnt->text.data ? mnt->text.data : "", sc->dev);
            TRY(write_text(AT("mountinfo"), b.data ? b.data : "", b.len) == 0, "cannot write %s",
                path.data);
            buf_reset(&b);
        }
        for (size_t i = 0; i < p->nfds; i++) {
            const struct fd_rec *f = &p->fds[i];
            char name[16];
            snprintf(name, sizeof(name), "fd/%d", f->fd);
            char *target = f->kind == REF_ABS
                               ? xstrdup(f->target)
                               : str_printf("../../../%s/%s%s", file_dir(f->kind), f->target,
                                            f->kind == REF_GONE ? " (deleted)" : "");
            TRY(f->kind == REF_ABS || real_ino(sc, d, f->kind, f->target),
                "proc %d: fd %d names no file of the scene", (int)p->pid, f->fd);
            int ok = symlink(target, AT(name));
            free(target);
            TRY(ok == 0, "cannot link %s", path.data);
        }
        for (size_t i = 0; i < p->nmaps; i++) {
            const struct map_rec *m = &p->maps[i];
            ino_t ino = real_ino(sc, d, m->kind, m->target);
            TRY(ino, "proc %d: a map names no file of the scene", (int)p->pid);
            maps_line(&b, m, sc->dev, ino);
            if (m->nolink)
                continue;
            char name[64], *target = str_printf("../../../%s/%s%s", file_dir(m->kind), m->target,
                                                m->kind == REF_GONE ? " (deleted)" : "");
            snprintf(name, sizeof(name), "map_files/%llx-%llx", m->start, m->end);
            int ok = symlink(target, AT(name));
            free(target);
            TRY(ok == 0 || errno == EEXIST, "cannot link %s", path.data);
        }
        subst(&b, p->raw_maps.data ? p->raw_maps.data : "", sc->dev);
    }
    TRY(write_text(AT("maps"), b.data ? b.data : "", b.len) == 0, "cannot write %s", path.data);
    /* The kernel gives /proc/PID the process's effective uid, which the
     * scan takes from it; without root, scene_normalize puts it in. */
    TRY(!sc->files_owned || chown(AT("."), p->uid, p->uid) == 0, "cannot chown %s", path.data);
    {
        struct scene_uid *u = VEC_PUSH(sc->uids, sc->nuids, sc->uids_cap);
        u->pid = p->pid;
        u->uid = p->uid;
    }
#undef AT
out:
    buf_free(&b);
    buf_free(&path);
    return rc;
}

static void desc_free(struct desc *d)
{
    for (size_t i = 0; i < d->nprocs; i++) {
        struct proc_rec *p = &d->procs[i];
        free(p->comm);
        free(p->cmdline);
        free(p->exe);
        free(p->mnt);
        free(p->cgroup);
        for (size_t k = 0; k < p->nfds; k++)
            free(p->fds[k].target);
        free(p->fds);
        for (size_t k = 0; k < p->nmaps; k++)
            free(p->maps[k].target);
        free(p->maps);
        buf_free(&p->raw_maps);
    }
    free(d->procs);
    for (size_t i = 0; i < d->nmnts; i++) {
        free(d->mnts[i].name);
        buf_free(&d->mnts[i].text);
    }
    free(d->mnts);
    for (size_t i = 0; i < d->ntexts; i++) {
        free(d->texts[i].path);
        buf_free(&d->texts[i].text);
    }
    free(d->texts);
    for (size_t i = 0; i < d->nfiles; i++)
        free(d->files[i].name);
    free(d->files);
}

static int build(struct scene *sc, struct desc *d, char *err, size_t n)
{
    int rc = 0;
    static const char *const dirs[] = {"root/dev/shm", "root/.unlinked", "proc"};
    for (size_t i = 0; i < 3; i++)
        TRY(mkdirs(sc->tree, dirs[i]) == 0, "cannot make %s: %s", dirs[i], strerror(errno));
    char *shm = str_printf("%s/root/dev/shm", sc->tree);
    struct stat st;
    int ok = stat(shm, &st);
    free(shm);
    TRY(ok == 0, "cannot stat the tree: %s", strerror(errno));
    sc->dev = st.st_dev;
    sc->files_owned = geteuid() == 0;
    for (size_t i = 0; i < d->nfiles; i++)
        if (make_file(sc, &d->files[i], err, n) < 0)
            return -1;
    for (size_t i = 0; i < d->nfiles; i++)
        if (d->files[i].kind == REF_DIR && date_dir(sc, &d->files[i], err, n) < 0)
            return -1;
    for (size_t i = 0; i < d->nprocs; i++)
        if (make_proc(sc, d, &d->procs[i], err, n) < 0)
            return -1;
    char self[16];
    snprintf(self, sizeof(self), "%d", (int)d->self);
    char *link = str_printf("%s/proc/self", sc->tree);
    ok = symlink(self, link);
    free(link);
    TRY(ok == 0, "cannot link proc/self");
    for (size_t i = 0; i < d->ntexts; i++) {
        const struct text_rec *t = &d->texts[i];
        char *slash = strrchr(t->path, '/');
        if (slash) {
            *slash = '\0';
            ok = mkdirs(sc->tree, t->path);
            *slash = '/';
            TRY(ok == 0, "cannot make the directory of %s", t->path);
        }
        struct buf text;
        buf_init(&text);
        subst(&text, t->text.data ? t->text.data : "", sc->dev);
        char *path = str_printf("%s/%s", sc->tree, t->path);
        ok = write_text(path, text.data ? text.data : "", text.len);
        free(path);
        buf_free(&text);
        TRY(ok == 0, "cannot write %s", t->path);
    }
out:
    return rc;
}

int scene_build(struct scene *sc, const char *desc, char *err, size_t n)
{
    memset(sc, 0, sizeof(*sc));
    struct buf text;
    buf_init(&text);
    FILE *f = fopen(desc, "r");
    if (!f)
        return fail(err, n, "cannot open %s: %s", desc, strerror(errno));
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_add(&text, chunk, got);
    fclose(f);
    buf_addc(&text, '\0');
    struct desc d;
    memset(&d, 0, sizeof(d));
    int rc = parse(sc, &d, text.data, err, n);
    buf_free(&text);
    if (rc == 0) {
        const char *tmp = getenv("TMPDIR");
        sc->tree = str_printf("%s/shmwatch-scene-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(sc->tree)) {
            rc = fail(err, n, "cannot make %s: %s", sc->tree, strerror(errno));
            free(sc->tree);
            sc->tree = NULL;
        } else {
            sc->proc = str_printf("%s/proc", sc->tree);
            rc = build(sc, &d, err, n);
        }
    }
    desc_free(&d);
    return rc;
}

/* ---- normalizing ---- */

static bool map_ino(const struct scene *sc, ino_t *ino)
{
    for (size_t i = 0; i < sc->ninos; i++)
        if (sc->inos[i].real == *ino) {
            *ino = sc->inos[i].declared;
            return true;
        }
    return false;
}

/* The declared device in place of the tree's (dev_t *d as the scan read it). */
static void map_dev(const struct scene *sc, dev_t *d)
{
    if (*d == sc->dev)
        *d = sc->declared_dev;
}

int scene_normalize(const struct scene *sc, struct scan *s, char *err, size_t n)
{
    if (!sc->has_device)
        return fail(err, n, "the scene declares no device line");
    for (size_t i = 0; i < s->mounts.n; i++) {
        if (s->mounts.items[i].dev != sc->dev)
            return fail(err, n, "mount %s is not on the tree's device", s->mounts.items[i].path);
        map_dev(sc, &s->mounts.items[i].dev);
        map_dev(sc, &s->devs[i]);
        if (i < s->node.nmounts) /* its id, made from the device by the scan */
            snprintf(s->node.mounts[i].id, sizeof(s->node.mounts[i].id), "%u:%u",
                     major(sc->declared_dev), minor(sc->declared_dev));
    }
    for (size_t i = 0; i < s->files.n; i++)
        map_dev(sc, &s->files.items[i].dev);
    for (size_t i = 0; i < s->files.ndirs; i++)
        map_dev(sc, &s->files.dirs[i].dev);
    for (size_t i = 0; i < s->holders.n; i++)
        map_dev(sc, &s->holders.items[i].dev);
    s->time.tv_sec = sc->now;
    s->time.tv_nsec = 0;
    s->duration_s = 0;
    /* The processes' start ticks count from the scene's boot, not the
     * machine's: on a machine up only minutes they would start after the
     * files were made, and every segment would read as an earlier run's. */
    s->ns.boot_realtime = (double)(sc->now - SCENE_UPTIME_S);
    const struct proc *init = procs_find(&s->procs, 1);
    s->ns.pid1_ok = init && nsmap_started(&s->ns, init->start_ticks, &s->ns.pid1_start);
    for (size_t i = 0; i < s->mounts.n; i++) {
        struct shm_mount *m = &s->mounts.items[i];
        if (!m->stat_ok || m->size == 0)
            return fail(err, n, "statvfs of mount %s failed", m->path);
        if (!sc->has_statvfs)
            return fail(err, n, "the scene declares no statvfs line");
        m->size = sc->size;
        m->used = sc->used;
        m->avail = sc->avail;
        m->inodes = m->inodes_free = 0; /* the tree's file system's, not the scene's */
    }
    if (!sc->has_meminfo)
        return fail(err, n, "the scene declares no meminfo line");
    s->mem.total = sc->mem_total;
    s->mem.shmem = sc->mem_shmem;
    uid_t me = geteuid();
    for (size_t i = 0; i < s->files.n; i++) {
        struct shm_file *f = &s->files.items[i];
        if (!map_ino(sc, &f->ino))
            return fail(err, n, "listed file %s has an inode no file of the scene has", f->name);
        if (!sc->files_owned && f->uid == me)
            f->uid = sc->owner;
    }
    for (size_t i = 0; !sc->files_owned && i < s->procs.n; i++) {
        struct proc *p = &s->procs.items[i];
        for (size_t k = 0; k < sc->nuids; k++)
            if (sc->uids[k].pid == p->pid && p->uid == me)
                p->uid = sc->uids[k].uid;
    }
    for (size_t i = 0; i < s->holders.n; i++) {
        struct shm_holder *h = &s->holders.items[i];
        if (!map_ino(sc, &h->ino))
            return fail(err, n, "pid %d holds inode %llu, no file of the scene", (int)h->pid,
                        (unsigned long long)h->ino);
        if (!sc->files_owned && h->stat_ok && h->uid == me)
            h->uid = sc->owner;
    }
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(path);
    return unlink(path);
}

void scene_free(struct scene *sc)
{
    if (sc->tree) {
        nftw(sc->tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    free(sc->tree);
    free(sc->proc);
    free(sc->uids);
    free(sc->inos);
    memset(sc, 0, sizeof(*sc));
}

char *scene_json_pretty(const char *json)
{
    struct buf b;
    buf_init(&b);
    int depth = 0;
    bool str = false;
    for (const char *s = json; *s; s++) {
        char c = *s;
        if (str) {
            buf_addc(&b, c);
            if (c == '\\' && s[1])
                buf_addc(&b, *++s);
            else if (c == '"')
                str = false;
            continue;
        }
        switch (c) {
        case '"':
            str = true;
            buf_addc(&b, c);
            break;
        case '{':
        case '[':
            buf_addc(&b, c);
            if (s[1] == (c == '{' ? '}' : ']')) {
                buf_addc(&b, *++s);
                break;
            }
            depth++;
            buf_addc(&b, '\n');
            for (int i = 0; i < depth; i++)
                buf_adds(&b, "  ");
            break;
        case '}':
        case ']':
            depth--;
            buf_addc(&b, '\n');
            for (int i = 0; i < depth; i++)
                buf_adds(&b, "  ");
            buf_addc(&b, c);
            break;
        case ',':
            buf_addc(&b, c);
            buf_addc(&b, '\n');
            for (int i = 0; i < depth; i++)
                buf_adds(&b, "  ");
            break;
        case ':':
            buf_adds(&b, ": ");
            break;
        case '\n':
            break;
        default:
            buf_addc(&b, c);
        }
    }
    buf_addc(&b, '\n');
    return buf_steal(&b);
}
