#include "act/shmmgr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/walk.h"
#include "util/fileio.h"
#include "util/xalloc.h"

bool shmmgr_socket_inode(const char *link, unsigned long *ino)
{
    if (strncmp(link, "socket:[", 8) != 0)
        return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(link + 8, &end, 10);
    if (errno || end == link + 8 || strcmp(end, "]") != 0)
        return false;
    *ino = v;
    return true;
}

struct inos {
    unsigned long *v;
    size_t n, cap;
};

/* Where ino is in s, or -1. */
static long index_of(const struct inos *s, unsigned long ino)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == ino)
            return (long)i;
    return -1;
}

static void add_ino(struct inos *s, unsigned long ino)
{
    if (index_of(s, ino) < 0)
        *VEC_PUSH(s->v, s->n, s->cap) = ino;
}

/* Reads the socket fds of the process dir piddir: adds each one's inode to
 * mine, or, with mine NULL, looks for those of peers and marks each one
 * found in seen (a flag per peer). Returns 1 when one of peers is found,
 * else 0, or -errno. */
static int each_socket(int piddir, struct inos *mine, const struct inos *peers, bool *seen)
{
    int fddir = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fddir < 0)
        return -errno;
    DIR *d = fdopendir(fddir);
    if (!d) {
        int err = errno;
        close(fddir);
        return -err;
    }
    struct dirent *de;
    char link[64];
    int hit = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        ssize_t n = readlinkat(fddir, de->d_name, link, sizeof(link) - 1);
        unsigned long ino;
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (!shmmgr_socket_inode(link, &ino))
            continue;
        long at = mine ? -1 : index_of(peers, ino);
        if (mine)
            add_ino(mine, ino);
        else if (at >= 0) {
            seen[at] = true;
            hit = 1;
        }
    }
    closedir(d);
    return hit;
}

/* A sock_diag socket in the network namespace of process mgr: unix sockets
 * are listed per namespace, and a manager in a container with one of its
 * own has its connections there. Entering it takes CAP_SYS_ADMIN; the
 * calling thread returns to its own at once. Returns the socket or -errno. */
static int diag_socket(int proc, pid_t mgr)
{
    char path[32];
    snprintf(path, sizeof(path), "%d/ns/net", (int)mgr);
    int theirs = openat(proc, path, O_RDONLY | O_CLOEXEC);
    int ours = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    struct stat a, b;
    bool entered = false;
    int fd = -1;
    if (theirs >= 0 && ours >= 0 && fstat(theirs, &a) == 0 && fstat(ours, &b) == 0 &&
        ((a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
         (entered = setns(theirs, CLONE_NEWNET) == 0)))
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    int err = errno;
    if (entered && setns(ours, CLONE_NEWNET) != 0)
        abort(); /* cannot happen (it was this thread's a moment ago); never go on there */
    if (theirs >= 0)
        close(theirs);
    if (ours >= 0)
        close(ours);
    return fd >= 0 ? fd : -err;
}

/* The peers of the sockets in mine, from one sock_diag dump of every unix
 * socket on diag: only those still in the dump, that is still open in some
 * process (a client's socket that is closed leaves the table, though the
 * manager's end still names it). Returns 0 or -errno. */
static int peers_of(int fd, const struct inos *mine, struct inos *peers)
{
    struct {
        struct nlmsghdr nlh;
        struct unix_diag_req req;
    } msg = {
        .nlh = {.nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .req = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER},
    };
    struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
    if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
        return -errno;
    static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
    struct inos named = {0}, listed = {0};
    int rc = 0;
    for (bool done = false; !done;) {
        ssize_t len = recv(fd, buf, sizeof(buf), 0);
        if (len < 0 && errno == EINTR)
            continue;
        if (len <= 0) {
            rc = len < 0 ? -errno : -EIO;
            break;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
             h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_type == NLMSG_DONE) {
                done = true;
                break;
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                rc = e->error ? e->error : -EIO;
                done = true;
                break;
            }
            const struct unix_diag_msg *d = NLMSG_DATA(h);
            *VEC_PUSH(listed.v, listed.n, listed.cap) = d->udiag_ino;
            if (index_of(mine, d->udiag_ino) < 0)
                continue;
            int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*d)));
            for (struct rtattr *a = (struct rtattr *)(d + 1); RTA_OK(a, alen);
                 a = RTA_NEXT(a, alen))
                if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
                    uint32_t peer;
                    memcpy(&peer, RTA_DATA(a), sizeof(peer));
                    if (peer)
                        add_ino(&named, peer);
                }
        }
    }
    for (size_t i = 0; i < named.n; i++)
        if (index_of(&listed, named.v[i]) >= 0)
            add_ino(peers, named.v[i]);
    free(named.v);
    free(listed.v);
    return rc;
}

int shmmgr_clients(const struct sysroot *sys, pid_t mgr, struct shmmgr_clients *out)
{
    memset(out, 0, sizeof(*out));
    out->complete = true;
    int proc = sys->proc;
    int piddir = pid_dir_open(proc, mgr);
    struct inos mine = {0}, peers = {0};
    int rc = piddir < 0 ? -errno : each_socket(piddir, &mine, NULL, NULL);
    if (piddir >= 0)
        close(piddir);
    if (rc < 0)
        return rc;
    out->sockets = mine.n;
    int diag = -1;
    if (mine.n) {
        diag = diag_socket(proc, mgr);
        rc = diag < 0 ? diag : peers_of(diag, &mine, &peers);
    }
    if (mine.n && rc < 0) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "the kernel's socket table (sock_diag) could not "
                 "be read: %s", strerror(-rc));
    }
    if (diag >= 0)
        close(diag);
    out->connections = peers.n;
    pid_t *pids = NULL;
    size_t npids = 0;
    /* A proc that cannot be listed shows no client: that is no proof of none. */
    if (peers.n && (rc = walk_list(proc, &pids, &npids)) < 0) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "the process table could not be read: %s",
                 strerror(-rc));
    }
    bool *seen = xcalloc(peers.n + 1, sizeof(*seen));
    size_t denied = 0;
    for (size_t i = 0; i < npids; i++) {
        if (pids[i] == mgr)
            continue;
        int pd = pid_dir_open(proc, pids[i]);
        if (pd < 0)
            continue;
        int r = each_socket(pd, NULL, &peers, seen);
        close(pd);
        if (r == -EACCES || r == -EPERM)
            denied++;
        if (r != 1)
            continue;
        if (out->n < SHMMGR_MAX_CLIENTS)
            out->pids[out->n++] = pids[i];
        else
            out->more = true;
    }
    size_t unseen = 0;
    for (size_t i = 0; i < peers.n; i++)
        unseen += !seen[i];
    if (denied && out->n == 0 && out->complete) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "%zu processes' fds could not be read, and one of "
                 "them may be a client", denied);
    } else if (unseen && npids && out->complete) {
        /* Open, so some process holds it: one this search cannot see
         * (another pid namespace), or one that just opened it. */
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "a connection to it leads to a socket that a "
                 "process this search cannot see holds open");
    }
    free(seen);
    free(pids);
    free(mine.v);
    free(peers.v);
    return 0;
}
