/* A container's view for actions (actns.h). */
#include "act/actns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/containers.h"
#include "collect/nsmap.h"
#include "util/beneath.h"
#include "util/buf.h"
#include "util/ctrref.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* The uid_map of pid's user namespace into ns (actns_maps_uid). A map that
 * cannot be read or parsed maps everything only when pid shares the
 * watcher's user namespace; else nothing. */
static void read_uids(struct actns *ns, int proc, pid_t pid)
{
    char name[32];
    unsigned long own = nsmap_link(proc, "self/ns/user");
    if (own && own == nsmap_link(proc, pid_file_name(name, pid, "ns/user"))) {
        ns->all_uids = true; /* the watcher's own user namespace */
        return;
    }
    struct buf text;
    buf_init(&text);
    if (read_file_at(proc, pid_file_name(name, pid, "uid_map"), &text, READ_SMALL_MAX) == 0) {
        char *cur = text.data, *line;
        size_t cap = 0;
        while ((line = next_line(&cur))) {
            unsigned long long in, out, count;
            if (sscanf(line, "%llu %llu %llu", &in, &out, &count) != 3)
                continue;
            struct actns_uids *u = VEC_PUSH(ns->uids, ns->nuids, cap);
            u->start = out;
            u->count = count;
        }
    }
    buf_free(&text);
}

bool actns_maps_uid(const struct actns *ns, uid_t owner)
{
    if (ns->all_uids)
        return true;
    for (size_t i = 0; i < ns->nuids; i++)
        if ((unsigned long long)owner >= ns->uids[i].start &&
            (unsigned long long)owner - ns->uids[i].start < ns->uids[i].count)
            return true;
    return false;
}

char *actns_label(const struct container_info *ci, pid_t pid)
{
    bool in_ctr = ci && ci->runtime != RUNTIME_NONE;
    bool named = in_ctr && ci->name && ci->name[0], has_id = in_ctr && ci->id && ci->id[0];
    if (!named && !has_id)
        return str_printf("pid %d", (int)pid);
    return container_label(ci->containerd_namespace, named ? ci->name : NULL,
                           has_id ? ci->id : NULL);
}

static char *lookup_label(const struct sysroot *r)
{
    int piddir = pid_dir_open(r->proc, r->pid);
    struct container_info ci;
    memset(&ci, 0, sizeof(ci));
    bool found = piddir >= 0 && containers_collect(r->host, piddir, &ci) == 0;
    char *label = actns_label(found ? &ci : NULL, r->pid);
    containers_free(&ci);
    if (piddir >= 0)
        close(piddir);
    return label;
}

int actns_open(struct actns *ns, const struct sysroot *host, pid_t pid, unsigned long long start,
               const char *label)
{
    memset(ns, 0, sizeof(*ns));
    int rc = sysroot_pin(&ns->root, host, pid, start);
    if (rc < 0) { /* closed: named, never alive */
        ns->label = label ? xstrdup(label) : str_printf("pid %d", (int)pid);
        return rc;
    }
    char link[32];
    ns->mntns = nsmap_link(ns->root.proc, pid_file_name(link, pid, "ns/mnt"));
    read_uids(ns, ns->root.proc, pid);
    ns->label = label ? xstrdup(label) : lookup_label(&ns->root);
    return 0;
}

int actns_check(const struct actns *ns)
{
    return sysroot_pid_check(&ns->root);
}

bool actns_alive(const struct actns *ns)
{
    return actns_check(ns) == 1;
}

int actns_opendir(const struct actns *ns, const char *path)
{
    if (path[0] != '/')
        return -EINVAL;
    struct sysroot tmp;
    const struct sysroot *r;
    int fd = sysroot_use(&ns->root, &tmp, &r);
    if (fd == 0) {
        fd = open_beneath(r->root, path, O_RDONLY | O_DIRECTORY);
        /* A view re-opened for this: its holder still the pinned one once
         * the directory is open, so the root walked was that process's. */
        int err = fd >= 0 && r == &tmp ? sysroot_pid_verify(&tmp) : 0;
        if (err < 0) {
            close(fd);
            fd = err;
        }
    }
    sysroot_close(&tmp);
    return fd;
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
    free(ns->uids);
    *ns = (struct actns){.root = ns->root}; /* the root as sysroot_close left it */
}
