/* Whether a torch_shm_manager still serves anyone. The manager (one per
 * allocating process tree, in its own session) accepts a unix-socket
 * connection from each client and, once every client has disconnected,
 * exits within 2 s and unlinks the segments registered with it. Its clients
 * are the processes holding the peer end of one of its connected sockets
 * (forked workers inherit their parent's connection); the peers come from
 * the kernel's sock_diag in the manager's network namespace (only those
 * still open: a closed client's socket leaves the table), the holders from
 * /proc/PID/fd. A peer still open that no process in sight holds (one of
 * another pid namespace) leaves the answer incomplete. */
#ifndef SHMWATCH_SHMMGR_H
#define SHMWATCH_SHMMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/sysroot.h"

#define SHMMGR_MAX_CLIENTS 32

/* A manager exits this long after its last client leaves (libshm's
 * SHUTDOWN_TIMEOUT is 2 s). */
#define SHMMGR_GRACE_S 3.0

struct shmmgr_clients {
    size_t sockets;     /* unix sockets the manager holds */
    size_t connections; /* of those, connected to a peer */
    pid_t pids[SHMMGR_MAX_CLIENTS]; /* live processes holding a peer end */
    size_t n;
    bool more;          /* more clients than fit in pids */
    bool complete;      /* false: something could not be examined, see why */
    char why[160];
};

/* Finds the live clients of manager pid mgr. Returns 0, or -errno when the
 * manager's fds cannot be read at all. */
int shmmgr_clients(const struct sysroot *sys, pid_t mgr, struct shmmgr_clients *out);

/* Parses "socket:[12345]"; false for any other link text. */
bool shmmgr_socket_inode(const char *link, unsigned long *ino);

#endif
