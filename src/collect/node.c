/* The node view's reading (node.h): mount namespaces, their shm mounts by
 * device, and the container of each. */
#include "collect/node.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/beneath.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/sysroot.h"
#include "util/xalloc.h"

/* Members of a namespace remembered, to try another when one exits. */
enum { NODE_MEMBERS = 4 };

/* One distinct mount namespace whose mountinfo was read before the walk. */
struct node_ns {
    unsigned long mntns;
    pid_t members[NODE_MEMBERS]; /* ascending: the first is usually its init */
    size_t nmembers;
    size_t seen;                 /* its entry in the scan's nsmap, which holds its mountinfo */
    size_t *mounts;              /* indexes into the mount list of the mounts it shows */
    size_t nmounts, mounts_cap;
    size_t ctr;                  /* its container, NODE_HOST when none */
};

/* A shm mount found in some namespace, before its size is read. */
struct cand {
    dev_t dev;
    char *path; /* of a tmpfs: parse_ns takes no other */
    size_t *ns; /* namespaces that show it, in the order met */
    size_t nns, nscap;
    bool propagates; /* tagged shared: or master: in a namespace's mountinfo */
};

struct cands {
    struct cand *items;
    size_t n, cap;
};

static node_member_hook member_hook;

void node_set_test_member_hook(node_member_hook fn)
{
    member_hook = fn;
}

static struct node_ns *find_ns(struct scan_node *n, unsigned long mntns)
{
    for (size_t i = n->nns; i-- > 0;)
        if (n->ns[i].mntns == mntns)
            return &n->ns[i];
    return NULL;
}

/* --mount PATH (or the setting mounts) watches its paths instead of the
 * default ones, in every namespace as in one: clean --all --mount acts on
 * that mount only. */
static bool watched_path(const char *mp, const char *const *extra, size_t nextra, size_t *which)
{
    for (size_t i = 0; i < nextra; i++)
        if (strcmp(mp, extra[i]) == 0)
            return *which = i, true;
    return nextra == 0 && (strcmp(mp, "/dev/shm") == 0 || strcmp(mp, "/run/shm") == 0);
}

/* Adds namespace k to the namespaces of e's mount (by device) in list
 * (made with its path when new). A namespace's mounts are added in one
 * go (parse_ns): k, when the mount has it already, is its last. */
static void cand_add(struct cands *list, const struct mountinfo_entry *e, size_t k)
{
    dev_t dev = makedev(e->major, e->minor);
    struct cand *c = NULL;
    for (size_t j = 0; j < list->n && !c; j++)
        if (list->items[j].dev == dev)
            c = &list->items[j];
    if (!c) {
        c = VEC_PUSH(list->items, list->n, list->cap);
        c->dev = dev;
        c->path = xstrdup(e->mountpoint);
    }
    c->propagates = c->propagates || e->propagates;
    if (!c->nns || c->ns[c->nns - 1] != k)
        *VEC_PUSH(c->ns, c->nns, c->nscap) = k;
}

static void cands_free(struct cands *list)
{
    for (size_t i = 0; i < list->n; i++) {
        free(list->items[i].path);
        free(list->items[i].ns);
    }
    free(list->items);
}

/* The shm mounts that namespace k's mountinfo (held by the nsmap) shows at
 * a watched path, added to shown; the ones it hides (mountinfo_hidden: a
 * tmpfs mounted over another at the same path) to hidden. found[i]:
 * extra[i] is a tmpfs mount here. */
static void parse_ns(const struct scan_node *n, const struct nsmap *map, size_t k,
                     const char *const *extra, size_t nextra, bool *found, struct cands *shown,
                     struct cands *hidden)
{
    const struct mountinfo *mi = &map->ns[n->ns[k].seen].mi;
    for (size_t i = 0; i < mi->n; i++) {
        const struct mountinfo_entry *e = &mi->items[i];
        size_t which = 0;
        /* A path named by --mount too: only a tmpfs is shm. */
        if (!watched_path(e->mountpoint, extra, nextra, &which) || strcmp(e->fstype, "tmpfs") != 0)
            continue;
        if (nextra)
            found[which] = true;
        cand_add(mountinfo_hidden(mi, i) ? hidden : shown, e, k);
    }
}

/* statvfs of the mount through the root of a member of a namespace that
 * shows it, checked to be the same device. 0, -ESRCH when every member
 * of every namespace has exited, or the first other -errno. */
static int stat_through(struct scan_node *n, const struct sysroot *host, const struct cand *c,
                        struct shm_mount *m, struct node_read *via, struct sysroot *keep)
{
    *keep = SYSROOT_NONE;
    int first_err = -ESRCH;
    for (size_t j = 0; j < c->nns; j++) {
        struct node_ns *ns = &n->ns[c->ns[j]];
        for (size_t k = 0; k < ns->nmembers; k++) {
            struct sysroot r;
            int rc = sysroot_open_pid(&r, host, ns->members[k]);
            if (rc == 0) {
                int fd = open_beneath(r.root, c->path, O_RDONLY | O_DIRECTORY);
                struct stat st;
                struct statvfs sv;
                if (fd < 0) /* no such path in a live process's root: a later mount
                             * covers it (as st_dev says where the path is another's) */
                    rc = fd == -ENOENT && sysroot_pid_verify(&r) == 0 ? -ESTALE : fd;
                else if (fstat(fd, &st) != 0 || fstatvfs(fd, &sv) != 0)
                    rc = -errno;
                else if (st.st_dev != c->dev)
                    rc = -ESTALE; /* remounted meanwhile */
                else
                    rc = sysroot_pid_verify(&r); /* -ESRCH once exited; out of fds is no exit */
                if (rc == 0) {
                    via->btime_ok = mounts_btime(fd, &via->btime);
                    close(fd);
                    mounts_set_statvfs(m, &sv);
                    via->pid = ns->members[k];
                    via->pid_start = r.pid_start;
                    sysroot_spare(&r, host); /* the listing goes through it (mount_root) */
                    *keep = r;
                    return 0;
                }
                if (fd >= 0)
                    close(fd);
                sysroot_close(&r);
            }
            if (rc != -ESRCH && rc != -ENOENT && first_err == -ESRCH)
                first_err = rc;
        }
    }
    return first_err;
}

void node_single(struct scan_node *n, const struct mount_list *ml)
{
    n->nmounts = ml->n;
    n->mounts = xcalloc(ml->n, sizeof(*n->mounts));
    for (size_t i = 0; i < ml->n; i++) {
        snprintf(n->mounts[i].id, sizeof(n->mounts[i].id), "%u:%u", major(ml->items[i].dev),
                 minor(ml->items[i].dev));
        n->mounts[i].owner = NODE_HOST;
        n->mounts[i].host_sees = true;
    }
}

/* The host's mount namespace: pid 1's. Where pid 1's links are refused (an
 * init more privileged than this shmwatch, as on some VMs), kthreadd's: a
 * pid 2 with no parent is a kernel thread, and kernel threads live in the
 * initial namespaces. Else the watcher's own. */
static unsigned long host_mntns(int procfd, unsigned long self_mntns)
{
    unsigned long ns = nsmap_link(procfd, "1/ns/mnt");
    if (ns)
        return ns;
    struct procstat st;
    if (procstat_read(procfd, 2, &st) == 0 && st.ppid == 0)
        ns = nsmap_link(procfd, "2/ns/mnt");
    return ns ? ns : self_mntns;
}

/* The first phase over the scan's pid list: each process's mount namespace
 * link (kept in map for the walk) and, through the first member met of
 * each namespace, its mountinfo (kept in map: nsmap_add_read). */
static void read_namespaces(struct scan_node *n, int procfd, const pid_t *pids, size_t npids,
                            struct nsmap *map)
{
    for (size_t i = 0; i < npids; i++) {
        char path[32];
        unsigned long mntns = nsmap_link(procfd, pid_file_name(path, pids[i], "ns/mnt"));
        if (!mntns) {
            if (errno == EACCES || errno == EPERM)
                n->unreadable++;
            continue; /* exited, or a kernel thread's (no link) */
        }
        nsmap_known_add(map, pids[i], mntns);
        struct node_ns *ns = find_ns(n, mntns);
        if (!ns) {
            if (member_hook)
                member_hook(NODE_HOOK_MOUNTINFO, pids[i]);
            struct mountinfo mi;
            int rc = mountinfo_read(procfd, pid_file_name(path, pids[i], "mountinfo"), &mi);
            if (rc < 0 && rc != -EFBIG) {
                mountinfo_free(&mi);
                if (rc != -ENOENT && rc != -ESRCH)
                    n->unreadable++;
                continue; /* exited: the next member reads it */
            }
            if (rc == -EFBIG) /* its mounts up to the cap are shown, and the rest said */
                n->cut++;
            ns = VEC_PUSH(n->ns, n->nns, n->nscap);
            ns->mntns = mntns;
            ns->ctr = NODE_HOST;
            ns->seen = nsmap_add_read(map, mntns, &mi);
        }
        if (ns->nmembers < NODE_MEMBERS)
            ns->members[ns->nmembers++] = pids[i];
    }
}

/* A tmpfs with another mounted over it at the same path, shown at the top
 * by no namespace: its path leads to the one above, so it cannot be listed
 * or sized; said once, with a process to ask findmnt -N. */
static void warn_hidden(const struct scan_node *n, const struct cands *shown,
                        const struct cands *hidden, struct warnings *w)
{
    for (size_t i = 0; i < hidden->n; i++) {
        const struct cand *h = &hidden->items[i];
        bool seen = false;
        for (size_t j = 0; j < shown->n && !seen; j++)
            seen = shown->items[j].dev == h->dev;
        if (!seen)
            warn_add(w,
                     "%s (device %u:%u) is not shown: another mount on the same path hides "
                     "it (findmnt -N %d lists both)",
                     h->path, major(h->dev), minor(h->dev), (int)n->ns[h->ns[0]].members[0]);
    }
}

/* The shm mounts the namespaces show: the host's first, then the others in
 * the order their namespaces were met (by pid: a container's init before
 * its children). */
static void find_mounts(const struct scan_node *n, const struct nsmap *map,
                        const char *const *extra, size_t nextra, struct cands *shown,
                        struct warnings *w)
{
    struct cands hidden = {0};
    bool *found = xcalloc(nextra, sizeof(*found));
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n->nns; k++)
            if ((n->ns[k].mntns == n->host_mntns) == (pass == 0))
                parse_ns(n, map, k, extra, nextra, found, shown, &hidden);
    /* A path named by --mount that is a tmpfs mount in no namespace read
     * (not there, not a mount, another file system): nothing is shown for
     * it, and that is said. Not an error: containers come and go. */
    for (size_t i = 0; i < nextra; i++)
        if (!found[i])
            warn_add(w, "--mount %s: no tmpfs is mounted there in any mount namespace read",
                     extra[i]);
    free(found);
    warn_hidden(n, shown, &hidden, w);
    cands_free(&hidden);
}

/* The size of mount c through a process that sees it: appended to ml with
 * the root it was read through, or dropped when every process that saw it
 * has exited. */
static void read_mount(struct scan_node *n, const struct sysroot *sys, struct cand *c,
                       unsigned long self_mntns, struct mount_list *ml, struct warnings *w)
{
    struct shm_mount m = {0};
    struct node_read via = {0};
    struct sysroot keep;
    int rc = stat_through(n, sys, c, &m, &via, &keep);
    if (rc == -ESRCH) {
        warn_add(w, "%s (device %u:%u) dropped: every process that saw it has exited", c->path,
                 major(c->dev), minor(c->dev));
        return;
    }
    struct shm_mount *x = VEC_PUSH(ml->items, ml->n, ml->cap);
    *x = m;
    x->path = c->path;
    c->path = NULL;
    x->fstype = xstrdup("tmpfs");
    x->dev = c->dev;
    if (rc < 0) {
        x->stat_err = -rc;
        via.pid = keep.pid = n->ns[c->ns[0]].members[0];
        keep.err = -ESRCH; /* never listed, refreshed or acted through */
    }
    /* Listed below the root of via.pid, or below the watcher's own root
     * when its namespace shows the mount. */
    for (size_t j = 0; j < c->nns; j++) {
        struct node_ns *ns = &n->ns[c->ns[j]];
        via.own = via.own || ns->mntns == self_mntns;
        *VEC_PUSH(ns->mounts, ns->nmounts, ns->mounts_cap) = ml->n - 1;
    }
    via.propagates = c->propagates;
    n->read = xrealloc(n->read, ml->n * sizeof(*n->read));
    n->read[ml->n - 1] = via;
    n->roots = xrealloc(n->roots, ml->n * sizeof(*n->roots));
    n->roots[ml->n - 1] = keep;
    n->nroots = ml->n;
}

/* What could not be read of the namespaces, said once each. */
static void warn_unread(const struct scan_node *n, struct warnings *w)
{
    if (n->cut)
        warn_add(w,
                 "the mountinfo of %zu mount %s is longer than %u MiB: the shm mounts listed "
                 "past that are not shown",
                 n->cut, n->cut == 1 ? "namespace" : "namespaces", (unsigned)READ_TEXT_MAX >> 20);
    if (n->unreadable) /* as root, as holders_warn_denied: more privileged than this root */
        warn_add(w, "the mount namespaces of %zu %s could not be read%s", n->unreadable,
                 n->unreadable == 1 ? "process" : "processes",
                 geteuid() != 0 ? " (not permitted): their shm mounts are not shown (run as root "
                                  "to see every container)"
                                : ", even as root (not permitted: more privileged than this "
                                  "shmwatch): their shm mounts are not shown");
}

void node_discover(struct scan_node *n, const struct sysroot *sys, const pid_t *pids, size_t npids,
                   struct nsmap *map, const char *const *extra, size_t nextra,
                   struct mount_list *ml, struct warnings *w)
{
    n->all = true;
    unsigned long self_mntns = nsmap_link(sys->proc, "self/ns/mnt");
    n->host_mntns = host_mntns(sys->proc, self_mntns);
    read_namespaces(n, sys->proc, pids, npids, map);
    struct cands shown = {0};
    find_mounts(n, map, extra, nextra, &shown, w);
    for (size_t i = 0; i < shown.n; i++)
        read_mount(n, sys, &shown.items[i], self_mntns, ml, w);
    cands_free(&shown);
    warn_unread(n, w);
}

void node_facts(const struct scan_node *n, struct nsmap *map)
{
    for (size_t i = 0; i < map->ndevs; i++) {
        map->reach[i].propagates = n->read[i].propagates;
        map->reach[i].btime_ok = n->read[i].btime_ok;
        map->reach[i].btime = n->read[i].btime;
    }
}

/* The root mount i was read through: sys itself when the watcher's own
 * namespace shows it, else its pinned view (sysroot_use: re-opened into
 * *tmp when kept closed), or -ESRCH when that process has exited or its
 * pid is another's. */
static int mount_root(const struct scan_node *n, const struct sysroot *sys, size_t i,
                      struct sysroot *tmp, const struct sysroot **out)
{
    *tmp = SYSROOT_NONE;
    *out = sys;
    return n->read[i].own ? 0 : sysroot_use(&n->roots[i], tmp, out);
}

void node_files_collect(const struct scan_node *n, const struct sysroot *sys,
                        struct mount_list *ml, struct file_list *out, struct warnings *w)
{
    for (size_t i = 0; i < ml->n; i++) {
        /* No process that sees it reached it (its path may lead to another
         * file system: covered by a later mount): nothing is listed through
         * that path; the scan says why once. */
        if (!ml->items[i].stat_ok)
            continue;
        struct sysroot tmp;
        const struct sysroot *r;
        int rc = mount_root(n, sys, i, &tmp, &r);
        if (rc < 0) {
            bool gone = rc == -ESRCH || rc == -ENOENT;
            warn_add(w, "%s (device %u:%u): not listed, its process %d %s%s", ml->items[i].path,
                     major(ml->items[i].dev), minor(ml->items[i].dev), (int)n->read[i].pid,
                     gone ? "has exited" : "cannot be read: ", gone ? "" : strerror(-rc));
            continue;
        }
        /* The one mount as a list of one: its entries come back as mount 0. */
        struct mount_list one = {.items = &ml->items[i], .n = 1, .cap = 1};
        size_t from = out->n, dirs_from = out->ndirs;
        files_collect(r, &one, out, w);
        for (size_t k = from; k < out->n; k++)
            out->items[k].mount = i;
        for (size_t k = dirs_from; k < out->ndirs; k++)
            out->dirs[k].mount = i;
        sysroot_close(&tmp);
    }
}

void node_files_finish(const struct scan_node *n, const struct sysroot *sys,
                       const struct mount_list *ml, struct file_list *fl,
                       const struct holder_list *hl)
{
    /* The holders' facts for every mount at once (one pass over the
     * holders, not one per mount); then each mount's entries, which
     * node_files_collect left together in mount order, on their own
     * (files_stat_rest reaches a mount by its index in the list it is
     * given), moved down over the entries dropped before them. */
    files_take_held(fl, hl);
    size_t kept = 0;
    for (size_t from = 0, to; from < fl->n; from = to) {
        size_t i = fl->items[from].mount;
        for (to = from; to < fl->n && fl->items[to].mount == i; to++)
            fl->items[to].mount = 0;
        struct file_list part = {.items = &fl->items[from], .n = to - from};
        struct mount_list one = {.items = &ml->items[i], .n = 1, .cap = 1};
        struct sysroot tmp;
        const struct sysroot *r;
        int rc = mount_root(n, sys, i, &tmp, &r);
        if (rc == 0)
            files_stat_rest(r, &one, &part);
        sysroot_close(&tmp);
        /* Its root gone, what no holder stat'ed cannot be read. */
        for (size_t k = 0; k < part.n; k++)
            if (rc == 0 || !part.items[k].stat_pending) {
                fl->items[kept] = part.items[k];
                fl->items[kept++].mount = i;
            }
    }
    fl->n = kept;
    files_trim(fl);
}

void node_roots_close(struct scan_node *n)
{
    for (size_t i = 0; i < n->nroots; i++)
        sysroot_close(&n->roots[i]);
    free(n->roots);
    n->roots = NULL;
    n->nroots = 0;
}

void node_gauges_update(struct node_gauge **g, size_t *ng, const struct node_read *read,
                        const struct sysroot *sys, const struct mount_list *ml)
{
    struct node_gauge *old = *g;
    struct node_gauge *now = xcalloc(ml->n, sizeof(*now));
    for (size_t i = 0; i < ml->n; i++) {
        struct node_gauge *x = &now[i];
        x->view = SYSROOT_NONE;
        x->dev = ml->items[i].dev;
        x->own = read[i].own;
        for (size_t k = 0; !x->own && k < *ng && !x->view.pid; k++)
            if (old[k].view.pid == read[i].pid && old[k].view.pid_start == read[i].pid_start &&
                old[k].dev == x->dev && !old[k].view.err) {
                x->view = old[k].view;
                old[k].view = SYSROOT_NONE;
            }
        if (x->own || x->view.pid)
            continue;
        if (!read[i].pid_start) { /* never read through a process */
            x->view.pid = read[i].pid;
            x->view.err = -ESRCH;
        } else if (sysroot_pin(&x->view, sys, read[i].pid, read[i].pid_start) == 0) {
            sysroot_spare(&x->view, sys);
        }
    }
    node_gauges_free(g, ng);
    *g = now;
    *ng = ml->n;
}

void node_gauges_refresh(const struct node_gauge *g, const struct sysroot *sys,
                         struct mount_list *ml)
{
    for (size_t i = 0; i < ml->n; i++) {
        /* Below the root it was read through, and that process checked
         * again after: its pid is not another's. */
        struct mount_list one = {.items = &ml->items[i], .n = 1, .cap = 1};
        struct sysroot tmp;
        const struct sysroot *r;
        int rc = sysroot_use(g[i].own ? sys : &g[i].view, &tmp, &r);
        if (rc == 0) {
            mounts_refresh(r, &one);
            rc = sysroot_pid_verify(r);
        }
        sysroot_close(&tmp);
        if (rc < 0)
            mounts_set_unknown(&ml->items[i], -rc);
    }
}

void node_gauges_free(struct node_gauge **g, size_t *ng)
{
    for (size_t i = 0; i < *ng; i++)
        sysroot_close(&(*g)[i].view);
    free(*g);
    *g = NULL;
    *ng = 0;
}

/* The container of namespace x (a new entry with its memory cgroup, or
 * the entry of the same container: containers_same): the first member
 * whose cgroup names one. A member whose cgroup names none decides only
 * when no member names one: a process entering a container's namespace
 * from outside (runc exec, before it moves the process into the
 * container's cgroup; nsenter) is a member too, and after the pids wrap it
 * may be the lowest. */
static void ns_container(struct scan_node *n, struct node_ns *x, const struct sysroot *sys,
                         const struct mountinfo *self_mi, struct cgroup_memo *memo,
                         struct warnings *w)
{
    bool own_mount = false; /* a mount the host's namespace does not show */
    for (size_t i = 0; i < x->nmounts && !own_mount; i++)
        own_mount = !n->mounts[x->mounts[i]].host_sees;
    /* The first member whose cgroup names a container, and the first read
     * in no container (whose info is empty: containers.h); each with its
     * cgroup file, which names the container and its memory cgroup: read
     * once for both. */
    struct container_info ci = {0};
    pid_t pid = 0, none_pid = 0;
    struct buf cg, none_cg;
    buf_init(&cg);
    buf_init(&none_cg);
    for (size_t k = 0; k < x->nmembers && !pid; k++) {
        if (member_hook)
            member_hook(NODE_HOOK_CONTAINER, x->members[k]);
        int piddir = pid_dir_open(sys->proc, x->members[k]);
        if (piddir < 0)
            continue;
        if (read_file_at(piddir, "cgroup", &cg, READ_SMALL_MAX) < 0) {
            close(piddir);
            continue; /* gone: try the next member */
        }
        containers_collect_text(sys->host, piddir, cg.data, &ci);
        close(piddir);
        if (ci.runtime != RUNTIME_NONE) {
            pid = x->members[k];
        } else if (!none_pid) {
            none_pid = x->members[k];
            none_cg = cg; /* none_cg was empty */
            buf_init(&cg);
        }
    }
    const char *text = cg.data; /* the cgroup file of the member pid */
    if (pid) {
        for (size_t c = 0; c < n->nctrs && x->ctr == NODE_HOST; c++)
            if (containers_same(&n->ctrs[c].info, &ci))
                x->ctr = c;
    } else if (none_pid && own_mount) {
        /* No member names a container: a namespace with a mount of its
         * own is a namespace of no container (a private namespace on the
         * host's mounts is the host's). */
        pid = none_pid;
        text = none_cg.data;
    } else if (!none_pid) {
        /* Every member exited before its container could be read: its own
         * mounts stay listed (their files were read while it lived), said
         * to be of no known container rather than silently the host's. */
        for (size_t i = 0; i < x->nmounts; i++)
            if (!n->mounts[x->mounts[i]].host_sees)
                warn_add(w,
                         "the mount of device %s: every process of its mount namespace exited "
                         "while it was read; its container is unknown",
                         n->mounts[x->mounts[i]].id);
    }
    if (pid && x->ctr == NODE_HOST) { /* a new entry, which takes ci */
        struct node_ctr *c = VEC_PUSH(n->ctrs, n->nctrs, n->ctrs_cap);
        c->info = ci;
        memset(&ci, 0, sizeof(ci));
        c->pid = pid;
        c->mntns = x->mntns;
        cgroup_collect_text(sys, pid, text, self_mi, &c->cgroup, w, memo);
        x->ctr = n->nctrs - 1;
    }
    containers_free(&ci);
    buf_free(&cg);
    buf_free(&none_cg);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

void node_assign(struct scan_node *n, const struct sysroot *sys, const struct mountinfo *self_mi,
                 const struct mount_list *ml, const struct proc_list *pl, struct warnings *w)
{
    node_single(n, ml);
    const struct node_ns *host = find_ns(n, n->host_mntns);
    for (size_t i = 0; i < ml->n; i++)
        n->mounts[i].host_sees = false;
    for (size_t i = 0; host && i < host->nmounts; i++)
        n->mounts[host->mounts[i]].host_sees = true;
    struct cgroup_memo memo = {0};
    for (size_t k = 0; k < n->nns; k++)
        if (&n->ns[k] != host && n->ns[k].nmounts)
            ns_container(n, &n->ns[k], sys, self_mi, &memo, w);
    cgroup_memo_free(&memo);
    size_t *cap = xcalloc(ml->n, sizeof(*cap));
    for (size_t k = 0; k < n->nns; k++) {
        const struct node_ns *x = &n->ns[k];
        if (x->ctr == NODE_HOST)
            continue;
        for (size_t i = 0; i < x->nmounts; i++) {
            struct node_mount *m = &n->mounts[x->mounts[i]];
            bool known = false;
            for (size_t j = 0; j < m->nctrs && !known; j++)
                known = m->ctrs[j] == x->ctr;
            if (!known)
                *VEC_PUSH(m->ctrs, m->nctrs, cap[x->mounts[i]]) = x->ctr;
        }
    }
    free(cap);
    for (size_t i = 0; i < ml->n; i++) {
        struct node_mount *m = &n->mounts[i];
        if (m->nctrs > 1)
            qsort(m->ctrs, m->nctrs, sizeof(*m->ctrs), cmp_size);
        m->owner = node_owner_of(n, ml, m);
    }
    n->nprocs = pl->n;
    n->proc_ctr = xmalloc(pl->n * sizeof(*n->proc_ctr));
    const struct node_ns *last = NULL;
    for (size_t i = 0; i < pl->n; i++) {
        unsigned long mntns = pl->items[i].mntns;
        if (mntns && (!last || last->mntns != mntns))
            last = find_ns(n, mntns);
        n->proc_ctr[i] = mntns && last && last->mntns == mntns ? last->ctr : NODE_HOST;
    }
    /* A zombie has no namespaces left to read: it belongs where its parent,
     * which has yet to reap it, is (a container's main's dead worker is
     * that container's, not the host's). */
    for (size_t i = 0; i < pl->n; i++) {
        const struct proc *p = &pl->items[i];
        if (p->mntns || p->state != 'Z')
            continue;
        const struct proc *parent = procs_find(pl, p->ppid);
        if (parent)
            n->proc_ctr[i] = n->proc_ctr[parent - pl->items];
    }
}

/* The shared memory charged to container c's cgroup less the used bytes of
 * the mounts that c alone sees (and the host does not): what it may have
 * written into mounts it shares. */
static uint64_t shared_shmem(const struct scan_node *n, const struct mount_list *ml, size_t c)
{
    uint64_t own = 0;
    for (size_t i = 0; i < ml->n && i < n->nmounts; i++) {
        const struct node_mount *nm = &n->mounts[i];
        if (ml->items[i].stat_ok && !nm->host_sees && nm->nctrs == 1 && nm->ctrs[0] == c)
            own += ml->items[i].used;
    }
    uint64_t shmem = n->ctrs[c].cgroup.shmem;
    return shmem > own ? shmem - own : 0;
}

size_t node_owner_of(const struct scan_node *n, const struct mount_list *ml,
                     const struct node_mount *m)
{
    if (m->host_sees || !m->nctrs)
        return NODE_HOST;
    size_t owner = m->ctrs[0];
    uint64_t most = shared_shmem(n, ml, owner);
    for (size_t k = 1; k < m->nctrs; k++) {
        const struct cgroup_info *a = &n->ctrs[m->ctrs[k]].cgroup, *b = &n->ctrs[owner].cgroup;
        uint64_t shmem = shared_shmem(n, ml, m->ctrs[k]);
        if (a->present && (!b->present || shmem > most)) {
            owner = m->ctrs[k];
            most = shmem;
        }
    }
    return owner;
}

size_t node_proc_ctr(const struct scan_node *n, size_t proc_index)
{
    return n->proc_ctr && proc_index < n->nprocs ? n->proc_ctr[proc_index] : NODE_HOST;
}

size_t node_owner_index(const struct scan_node *n, size_t mount)
{
    return mount < n->nmounts ? n->mounts[mount].owner : NODE_HOST;
}

const struct node_ctr *node_owner(const struct scan_node *n, size_t mount)
{
    size_t k = node_owner_index(n, mount);
    return k == NODE_HOST ? NULL : &n->ctrs[k];
}

void node_free(struct scan_node *n)
{
    for (size_t i = 0; i < n->nctrs; i++) {
        containers_free(&n->ctrs[i].info);
        cgroup_free(&n->ctrs[i].cgroup);
    }
    free(n->ctrs);
    for (size_t i = 0; i < n->nmounts; i++)
        free(n->mounts[i].ctrs);
    free(n->mounts);
    free(n->proc_ctr);
    node_roots_close(n);
    free(n->read);
    for (size_t k = 0; k < n->nns; k++)
        free(n->ns[k].mounts);
    free(n->ns);
    memset(n, 0, sizeof(*n));
}
