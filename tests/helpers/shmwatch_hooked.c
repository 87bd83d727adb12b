/* shmwatch with its test hooks set, for the integration tests that need the
 * real program to pause or wait where the shipped one never does. Built from
 * the same libraries and command line as build/src/shmwatch (only main
 * differs), never installed. The hooks are chosen by environment variables
 * read here, not by the program:
 *   SHMWATCH_TEST_PAUSE_BEFORE_UNLINK=SECONDS  sleep after the scan, before
 *       the first unlink check (a test opens a segment in that window)
 *   SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL=SECONDS  sleep after the scan, before
 *       the first signal check (a test hands a target's pid to another process)
 *   SHMWATCH_TEST_PAUSE_UNTIL=PATH  either pause ends as soon as PATH exists:
 *       the test creates it once it has done what it does in the window, so
 *       that the seconds above are a bound, not a wait
 *   SHMWATCH_TEST_BLOCKING_STAT=1  stat fd targets with a plain fstatat that
 *       waits on their file system (a scan hangs on a stopped FUSE daemon)
 *   SHMWATCH_TEST_STALL_LIMIT=SECONDS  a scan is stalled after SECONDS,
 *       whatever the interval (the program's least is 10 s)
 *   SHMWATCH_TEST_KILL_MEMBER=AT:PID[:N]  (AT: mountinfo or container) the
 *       node view, about to read PID as a member of its mount namespace
 *       there (the Nth time, default the first: N 2 is during the second
 *       scan), first SIGKILLs it and waits (up to 10 s) until it is reaped:
 *       node.c must go on with the namespace's next member (the test's
 *       shell, its parent, reaps it) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "act/signal.h"
#include "act/unlink.h"
#include "cli/subcommands.h"
#include "collect/node.h"
#include "collect/procfiles.h"
#include "collect/scanjob.h"
#include "util/clock.h"
#include "util/units.h"

static double unlink_pause_s, signal_pause_s;
static const char *pause_until;

/* Sleeps S seconds, or less once pause_until exists. */
static void pause_for(double s)
{
    if (!pause_until || !*pause_until) {
        clock_nap(s);
        return;
    }
    for (double t = 0; t < s; t += 0.01) {
        if (access(pause_until, F_OK) == 0)
            return;
        clock_nap(0.01);
    }
}

static void unlink_pause(void)
{
    pause_for(unlink_pause_s);
}

static void signal_pause(void)
{
    pause_for(signal_pause_s);
}

static int blocking_stat(int dirfd, const char *name, struct stat *st)
{
    return fstatat(dirfd, name, st, 0);
}

static enum node_hook_at kill_at;
static pid_t kill_pid;
static long kill_nth = 1;

static void kill_member(enum node_hook_at at, pid_t pid)
{
    if (at != kill_at || pid != kill_pid || kill_pid <= 0 || --kill_nth > 0)
        return;
    kill_pid = 0; /* once */
    if (kill(pid, SIGKILL) != 0)
        return;
    for (int i = 0; i < 1000 && (kill(pid, 0) == 0 || errno != ESRCH); i++)
        clock_nap(0.01);
}

/* SHMWATCH_TEST_KILL_MEMBER=AT:PID[:N], or nothing set. */
static void kill_member_setup(void)
{
    const char *v = getenv("SHMWATCH_TEST_KILL_MEMBER");
    const char *colon = v ? strchr(v, ':') : NULL;
    if (!colon)
        return;
    size_t n = (size_t)(colon - v);
    if (n == strlen("mountinfo") && strncmp(v, "mountinfo", n) == 0)
        kill_at = NODE_HOOK_MOUNTINFO;
    else if (n == strlen("container") && strncmp(v, "container", n) == 0)
        kill_at = NODE_HOOK_CONTAINER;
    else
        return;
    char *end;
    long pid = strtol(colon + 1, &end, 10);
    if (*end == ':')
        kill_nth = strtol(end + 1, &end, 10);
    if (*end || pid <= 0 || kill_nth <= 0)
        return;
    kill_pid = (pid_t)pid;
    node_set_test_member_hook(kill_member);
}

/* A positive duration from the environment ("3", "500ms"), else 0. */
static double seconds_of(const char *var)
{
    const char *v = getenv(var);
    double s;
    return v && parse_duration(v, &s) && s > 0 ? s : 0;
}

int main(int argc, char **argv)
{
    pause_until = getenv("SHMWATCH_TEST_PAUSE_UNTIL");
    unlink_pause_s = seconds_of("SHMWATCH_TEST_PAUSE_BEFORE_UNLINK");
    if (unlink_pause_s > 0)
        unlink_set_test_pause(unlink_pause);
    signal_pause_s = seconds_of("SHMWATCH_TEST_PAUSE_BEFORE_SIGNAL");
    if (signal_pause_s > 0)
        signal_set_test_pause(signal_pause);
    if (getenv("SHMWATCH_TEST_BLOCKING_STAT"))
        procfiles_set_test_stat(blocking_stat);
    double stall_limit_s = seconds_of("SHMWATCH_TEST_STALL_LIMIT");
    if (stall_limit_s > 0)
        scan_set_test_stall_limit(stall_limit_s);
    kill_member_setup();
    return shmwatch_main(argc, argv);
}
