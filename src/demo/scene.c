/* The demo's training job, in a loop of epochs:
 *   - a main process (shown as "python3 train.py ...") with a
 *     torch_shm_manager child and three DataLoader workers (pt_data_worker);
 *   - worker 0 passes batches the file_system way (named segments), worker 1
 *     the file_descriptor way (unlinked at once: hidden), each keeping a
 *     few batches in flight; worker 2 leaks: it never frees a batch, so the
 *     mount keeps rising;
 *   - 20 s into an epoch worker 0 crashes (SIGKILL): its named batches stay
 *     behind as orphans, and it lingers as a zombie until main reaps it and
 *     starts a new one;
 *   - at 85 % full the job dies: every worker is killed, the leftovers stay
 *     for a while, then are removed and the next epoch starts.
 * Every file it removes is one it made itself (torch_<pid>_* of its own
 * workers). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo/demo.h"
#include "util/clock.h"

#define MiB ((size_t)1 << 20)
#define NWORKERS 3
#define KEEP 3          /* batches a well-behaved worker keeps in flight */
#define LEAK_MAX 128    /* batches the leaking worker can hold */
#define CRASH_AT_S 20.0 /* worker 0 crashes this far into an epoch */
#define FULL_PCT 85.0   /* the job dies at this fill */
#define EPOCH_MAX_S 90.0
#define ZOMBIE_S 4.0     /* a dead worker stays a zombie this long */
#define LEFTOVERS_S 12.0 /* a dead job's leftovers stay this long */

enum wmode { W_NAMED, W_HIDDEN, W_LEAK };

struct seg {
    int fd;
    void *p;
    size_t size;
    char path[256];
    bool named;
};

static char title[] = "python3 train.py --epochs 100 --num-workers 3 (shmwatch --demo)";

static int create(const char *dir, struct seg *s, unsigned seq, size_t size, bool named)
{
    snprintf(s->path, sizeof(s->path), "%s/torch_%d_%u", dir, (int)getpid(), seq);
    s->fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->fd < 0)
        return -1;
    s->size = size;
    s->named = named;
    s->p = MAP_FAILED;
    if (ftruncate(s->fd, (off_t)size) == 0)
        s->p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (!named || s->p == MAP_FAILED)
        unlink(s->path);
    if (s->p == MAP_FAILED) {
        close(s->fd);
        return -1;
    }
    return 0;
}

static void release(struct seg *s)
{
    munmap(s->p, s->size);
    close(s->fd);
    if (s->named)
        unlink(s->path);
}

/* Writes a batch in four steps, so that its pages fill visibly. A full
 * mount makes this SIGBUS, as it does to a real worker. */
static void fill(struct seg *s, double over_s)
{
    for (int k = 0; k < 4; k++) {
        memset((char *)s->p + s->size / 4 * (size_t)k, 0xa5, s->size / 4);
        clock_nap(over_s / 4);
    }
}

static __attribute__((noreturn)) void worker(const char *dir, enum wmode mode)
{
    prctl(PR_SET_NAME, "pt_data_worker");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    static struct seg held[LEAK_MAX];
    size_t n = 0;
    size_t size = mode == W_LEAK ? MiB : 2 * MiB;
    double period = mode == W_LEAK ? 1.0 : 1.5;
    for (unsigned seq = 0;; seq++) {
        if (n == LEAK_MAX) {
            clock_nap(period);
            continue;
        }
        struct seg s;
        if (create(dir, &s, seq, size, mode != W_HIDDEN) != 0) {
            clock_nap(period);
            continue;
        }
        fill(&s, period / 2);
        if (mode != W_LEAK && n == KEEP) {
            release(&held[0]);
            memmove(held, held + 1, sizeof(held[0]) * (KEEP - 1));
            n--;
        }
        held[n++] = s;
        clock_nap(period / 2);
    }
}

static __attribute__((noreturn)) void manager(void)
{
    prctl(PR_SET_NAME, "torch_shm_manag");
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;)
        pause();
}

static pid_t spawn_worker(const char *dir, enum wmode mode, pid_t *made, size_t *nmade)
{
    pid_t pid = fork();
    if (pid == 0)
        worker(dir, mode);
    if (pid > 0 && *nmade < 256)
        made[(*nmade)++] = pid;
    return pid;
}

static bool exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    return pid > 0 && waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == pid;
}

static double used_pct(const char *dir)
{
    struct statvfs st;
    if (statvfs(dir, &st) != 0 || !st.f_blocks)
        return 0;
    return 100.0 * (double)(st.f_blocks - st.f_bfree) / (double)st.f_blocks;
}

/* Removes what the job's own workers left: torch_<pid>_* of pids it made. */
static void clean_up(const char *dir, const pid_t *made, size_t nmade)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        int pid = 0, used = 0;
        if (sscanf(e->d_name, "torch_%d_%*u%n", &pid, &used) != 1 || e->d_name[used])
            continue;
        for (size_t i = 0; i < nmade; i++)
            if (made[i] == pid) {
                unlinkat(dirfd(d), e->d_name, 0);
                break;
            }
    }
    closedir(d);
}

/* Shows the job as a Python command line (needs CAP_SYS_RESOURCE, which
 * the demo has as root; without it the real command line stays). */
static void set_title(void)
{
    prctl(PR_SET_NAME, "python3");
    if (prctl(PR_SET_MM, PR_SET_MM_ARG_START, (unsigned long)title, 0, 0) == 0)
        prctl(PR_SET_MM, PR_SET_MM_ARG_END, (unsigned long)(title + sizeof(title)), 0, 0);
}

static void epoch(const char *dir)
{
    static const enum wmode modes[NWORKERS] = {W_NAMED, W_HIDDEN, W_LEAK};
    pid_t w[NWORKERS], made[256];
    size_t nmade = 0;
    double died[NWORKERS] = {0};
    for (int i = 0; i < NWORKERS; i++)
        w[i] = spawn_worker(dir, modes[i], made, &nmade);
    double t0 = clock_now();
    bool crashed = false;
    while (used_pct(dir) < FULL_PCT && clock_now() - t0 < EPOCH_MAX_S) {
        clock_nap(0.25);
        for (int i = 0; i < NWORKERS; i++) {
            if (!died[i] && exited(w[i]))
                died[i] = clock_now();
            if (died[i] && clock_now() - died[i] > ZOMBIE_S) {
                waitpid(w[i], NULL, 0);
                w[i] = spawn_worker(dir, modes[i], made, &nmade);
                died[i] = 0;
            }
        }
        if (!crashed && clock_now() - t0 > CRASH_AT_S) {
            kill(w[0], SIGKILL);
            crashed = true;
        }
    }
    for (int i = 0; i < NWORKERS; i++)
        if (w[i] > 0)
            kill(w[i], SIGKILL);
    clock_nap(ZOMBIE_S);
    for (int i = 0; i < NWORKERS; i++)
        if (w[i] > 0)
            waitpid(w[i], NULL, 0);
    clock_nap(LEFTOVERS_S);
    clean_up(dir, made, nmade);
    clock_nap(2);
}

void demo_scene_main(const char *dir)
{
    set_title();
    signal(SIGCHLD, SIG_DFL);
    signal(SIGINT, SIG_IGN); /* Ctrl-C belongs to the dashboard */
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    pid_t mgr = fork();
    if (mgr == 0)
        manager();
    for (;;)
        epoch(dir);
}
