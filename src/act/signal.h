/* Ending processes safely. Before every signal the target is re-read from
 * /proc and must still be the process that was scanned (pid plus start
 * time) and belong to the caller unless root; a pidfd then carries the
 * signal, so the pid cannot be recycled in between. Ending is SIGTERM, a
 * wait of up to a timeout, then SIGKILL. A zombie is already dead: its
 * parent is named and nudged with SIGCHLD. */
#ifndef SHMWATCH_SIGNAL_H
#define SHMWATCH_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/sysroot.h"

#include "model/model.h"

struct actlog;
struct actns;

/* A process chosen for a signal, as the scan saw it. */
struct signal_target {
    pid_t pid, ppid;
    unsigned long long start_ticks; /* identity with pid */
    uid_t uid;
    char comm[16];
    char *cmdline;
    enum proc_role role;
    char *why;          /* why it should end, a sentence */
    const char *refuse; /* set when planning refused it: never signalled, reported */
    const struct actns *ns; /* the container it is in (reap --pid, --all), not
                             * owned: refused once that has exited; NULL: the
                             * watcher's own world */
};

struct signal_plan {
    struct signal_target *items;
    size_t n, cap;
};

enum signal_outcome {
    SIGNAL_ENDED,    /* exited after SIGTERM */
    SIGNAL_KILLED,   /* exited after SIGKILL */
    SIGNAL_SELF,     /* exited on its own before being signalled */
    SIGNAL_SENT,     /* one signal delivered (signal_send) */
    SIGNAL_WOULD,    /* dry run: every check passed */
    SIGNAL_GONE,     /* had already exited */
    SIGNAL_ZOMBIE,   /* already dead: its parent was told (SIGCHLD) */
    SIGNAL_REAPED,   /* a zombie that its parent (or init) has now reaped */
    SIGNAL_REFUSED,  /* a different process now, or not the caller's */
    SIGNAL_SURVIVED, /* alive after SIGKILL (uninterruptible sleep) */
    SIGNAL_FAILED,
};

struct signal_result {
    enum signal_outcome outcome;
    int err;            /* errno behind a refusal or failure */
    char reason[400];   /* what happened and why, one sentence or two */
    double waited_s;    /* from SIGTERM to the exit */
    pid_t parent;       /* zombies: the parent */
    bool parent_nudged; /* the parent was sent SIGCHLD */
};

struct signal_opts {
    /* The system whose processes are acted on (util/sysroot.h): every
     * identity check reads its proc. signal_opts_default leaves it NULL:
     * the caller sets it. */
    const struct sysroot *sys;
    uid_t uid;            /* the caller's effective uid */
    double timeout_s;     /* SIGTERM to SIGKILL (default 5) */
    double kill_wait_s;   /* after SIGKILL, how long to wait for the exit (default 2) */
    bool dry_run;
    struct actlog *log;
};

/* Test hook, called by signal_end after the scan and before the first
 * check, so that a test can end a target and hand its pid to a new process
 * in that window. NULL, the default, in the program; the tests set it
 * (tests/helpers/shmwatch_hooked.c for the integration tests). */
void signal_set_test_pause(void (*pause)(void));

void signal_opts_default(struct signal_opts *o);

/* One signal to one process after the identity and ownership checks (the
 * dashboard's signal menu). A zombie gets signal_zombie instead. */
void signal_send(const struct signal_opts *o, const struct signal_target *t, int sig,
                 struct signal_result *res);

/* Ends n processes together: SIGTERM to each, one shared wait of up to
 * o->timeout_s, SIGKILL to those still alive. res has n entries. */
void signal_end(const struct signal_opts *o, const struct signal_target *t, size_t n,
                struct signal_result *res);

/* Waits up to wait_s for t to exit on its own, signalling nothing. Returns
 * true when it has exited (res: SIGNAL_SELF, or SIGNAL_GONE if it was gone
 * already) or cannot be waited for (res says why); false while it lives. */
bool signal_wait_exit(const struct signal_opts *o, const struct signal_target *t, double wait_s,
                      struct signal_result *res);

/* A zombie: explains that it is already dead, names its parent and, if the
 * caller may, sends the parent SIGCHLD, then waits briefly for the reap. */
void signal_zombie(const struct signal_opts *o, const struct signal_target *t,
                   struct signal_result *res);

/* "TERM", "KILL", ... from a table of constant names; another number is
 * written into the caller's buf of n bytes ("SIG42", SIGNAL_NAME_MAX is
 * room for any int) and buf returned. */
#define SIGNAL_NAME_MAX 16
const char *signal_name(int sig, char *buf, size_t n);

const char *signal_outcome_name(enum signal_outcome o);

/* A target from a process of the scan. */
void signal_target_from_proc(struct signal_target *t, const struct proc *p, enum proc_role role);
void signal_plan_free(struct signal_plan *p);

#endif
