/* A container's view for actions (actns.h). */
#include "act/actns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/containers.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/xalloc.h"

/* The inode of pid's mount namespace ("mnt:[4026531840]"), 0 when unknown. */
static unsigned long read_mntns(int proc, pid_t pid)
{
    char name[48], link[64];
    snprintf(name, sizeof(name), "%d/ns/mnt", (int)pid);
    ssize_t n = readlinkat(proc, name, link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    unsigned long ino = 0;
    return sscanf(link, "mnt:[%lu]", &ino) == 1 ? ino : 0;
}

static char *make_label(const struct sysroot *r)
{
    char dir[32];
    snprintf(dir, sizeof(dir), "%d", (int)r->pid);
    int piddir = openat(r->proc, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct container_info ci;
    memset(&ci, 0, sizeof(ci));
    char *label = NULL;
    if (piddir >= 0 && containers_collect(r->host, piddir, &ci) == 0 &&
        ci.runtime != RUNTIME_NONE) {
        if (ci.name && ci.name[0])
            label = xstrdup(ci.name);
        else if (ci.id && ci.id[0])
            label = xstrndup(ci.id, 12);
    }
    containers_free(&ci);
    if (piddir >= 0)
        close(piddir);
    return label ? label : str_printf("pid %d", (int)r->pid);
}

int actns_open(struct actns *ns, const struct sysroot *host, pid_t pid, unsigned long long start)
{
    memset(ns, 0, sizeof(*ns));
    int rc = sysroot_open_pid(&ns->root, host, pid);
    if (rc < 0)
        return rc;
    if (start && ns->root.pid_start != start) {
        sysroot_close(&ns->root);
        return -ESRCH;
    }
    ns->mntns = read_mntns(ns->root.proc, pid);
    ns->label = make_label(&ns->root);
    return 0;
}

bool actns_alive(const struct actns *ns)
{
    return sysroot_pid_alive(&ns->root);
}

int actns_opendir(const struct actns *ns, const char *path)
{
    if (path[0] != '/')
        return -EINVAL;
    int dir = fcntl(ns->root.root, F_DUPFD_CLOEXEC, 0);
    if (dir < 0)
        return -errno;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
            close(dir);
            return -EINVAL;
        }
        char *comp = xstrndup(p, len);
        int sub = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        free(comp);
        close(dir);
        if (sub < 0)
            return -err;
        dir = sub;
        p += len;
    }
    return dir;
}

char *actns_where(const struct actns *ns)
{
    struct buf b;
    buf_init(&b);
    buf_adds(&b, "in ");
    esc_term(&b, ns->label ? ns->label : "?", 0);
    return buf_steal(&b);
}

void actns_close(struct actns *ns)
{
    sysroot_close(&ns->root);
    free(ns->label);
    ns->label = NULL;
    ns->mntns = 0;
}
