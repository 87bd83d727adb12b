#include "act/shmmgr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static bool has(const struct inos *s, unsigned long ino)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == ino)
            return true;
    return false;
}

static void add_ino(struct inos *s, unsigned long ino)
{
    if (!has(s, ino))
        *VEC_PUSH(s->v, s->n, s->cap) = ino;
}

/* Reads the socket fds of the process dir piddir: adds each one's inode to
 * mine, or, with mine NULL, looks for one of peers. Returns 1 when one of
 * peers is found, else 0, or -errno. */
static int each_socket(int piddir, struct inos *mine, const struct inos *peers)
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
    while (!hit && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        ssize_t n = readlinkat(fddir, de->d_name, link, sizeof(link) - 1);
        unsigned long ino;
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (!shmmgr_socket_inode(link, &ino))
            continue;
        if (mine)
            add_ino(mine, ino);
        else
            hit = has(peers, ino);
    }
    closedir(d);
    return hit;
}

/* The peers of the sockets in mine, from one sock_diag dump of every unix
 * socket. Returns 0 or -errno. */
static int peers_of(const struct inos *mine, struct inos *peers)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return -errno;
    struct {
        struct nlmsghdr nlh;
        struct unix_diag_req req;
    } msg = {
        .nlh = {.nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .req = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_PEER},
    };
    struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
    if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
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
            if (!has(mine, d->udiag_ino))
                continue;
            int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*d)));
            for (struct rtattr *a = (struct rtattr *)(d + 1); RTA_OK(a, alen);
                 a = RTA_NEXT(a, alen))
                if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
                    uint32_t peer;
                    memcpy(&peer, RTA_DATA(a), sizeof(peer));
                    if (peer)
                        add_ino(peers, peer);
                }
        }
    }
    close(fd);
    return rc;
}

int shmmgr_clients(const struct sysroot *sys, pid_t mgr, struct shmmgr_clients *out)
{
    memset(out, 0, sizeof(*out));
    out->complete = true;
    int proc = sys->proc;
    int piddir = pid_dir_open(proc, mgr);
    struct inos mine = {0}, peers = {0};
    int rc = piddir < 0 ? -errno : each_socket(piddir, &mine, NULL);
    if (piddir >= 0)
        close(piddir);
    if (rc < 0)
        return rc;
    out->sockets = mine.n;
    if (mine.n && (rc = peers_of(&mine, &peers)) < 0) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "the kernel's socket table (sock_diag) could not "
                 "be read: %s", strerror(-rc));
    }
    out->connections = peers.n;
    pid_t *pids = NULL;
    size_t npids = 0;
    /* A proc that cannot be listed shows no client: that is no proof of none. */
    if (peers.n && (rc = walk_list(proc, &pids, &npids)) < 0) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "the process table could not be read: %s",
                 strerror(-rc));
    }
    size_t denied = 0;
    for (size_t i = 0; i < npids; i++) {
        if (pids[i] == mgr)
            continue;
        int pd = pid_dir_open(proc, pids[i]);
        if (pd < 0)
            continue;
        int r = each_socket(pd, NULL, &peers);
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
    if (denied && out->n == 0 && out->complete) {
        out->complete = false;
        snprintf(out->why, sizeof(out->why), "%zu processes' fds could not be read, and one of "
                 "them may be a client", denied);
    }
    free(pids);
    free(mine.v);
    free(peers.v);
    return 0;
}
