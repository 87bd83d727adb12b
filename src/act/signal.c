#include "act/signal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "act/actlog.h"
#include "act/actns.h"
#include "act/procid.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define NO_PIDFD (-2) /* the kernel has no pidfds: kill() right after the check */

static const struct {
    int sig;
    const char *name;
} sig_names[] = {
    {SIGTERM, "TERM"}, {SIGKILL, "KILL"}, {SIGINT, "INT"},   {SIGHUP, "HUP"},
    {SIGCHLD, "CHLD"}, {SIGCONT, "CONT"}, {SIGSTOP, "STOP"}, {SIGQUIT, "QUIT"},
    {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"},
};

const char *signal_name(int sig, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
        if (sig_names[i].sig == sig)
            return sig_names[i].name;
    snprintf(buf, n, "SIG%d", sig);
    return buf;
}

const char *signal_outcome_name(enum signal_outcome o)
{
    static const char *const names[] = {"ended", "killed", "exited", "sent", "would signal",
                                        "gone", "zombie", "reaped", "refused", "survived",
                                        "failed"};
    return (size_t)o < sizeof(names) / sizeof(names[0]) ? names[o] : "?";
}

void signal_opts_default(struct signal_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->uid = geteuid();
    o->timeout_s = 5;
    o->kill_wait_s = 2;
}

static void say(struct signal_result *res, enum signal_outcome oc, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(struct signal_result *res, enum signal_outcome oc, int err, const char *fmt, ...)
{
    res->outcome = oc;
    res->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
}

static void log_line(const struct signal_opts *o, const struct actns *ns, pid_t pid,
                     const char *comm, uid_t uid, const char *action, const char *result,
                     const char *detail)
{
    if (!o->log || o->dry_run)
        return;
    char target[64];
    snprintf(target, sizeof(target), "pid %d (%s)", (int)pid, comm);
    struct actlog_entry e = {.action = action, .target = target, .owner = (long long)uid,
                             .result = result, .detail = detail,
                             .container = ns ? ns->label : NULL};
    actlog_write(o->log, &e);
}

/* Checks that (pid, start_ticks) is still the same process and that the
 * caller may signal it, and takes a pidfd on it. Returns the pidfd, or
 * NO_PIDFD (signal with kill() at once), or -1 with res filled in. */
static int take(const struct signal_opts *o, const struct actns *ns, pid_t pid,
                unsigned long long start, struct procid *now, struct signal_result *res)
{
    /* In a container: only while it is still there (a reused pid of its
     * holder would make "inside it" someone else's). */
    int live = ns ? actns_check(ns) : 1;
    if (live < 0) {
        say(res, SIGNAL_REFUSED, -live,
            "cannot tell whether its container still runs (pid %d: %s): not signalled",
            (int)ns->root.pid, strerror(-live));
        return -1;
    }
    if (live == 0) {
        say(res, SIGNAL_REFUSED, ESRCH, "its container exited (pid %d is gone): not signalled",
            (int)ns->root.pid);
        return -1;
    }
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0 && errno == ESRCH) {
        say(res, SIGNAL_GONE, ESRCH, "already exited");
        return -1;
    }
    if (pfd < 0 && errno != ENOSYS) {
        say(res, SIGNAL_FAILED, errno, "cannot take hold of it: %s", strerror(errno));
        return -1;
    }
    if (pfd < 0)
        pfd = NO_PIDFD;
    /* Read after the pidfd was taken: if this is the process scanned, the
     * pidfd holds that same process. */
    int rc = procid_read(o->sys->proc, pid, now);
    if (rc == -ESRCH)
        say(res, SIGNAL_GONE, ESRCH, "already exited");
    else if (rc < 0)
        say(res, SIGNAL_FAILED, -rc, "cannot read it: %s", strerror(-rc));
    else if (!procid_same(pid, start, now))
        say(res, SIGNAL_REFUSED, ESRCH,
            "pid %d is now a different process (%s, started after the scan): not "
            "signalled",
            (int)pid, now->comm);
    else if (!procid_may_signal(o->uid, now))
        say(res, SIGNAL_REFUSED, EPERM,
            "owned by uid %lu, not by you (uid %lu): only its owner or root may signal it",
            (unsigned long)now->euid, (unsigned long)o->uid);
    else
        return pfd;
    if (pfd >= 0)
        close(pfd);
    return -1;
}

static int deliver(int pfd, pid_t pid, int sig)
{
    if (pfd >= 0)
        return (int)syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0);
    return kill(pid, sig);
}

/* Has the process behind pfd (or, without pidfds, (pid, start)) exited?
 * 1: yes; 0: no; -errno: its stat could not be read for another reason than
 * its end (no fds, no memory), so it is not known to have exited. */
static int exited(int proc, int pfd, pid_t pid, unsigned long long start)
{
    if (pfd >= 0) {
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
    }
    struct procid now;
    int rc = procid_read(proc, pid, &now);
    if (rc == -ESRCH)
        return 1;
    if (rc < 0)
        return rc;
    return !procid_same(pid, start, &now) || now.state == 'Z' || now.state == 'X';
}

/* What signal_end follows of each target: its pidfd (NO_PIDFD without
 * pidfds; -1 when no SIGTERM was sent), whether it still runs, when its
 * exit was seen (clock_now), whether SIGKILL was sent, and the errno that
 * withheld SIGKILL (its stat could not be read). */
struct pending {
    int fd;
    bool live, killed;
    double ended;
    int unsure;
};

/* Waits until every live target has exited or the deadline passes; marks
 * each exit (live false) and its time (ended). */
static void wait_exits(int proc, struct pending *pd, const struct signal_target *t, size_t n,
                       double deadline)
{
    for (;;) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++) {
            if (!pd[i].live)
                continue;
            if (exited(proc, pd[i].fd, t[i].pid, t[i].start_ticks) > 0) {
                pd[i].live = false;
                pd[i].ended = clock_now();
            } else {
                left++;
            }
        }
        double rest = deadline - clock_now();
        if (left == 0 || rest <= 0)
            return;
        clock_nap(rest < 0.02 ? rest : 0.02);
    }
}

/* Sends sig to t after its checks (a refusal at planning, then take's).
 * Returns t's pidfd (NO_PIDFD without pidfds) once sig is delivered; else
 * -1 with res said: the refusal, a dry run's WOULD, the failed signal, or,
 * when zombie_gone, a zombie as already exited (it is not signalled). */
static int send_checked(const struct signal_opts *o, const struct signal_target *t, int sig,
                        bool zombie_gone, struct signal_result *res)
{
    if (t->refuse) {
        say(res, SIGNAL_REFUSED, EPERM, "%s", t->refuse);
        return -1;
    }
    struct procid now;
    int pfd = take(o, t->ns, t->pid, t->start_ticks, &now, res);
    if (pfd == -1)
        return -1; /* res says why */
    char other[SIGNAL_NAME_MAX];
    if (zombie_gone && now.state == 'Z') {
        say(res, SIGNAL_GONE, 0, "already exited (a zombie waiting for its parent)");
    } else if (o->dry_run) {
        say(res, SIGNAL_WOULD, 0, "every check passed");
    } else if (deliver(pfd, t->pid, sig) != 0) {
        int err = errno;
        say(res, err == ESRCH ? SIGNAL_GONE : SIGNAL_FAILED, err, "SIG%s failed: %s",
            signal_name(sig, other, sizeof(other)), strerror(err));
    } else {
        return pfd;
    }
    if (pfd >= 0)
        close(pfd);
    return -1;
}

static void (*test_pause)(void);

void signal_set_test_pause(void (*pause)(void))
{
    test_pause = pause;
}

void signal_end(const struct signal_opts *o, const struct signal_target *t, size_t n,
                struct signal_result *res)
{
    if (test_pause)
        test_pause();
    int proc = o->sys->proc;
    struct pending *pd = xcalloc(n, sizeof(*pd));
    /* SIGTERM to each, after its checks: a refusal or failure is logged
     * now, the others once they are done. */
    for (size_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        pd[i].fd = send_checked(o, &t[i], SIGTERM, true, &res[i]);
        pd[i].live = pd[i].fd != -1;
        /* A stopped process that handles SIGTERM would only take it once it
         * runs again: SIGCONT after it, as systemd sends (nothing to a
         * running one). */
        if (pd[i].live)
            deliver(pd[i].fd, t[i].pid, SIGCONT);
        if (!pd[i].live && (res[i].outcome == SIGNAL_REFUSED || res[i].outcome == SIGNAL_FAILED))
            log_line(o, t[i].ns, t[i].pid, t[i].comm, t[i].uid, "signal TERM",
                     signal_outcome_name(res[i].outcome), res[i].reason);
    }
    double t0 = clock_now();
    wait_exits(proc, pd, t, n, t0 + o->timeout_s);
    for (size_t i = 0; i < n; i++) {
        if (!pd[i].live)
            continue;
        /* Without a pidfd the identity is checked again right before
         * SIGKILL, which is sent only to the same process seen running. */
        int gone = pd[i].fd == NO_PIDFD ? exited(proc, NO_PIDFD, t[i].pid, t[i].start_ticks) : 0;
        if (gone != 0) {
            pd[i].live = false;
            if (gone > 0)
                pd[i].ended = clock_now();
            else
                pd[i].unsure = -gone;
            continue;
        }
        if (deliver(pd[i].fd, t[i].pid, SIGKILL) == 0)
            pd[i].killed = true;
    }
    wait_exits(proc, pd, t, n, clock_now() + o->kill_wait_s);
    for (size_t i = 0; i < n; i++) {
        if (pd[i].fd == -1)
            continue;
        res[i].waited_s = pd[i].ended > 0 ? pd[i].ended - t0 : clock_now() - t0;
        if (pd[i].unsure) {
            say(&res[i], SIGNAL_FAILED, pd[i].unsure,
                "sent SIGTERM; %.1f s later its stat cannot be read (%s): not known to "
                "have exited, so SIGKILL was not sent",
                o->timeout_s, strerror(pd[i].unsure));
        } else if (pd[i].live) {
            struct procid now;
            char state = procid_read(proc, t[i].pid, &now) == 0 ? now.state : '?';
            say(&res[i], SIGNAL_SURVIVED, EBUSY,
                "still alive %.1f s after SIGKILL (state %c%s)", o->kill_wait_s, state,
                state == 'D' ? ": uninterruptible sleep, waiting on the kernel or a device" : "");
        } else if (pd[i].killed) {
            say(&res[i], SIGNAL_KILLED, 0,
                "ignored SIGTERM for %.1f s; ended by SIGKILL after %.1f s", o->timeout_s,
                res[i].waited_s);
        } else {
            say(&res[i], SIGNAL_ENDED, 0, "ended by SIGTERM after %.1f s", res[i].waited_s);
        }
        log_line(o, t[i].ns, t[i].pid, t[i].comm, t[i].uid,
                 pd[i].killed ? "signal TERM,KILL" : "signal TERM",
                 signal_outcome_name(res[i].outcome), res[i].reason);
        if (pd[i].fd >= 0)
            close(pd[i].fd);
    }
    free(pd);
}

bool signal_wait_exit(const struct signal_opts *o, const struct signal_target *t, double wait_s,
                      struct signal_result *res)
{
    memset(res, 0, sizeof(*res));
    int proc = o->sys->proc;
    struct procid now;
    struct signal_opts check = *o;
    check.uid = 0; /* waiting needs no right to signal */
    int pfd = take(&check, t->ns, t->pid, t->start_ticks, &now, res);
    if (pfd == -1)
        return true; /* res says why */
    struct pending pd = {.fd = pfd, .live = now.state != 'Z', .ended = clock_now()};
    double t0 = pd.ended;
    if (pd.live)
        wait_exits(proc, &pd, t, 1, t0 + wait_s);
    if (pfd >= 0)
        close(pfd);
    if (pd.live)
        return false;
    say(res, SIGNAL_SELF, 0, "exited on its own after %.1f s", pd.ended - t0);
    log_line(o, t->ns, t->pid, t->comm, t->uid, "wait", "exited", res->reason);
    return true;
}

void signal_send(const struct signal_opts *o, const struct signal_target *t, int sig,
                 struct signal_result *res)
{
    memset(res, 0, sizeof(*res));
    char action[32], other[SIGNAL_NAME_MAX];
    const char *name = signal_name(sig, other, sizeof(other));
    snprintf(action, sizeof(action), "signal %s", name);
    int pfd = send_checked(o, t, sig, false, res);
    if (pfd != -1) {
        say(res, SIGNAL_SENT, 0, "SIG%s delivered", name);
        if (pfd >= 0)
            close(pfd);
    }
    log_line(o, t->ns, t->pid, t->comm, t->uid, action, signal_outcome_name(res->outcome),
             res->reason);
}

/* Waits up to a second for the zombie (pid, start) to be reaped. */
static bool reaped_soon(int proc, pid_t pid, unsigned long long start)
{
    double deadline = clock_now() + 1.0;
    for (;;) {
        struct procid now;
        if (procid_read(proc, pid, &now) < 0 || !procid_same(pid, start, &now))
            return true;
        if (clock_now() >= deadline)
            return false;
        clock_nap(0.02);
    }
}

void signal_zombie(const struct signal_opts *o, const struct signal_target *t,
                   struct signal_result *res)
{
    memset(res, 0, sizeof(*res));
    int proc = o->sys->proc;
    struct procid z, parent, again;
    int rc = procid_read(proc, t->pid, &z);
    if (rc < 0 || !procid_same(t->pid, t->start_ticks, &z)) {
        say(res, SIGNAL_REAPED, 0, "already reaped by its parent");
        goto out;
    }
    if (z.state != 'Z') {
        say(res, SIGNAL_REFUSED, EINVAL, "not a zombie (state %c)", z.state);
        goto out;
    }
    res->parent = z.ppid;
    if (procid_read(proc, z.ppid, &parent) < 0) {
        say(res, SIGNAL_ZOMBIE, 0, "already dead (a zombie); its parent pid %d is gone too",
            (int)z.ppid);
        goto out;
    }
    /* The parent's checks come first, a dry run's too: it says "would
     * send" only when the real run would send. */
    struct signal_result pres = {0};
    int pfd = take(o, t->ns, parent.pid, parent.start_ticks, &again, &pres);
    if (pfd == -1) {
        say(res, pres.outcome == SIGNAL_REFUSED ? SIGNAL_REFUSED : SIGNAL_ZOMBIE, pres.err,
            "already dead (a zombie), only its parent pid %d (%s) can reap it; SIGCHLD not "
            "sent: %s",
            (int)parent.pid, parent.comm, pres.reason);
        goto out;
    }
    if (o->dry_run) {
        say(res, SIGNAL_WOULD, 0,
            "already dead (a zombie): would send SIGCHLD to its parent pid %d (%s) so that it "
            "reaps it",
            (int)parent.pid, parent.comm);
        if (pfd >= 0)
            close(pfd);
        goto out;
    }
    if (deliver(pfd, parent.pid, SIGCHLD) == 0)
        res->parent_nudged = true;
    if (pfd >= 0)
        close(pfd);
    log_line(o, t->ns, parent.pid, parent.comm, parent.euid, "signal CHLD",
             res->parent_nudged ? "sent" : "failed", "asked to reap its zombie child");
    if (reaped_soon(proc, t->pid, t->start_ticks))
        say(res, SIGNAL_REAPED, 0,
            "was a zombie; its parent pid %d (%s) reaped it after SIGCHLD", (int)parent.pid,
            parent.comm);
    else if (parent.pid == 1 || parent.nspid == 1) /* no init above it to hand the zombie to */
        say(res, SIGNAL_ZOMBIE, 0,
            "already dead (a zombie): it holds no memory and cannot be killed. Its parent pid "
            "%d (%s), the init of its pid namespace, was sent SIGCHLD but does not reap it; "
            "only it can, and ending it would end every process of its namespace",
            (int)parent.pid, parent.comm);
    else
        say(res, SIGNAL_ZOMBIE, 0,
            "already dead (a zombie): it holds no memory and cannot be killed. Its parent pid "
            "%d (%s) was sent SIGCHLD but does not reap it; ending that parent would hand the "
            "zombie to init, which reaps it",
            (int)parent.pid, parent.comm);
out:
    if (res->outcome == SIGNAL_REFUSED)
        log_line(o, t->ns, t->pid, t->comm, t->uid, "signal CHLD", "refused", res->reason);
}

void signal_target_from_proc(struct signal_target *t, const struct proc *p, enum proc_role role)
{
    memset(t, 0, sizeof(*t));
    t->pid = p->pid;
    t->ppid = p->ppid;
    t->start_ticks = p->start_ticks;
    t->uid = p->uid;
    snprintf(t->comm, sizeof(t->comm), "%s", p->comm);
    t->cmdline = xstrdup(p->cmdline ? p->cmdline : "");
    t->role = role;
}

void signal_plan_free(struct signal_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].cmdline);
        free(p->items[i].why);
    }
    free(p->items);
    memset(p, 0, sizeof(*p));
}
