/* inotify on each shm mount's directory: IN_CREATE, IN_DELETE,
 * IN_MOVED_FROM, IN_MOVED_TO counted per mount. A watch is kept while its
 * mount is in the scans; the kernel drops it itself (IN_IGNORED) when the
 * mount goes. */
#include "collect/shmnotify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "collect/scan.h"
#include "util/xalloc.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)

int shmnotify_init(struct shmnotify *sn)
{
    memset(sn, 0, sizeof(*sn));
    sn->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    return sn->fd < 0 ? -errno : 0;
}

static struct shmnotify_watch *find_id(struct shmnotify *sn, const char *id)
{
    for (size_t i = 0; i < sn->n; i++)
        if (strcmp(sn->items[i].id, id) == 0)
            return &sn->items[i];
    return NULL;
}

static struct shmnotify_watch *find_wd(struct shmnotify *sn, int wd)
{
    for (size_t i = 0; i < sn->n; i++)
        if (sn->items[i].wd == wd)
            return &sn->items[i];
    return NULL;
}

/* Where mount i of s is reached from here: its path in the watcher's own
 * mount namespace, else through the root of the process it was read
 * through (--all) or of the watched process (--pid). */
static void mount_path(const struct scan *s, const struct sysroot *sys, size_t i, char *buf,
                       size_t n)
{
    const char *path = s->mounts.items[i].path;
    const struct node_read *rd = s->node.read ? &s->node.read[i] : NULL; /* --all only */
    if (s->node.all && rd && !rd->own && rd->pid > 0)
        snprintf(buf, n, "/proc/%d/root%s", (int)rd->pid, path);
    else if (!s->node.all && sys->pid > 0)
        snprintf(buf, n, "/proc/%d/root%s", (int)sys->pid, path);
    else
        snprintf(buf, n, "%s", path);
}

void shmnotify_follow(struct shmnotify *sn, const struct scan *s, const struct sysroot *sys)
{
    if (sn->fd < 0)
        return;
    for (size_t k = 0; k < sn->n; k++)
        sn->items[k].seen = false;
    for (size_t i = 0; i < s->mounts.n && i < s->node.nmounts; i++) {
        const char *id = s->node.mounts[i].id;
        struct shmnotify_watch *w = find_id(sn, id);
        if (!w) {
            w = VEC_PUSH(sn->items, sn->n, sn->cap);
            snprintf(w->id, sizeof(w->id), "%s", id);
            w->wd = -1;
        }
        w->seen = true;
        if (w->wd >= 0)
            continue;
        /* A mount not watched yet, or whose watch could not be made or went
         * with an earlier mount of the same id: tried at each scan. */
        char path[4096];
        mount_path(s, sys, i, path, sizeof(path));
        w->wd = inotify_add_watch(sn->fd, path, WATCH_MASK);
        /* Two paths to one directory give one wd: it counts for the mount
         * that has it already (a failed watch, -1, stays -1). */
        for (size_t k = 0; k < sn->n; k++)
            if (&sn->items[k] != w && sn->items[k].wd == w->wd)
                w->wd = -1;
    }
    /* Mounts the scan no longer shows: their watches go. */
    size_t keep = 0;
    for (size_t k = 0; k < sn->n; k++) {
        if (!sn->items[k].seen) {
            if (sn->items[k].wd >= 0)
                inotify_rm_watch(sn->fd, sn->items[k].wd);
            continue;
        }
        sn->items[keep++] = sn->items[k];
    }
    sn->n = keep;
}

void shmnotify_read(struct shmnotify *sn)
{
    if (sn->fd < 0)
        return;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t got = read(sn->fd, buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return;
        for (char *p = buf; p < buf + got;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof(*ev) + ev->len;
            if (ev->mask & IN_Q_OVERFLOW)
                continue; /* events were lost; this one names no watch (its wd is -1) */
            struct shmnotify_watch *w = find_wd(sn, ev->wd);
            if (!w)
                continue;
            if (ev->mask & IN_IGNORED) { /* the directory or its mount went */
                w->wd = -1;
                continue;
            }
            if (ev->mask & (IN_CREATE | IN_MOVED_TO))
                w->created++;
            if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
                w->removed++;
        }
    }
}

bool shmnotify_take(struct shmnotify *sn, const char *id, uint64_t *created, uint64_t *removed)
{
    struct shmnotify_watch *w = find_id(sn, id);
    if (!w)
        return false;
    *created = w->created;
    *removed = w->removed;
    w->created = w->removed = 0;
    return true;
}

void shmnotify_free(struct shmnotify *sn)
{
    if (sn->fd >= 0)
        close(sn->fd);
    free(sn->items);
    memset(sn, 0, sizeof(*sn));
    sn->fd = -1;
}
