/* The kernel's process connector (netlink NETLINK_CONNECTOR, CN_IDX_PROC):
 * the exit of every process of the machine as it happens, with its wait
 * status and its parent, and each new name a process takes (a new program,
 * or a name it gives itself), so that a process that ends before any scan
 * read it can still be told whose it was. The kernel reports to listeners
 * in the initial user and pid namespaces only, over a socket of the initial
 * network namespace; where it does not, proccn_open says why and the caller
 * falls back to telling exits from two scans (cause unknown). */
#ifndef SHMWATCH_PROCCN_H
#define SHMWATCH_PROCCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One thread group's end, as PROC_EVENT_EXIT says it. */
struct proc_exit {
    pid_t pid;            /* the thread group (pid == tgid: threads are left out) */
    pid_t parent;         /* its parent's thread group at the exit (0: not said) */
    int status;           /* the wait status: WIFSIGNALED, WTERMSIG, WCOREDUMP, WEXITSTATUS */
    int exit_signal;      /* the signal the parent is sent (SIGCHLD), as the kernel says */
    uint64_t timestamp_ns; /* the kernel's monotonic clock at the exit */
};

/* A thread group's new name: PROC_EVENT_EXEC (it runs another program,
 * whose name is not said) or PROC_EVENT_COMM (it named itself, as torch
 * >= 2.5 names its workers: comm). */
struct proc_rename {
    pid_t pid;
    bool exec;
    char comm[16];
};

/* What one read of the connector found, each in the kernel's order. */
struct proc_exits {
    struct proc_exit *items;
    size_t n, cap;
    struct proc_rename *renames;
    size_t nrenames, renames_cap;
};

/* The connector's socket, listening: an fd to poll, or -errno with the
 * reason in why ("process events need CAP_NET_ADMIN ..."). It waits up to
 * a quarter of a second for the kernel's acknowledgement, which is never sent to a
 * listener in another user or pid namespace. */
int proccn_open(char *why, size_t n);

/* Reads every message waiting on fd (non-blocking) into out. 0; -ENOBUFS
 * when the kernel dropped messages (the socket's buffer was full: exits were
 * lost), which the caller may say; another -errno when the socket fails. */
int proccn_read(int fd, struct proc_exits *out);

void proccn_close(int fd);

/* Parses one datagram (netlink messages carrying connector messages) and
 * appends the exits and the renames of thread groups to out. Pure, for the
 * unit tests: any bytes are safe. Returns the number of records appended. */
size_t proccn_parse(const void *buf, size_t len, struct proc_exits *out);

void proc_exits_free(struct proc_exits *x);

#endif
