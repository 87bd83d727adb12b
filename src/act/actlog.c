#include "act/actlog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/safefile.h"
#include "util/xalloc.h"

char *actlog_default_path(const char *xdg_state_home, const char *home)
{
    if (xdg_state_home && xdg_state_home[0] == '/')
        return str_printf("%s/shmwatch/actions.log", xdg_state_home);
    if (home && home[0] == '/')
        return str_printf("%s/.local/state/shmwatch/actions.log", home);
    return NULL;
}

int actlog_open(struct actlog *l, const char *path)
{
    memset(l, 0, sizeof(*l));
    l->fd = -1;
    if (path) {
        l->path = xstrdup(path);
    } else {
        l->path = actlog_default_path(getenv("XDG_STATE_HOME"), getenv("HOME"));
        if (!l->path) {
            l->err = ENOENT;
            return -ENOENT;
        }
        int rc = safefile_make_parents(l->path);
        if (rc < 0) {
            l->err = -rc;
            return rc;
        }
    }
    /* Never through a planted link, never into another user's file. */
    int fd = safefile_append(l->path, 0600);
    if (fd < 0) {
        l->err = -fd;
        return fd;
    }
    l->fd = fd;
    return 0;
}

static void field(struct buf *out, const char *s)
{
    buf_addc(out, '\t');
    esc_term(out, s ? s : "-", 0);
}

void actlog_format(struct buf *out, const struct actlog_entry *e)
{
    time_t t = e->time ? e->time : time(NULL);
    struct tm tm;
    char stamp[40];
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", &tm);
    buf_adds(out, stamp);
    field(out, e->action);
    field(out, e->target);
    if (e->owner >= 0)
        buf_printf(out, "\towner=%lld", e->owner);
    else
        buf_adds(out, "\towner=?");
    buf_printf(out, "\tbytes=%llu", (unsigned long long)e->bytes);
    field(out, e->result);
    field(out, e->detail);
    if (e->container) { /* added last: the fields before keep their places */
        buf_adds(out, "\tcontainer=");
        esc_term(out, e->container, 0);
    }
}

void actlog_write(struct actlog *l, const struct actlog_entry *e)
{
    struct buf line;
    buf_init(&line);
    actlog_format(&line, e);
    if (l->fd >= 0) {
        buf_addc(&line, '\n');
        ssize_t n;
        do
            n = write(l->fd, line.data, line.len); /* one append: lines never interleave */
        while (n < 0 && errno == EINTR);
        if (n < 0)
            l->err = errno;
        line.data[--line.len] = '\0';
    }
    free(l->recent[l->head]);
    l->recent[l->head] = buf_steal(&line);
    l->head = (l->head + 1) % ACTLOG_RECENT;
    if (l->nrecent < ACTLOG_RECENT)
        l->nrecent++;
}

const char *actlog_recent(const struct actlog *l, size_t i)
{
    if (i >= l->nrecent)
        return NULL;
    return l->recent[(l->head + ACTLOG_RECENT - 1 - i) % ACTLOG_RECENT];
}

void actlog_close(struct actlog *l)
{
    if (l->fd >= 0)
        close(l->fd);
    for (size_t i = 0; i < ACTLOG_RECENT; i++)
        free(l->recent[i]);
    free(l->path);
    memset(l, 0, sizeof(*l));
    l->fd = -1;
}
