/* The process connector: subscribe with PROC_CN_MCAST_LISTEN, then read
 * PROC_EVENT_EXIT, PROC_EVENT_EXEC and PROC_EVENT_COMM messages. The layout
 * is the kernel's uapi (linux/connector.h, linux/cn_proc.h): a netlink
 * header, a cn_msg, a proc_event whose exit member carries the pid, the
 * tgid, the exit code (the wait status), the exit signal and the parent's
 * pid and tgid; its exec member the pid and tgid; its comm member those and
 * the new name. */
#include "collect/proccn.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/xalloc.h"

void proc_exits_free(struct proc_exits *x)
{
    free(x->items);
    free(x->renames);
    memset(x, 0, sizeof(*x));
}

/* One connector message of n bytes at p: appends an exit or a rename
 * (dropped when out is NULL); an acknowledgement's error into *ack_err
 * (when ack_err is not NULL). */
static size_t parse_cn(const unsigned char *p, size_t n, struct proc_exits *out, int *ack_err)
{
    struct cn_msg cn;
    if (n < sizeof(cn))
        return 0;
    memcpy(&cn, p, sizeof(cn));
    if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC)
        return 0;
    size_t len = cn.len;
    if (len > n - sizeof(cn))
        return 0;
    /* The event's fixed head (what, cpu, timestamp) and its data: an older
     * kernel's exit lacks the parent's fields, so only what is there is
     * read. */
    struct proc_event ev;
    memset(&ev, 0, sizeof(ev));
    memcpy(&ev, p + sizeof(cn), len < sizeof(ev) ? len : sizeof(ev));
    size_t exit_end = offsetof(struct proc_event, event_data.exit.exit_signal) +
                      sizeof(ev.event_data.exit.exit_signal);
    size_t parent_end = offsetof(struct proc_event, event_data.exit.parent_tgid) +
                        sizeof(ev.event_data.exit.parent_tgid);
    if (ev.what == PROC_EVENT_NONE && ack_err && len >= offsetof(struct proc_event, event_data) + 4) {
        *ack_err = (int)ev.event_data.ack.err;
        return 0;
    }
    if ((ev.what == PROC_EVENT_EXEC || ev.what == PROC_EVENT_COMM) && out) {
        /* exec and comm begin with the same pid and tgid. */
        size_t end = ev.what == PROC_EVENT_EXEC
                         ? offsetof(struct proc_event, event_data.exec.process_tgid) +
                               sizeof(ev.event_data.exec.process_tgid)
                         : offsetof(struct proc_event, event_data.comm.comm) +
                               sizeof(ev.event_data.comm.comm);
        if (len < end || ev.event_data.exec.process_pid != ev.event_data.exec.process_tgid ||
            ev.event_data.exec.process_tgid <= 0)
            return 0; /* short, or a thread's */
        struct proc_rename *r = VEC_PUSH(out->renames, out->nrenames, out->renames_cap);
        r->pid = ev.event_data.exec.process_tgid;
        r->exec = ev.what == PROC_EVENT_EXEC;
        if (!r->exec)
            snprintf(r->comm, sizeof(r->comm), "%.*s", (int)sizeof(ev.event_data.comm.comm),
                     ev.event_data.comm.comm);
        return 1;
    }
    if (ev.what != PROC_EVENT_EXIT || len < exit_end)
        return 0;
    if (ev.event_data.exit.process_pid != ev.event_data.exit.process_tgid)
        return 0; /* a thread, not the process */
    struct proc_exit e = {
        .pid = ev.event_data.exit.process_tgid,
        .parent = len >= parent_end ? ev.event_data.exit.parent_tgid : 0,
        .status = (int)ev.event_data.exit.exit_code,
        .exit_signal = (int)ev.event_data.exit.exit_signal,
        .timestamp_ns = ev.timestamp_ns,
    };
    if (e.pid <= 0 || !out)
        return 0;
    *VEC_PUSH(out->items, out->n, out->cap) = e;
    return 1;
}

static size_t parse(const void *buf, size_t len, struct proc_exits *out, int *ack_err)
{
    const unsigned char *p = buf;
    size_t found = 0;
    while (len >= sizeof(struct nlmsghdr)) {
        struct nlmsghdr h;
        memcpy(&h, p, sizeof(h));
        if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
            break;
        if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type >= NLMSG_MIN_TYPE || h.nlmsg_type == 0)
            found += parse_cn(p + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN, out, ack_err);
        size_t step = NLMSG_ALIGN(h.nlmsg_len);
        if (step >= len)
            break;
        p += step;
        len -= step;
    }
    return found;
}

size_t proccn_parse(const void *buf, size_t len, struct proc_exits *out)
{
    return parse(buf, len, out, NULL);
}

/* A request to the connector: op alone (event_type 0: every event), or
 * with event_type (the kernel's filter since Linux 6.6, struct proc_input:
 * only those events reach this socket; an older kernel ignores the
 * request). */
static int send_op(int fd, uint32_t op, uint32_t event_type)
{
    struct {
        struct nlmsghdr h;
        struct cn_msg cn;
        uint32_t op, event_type;
    } __attribute__((packed)) msg;
    memset(&msg, 0, sizeof(msg));
    size_t len = event_type ? 2 * sizeof(uint32_t) : sizeof(uint32_t);
    msg.h.nlmsg_len = (uint32_t)(sizeof(msg.h) + sizeof(msg.cn) + len);
    msg.h.nlmsg_type = NLMSG_DONE;
    msg.cn.id.idx = CN_IDX_PROC;
    msg.cn.id.val = CN_VAL_PROC;
    msg.cn.len = (uint16_t)len;
    msg.op = op;
    msg.event_type = event_type;
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    if (sendto(fd, &msg, msg.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
        return -errno;
    return 0;
}

int proccn_open(char *why, size_t n)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
    if (fd < 0) {
        int e = errno;
        if (e == EPROTONOSUPPORT)
            snprintf(why, n,
                     "process events are not seen: the kernel's process connector is only in "
                     "the initial network namespace (or not built in)");
        else
            snprintf(why, n, "process events are not seen: netlink connector socket: %s",
                     strerror(e));
        return -e;
    }
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
    int rc;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        rc = -errno;
        snprintf(why, n,
                 "process events are not seen: joining the kernel's process connector needs "
                 "CAP_NET_ADMIN (%s)",
                 strerror(-rc));
        goto fail;
    }
    /* Room for the exits of a busy machine while a scan runs: the socket is
     * read between scans only. */
    int room = 8 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &room, sizeof(room)) < 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &room, sizeof(room));
    if ((rc = send_op(fd, PROC_CN_MCAST_LISTEN, 0)) < 0) {
        if (rc == -ECONNREFUSED) /* the connector lives in the initial network namespace */
            snprintf(why, n,
                     "process events are not seen: the kernel's process connector answers only "
                     "in the initial network namespace");
        else
            snprintf(why, n, "process events are not seen: cannot subscribe: %s",
                     strerror(-rc));
        goto fail;
    }
    /* The kernel answers a LISTEN with an acknowledgement; it ignores one
     * from another user or pid namespace, and refuses one without the
     * privilege (it answers at once otherwise). Exits that arrive meanwhile are dropped: nothing is known
     * yet of the processes. */
    double until = clock_now() + 0.25;
    int ack = -1;
    unsigned char buf[8192];
    while (ack < 0) {
        double left = until - clock_now();
        if (left <= 0)
            break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        if (got < 0 && errno != EAGAIN && errno != EINTR && errno != ENOBUFS)
            break;
        if (got > 0)
            parse(buf, (size_t)got, NULL, &ack);
    }
    if (ack != 0) {
        if (ack > 0)
            snprintf(why, n,
                     "process events are not seen: the kernel refused the subscription (%s); "
                     "it needs CAP_NET_ADMIN",
                     strerror(ack));
        else
            snprintf(why, n,
                     "process events are not seen: the kernel's process connector answers only "
                     "root in the initial user and pid namespaces");
        rc = ack > 0 ? -ack : -EPERM;
        goto fail;
    }
    /* Only exits and renames from now on (the acknowledgement above would
     * not have passed this filter, hence the two steps). */
    (void)send_op(fd, PROC_CN_MCAST_LISTEN, PROC_EVENT_EXIT | PROC_EVENT_EXEC | PROC_EVENT_COMM);
    return fd;
fail:
    close(fd);
    return rc;
}

int proccn_read(int fd, struct proc_exits *out)
{
    unsigned char buf[16384];
    int rc = 0;
    for (;;) {
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return rc;
            if (errno == ENOBUFS) { /* messages were dropped; the socket goes on */
                rc = -ENOBUFS;
                continue;
            }
            return -errno;
        }
        if (got == 0)
            return rc;
        proccn_parse(buf, (size_t)got, out);
    }
}

void proccn_close(int fd)
{
    if (fd >= 0) {
        (void)send_op(fd, PROC_CN_MCAST_IGNORE, 0);
        close(fd);
    }
}
