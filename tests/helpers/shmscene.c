/* shmscene: builds a real scene of shared-memory segments the way PyTorch's
 * DataLoader leaves them, for integration tests and benchmarks.
 *
 * The main process forks workers (plain fork: same exe and cmdline). Each worker
 * creates segments torch_<pid>_<k> in --dir, cycling through the ways PyTorch holds
 * them: named (fd + mapping, name kept), fd (unlinked, fd only), map (unlinked,
 * mapping only), passed (unlinked, fd sent to main with SCM_RIGHTS). Optional extras:
 * orphans of a dead creator, unheld files, hostile names, a churning process tree, a
 * worker that ignores SIGTERM, zombies. When every child has reported its setup done,
 * a manifest is written (atomically) and main waits for SIGTERM/SIGINT (or stdin EOF
 * with --wait-stdin), then SIGKILLs and reaps its children and exits 0, leaving every
 * named file in place. After "ready" main reaps nothing, so a child that dies stays a
 * zombie until main stops. Exit 2 on usage errors, 1 on runtime errors.
 *
 * Standalone on purpose: it links none of shmwatch, so it cannot share its bugs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

enum mode { M_NAMED, M_FD, M_MAP, M_PASSED, M_COUNT };
static const char *const mode_names[M_COUNT] = {"named", "fd", "map", "passed"};
#define MAX_MODES 16

enum role { R_WORKER, R_STUCK, R_ORPHANS, R_CHURN, R_ZOMBIE };
static const char *const role_names[] = {"worker", "stuck worker", "orphan creator", "churn",
                                         "zombie"};

static struct {
    const char *dir, *manifest, *worker_comm;
    long workers, per_worker, orphans, unheld, zombies, zombie_signal;
    uint64_t size, touch, orphan_size, unheld_size;
    enum mode modes[MAX_MODES];
    int nmodes;
    bool touch_set, evil, churn, stuck, wait_stdin;
} O = {.dir = "/dev/shm",
       .workers = 2,
       .per_worker = 4,
       .size = 1 << 20,
       .orphan_size = 256 << 10,
       .unheld_size = 4096,
       .modes = {M_NAMED, M_FD, M_MAP, M_PASSED},
       .nmodes = 4};

/* Hostile entries made with --evil; nobody holds them. */
enum evil_kind { EV_FILE, EV_SYMLINK, EV_DIR, EV_FIFO };
#define EVIL_SIZE 4096
#define EVIL_TARGET "/etc/passwd"
static const struct {
    const char *type, *name;
    enum evil_kind kind;
} evils[] = {
    {"newline", "torch_9_1\nfake", EV_FILE}, {"tab", "torch_9_2\tfake", EV_FILE},
    {"esc", "\x1b[31mRED\x1b[0m", EV_FILE},  {"utf8", "torch_9_3_\xff\xfe", EV_FILE},
    {"space", "my segment 1", EV_FILE},      {"symlink", "torch_1_2_3", EV_SYMLINK},
    {"dir", "torch_dir_1", EV_DIR},          {"nested", "torch_dir_1/inner", EV_FILE},
    {"fifo", "torch_fifo_2", EV_FIFO},
};

struct child {
    pid_t pid;
    enum role role;
    bool done, reaped;
};

/* Children -> main over one SOCK_SEQPACKET socketpair; per sender, order is kept. */
enum msg_type { MSG_DONE = 1, MSG_PASSED, MSG_ERROR };
struct msg {
    int type, index, seg;
    char text[200];
};

static pid_t g_main_pid;
static long g_page;
static int g_sigfd = -1, g_dirfd = -1, g_sock = -1, g_csock = -1;
static struct child *g_kids;
static size_t g_nkids, g_passed_want, g_passed_got;
static int *g_passed;
static unsigned char g_fill[1 << 16];

static _Noreturn void usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("shmscene: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (try --help)\n", stderr);
    exit(2);
}

static void kill_children(void)
{
    for (size_t i = 0; i < g_nkids; i++)
        if (g_kids[i].pid > 0 && !g_kids[i].reaped)
            kill(g_kids[i].pid, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
}

/* Main process only: one line on stderr, children killed and reaped, exit 1. */
static _Noreturn void fatal(const char *fmt, ...)
{
    va_list ap;
    fputs("shmscene: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    kill_children();
    exit(1);
}

/* Children only: report the failure to main and exit. */
static _Noreturn void child_fail(int index, const char *fmt, ...)
{
    struct msg m = {.type = MSG_ERROR, .index = index};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m.text, sizeof m.text, fmt, ap);
    va_end(ap);
    while (send(g_csock, &m, sizeof m, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
    _exit(1);
}

static void child_send(int index, int type, int seg, int fd)
{
    struct msg m = {.type = type, .index = index, .seg = seg};
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        mh.msg_control = u.buf;
        mh.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    while (sendmsg(g_csock, &mh, MSG_NOSIGNAL) < 0) {
        if (errno == ETOOMANYREFS) { /* too many fds in flight: let main catch up */
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            continue;
        }
        if (errno != EINTR)
            child_fail(index, "send to main: %s", strerror(errno));
    }
}

/* Every forked child: die with PARENT (if given), default signals, quiet stdio (a
 * surviving child must not keep a test harness's pipes open). */
static void child_init(pid_t parent)
{
    sigset_t none;
    if (parent > 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close(g_sigfd);
    close(g_sock);
    close(g_dirfd);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            close(null);
    }
}

/* Writes TOUCH bytes from offset 0: tmpfs allocates a page on its first write, and
 * a write (unlike a store through a mapping) fails cleanly with ENOSPC. */
static int fill(int fd, uint64_t touch)
{
    uint64_t off = 0;
    while (off < touch) {
        size_t n = touch - off < sizeof g_fill ? (size_t)(touch - off) : sizeof g_fill;
        ssize_t w = pwrite(fd, g_fill, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        off += (uint64_t)w;
    }
    return 0;
}

/* Creates NAME in DIRFD (O_EXCL) with SIZE apparent and TOUCH written bytes; returns
 * the fd or -errno with *STEP naming what failed. */
static int make_file(int dirfd, const char *name, uint64_t size, uint64_t touch, const char **step)
{
    int fd = openat(dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        *step = "create";
        return -errno;
    }
    int r = 0;
    if (ftruncate(fd, (off_t)size) < 0) {
        *step = "ftruncate";
        r = -errno;
    } else if ((r = fill(fd, touch)) < 0) {
        *step = "write";
    }
    if (r < 0)
        close(fd);
    return r < 0 ? r : fd;
}

/* Maps the whole file and stores into each touched page, as a tensor copy would:
 * the pages become resident in this process (RssShmem). */
static void *map_touch(int fd, uint64_t size, uint64_t touch)
{
    unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return NULL;
    for (uint64_t off = 0; off < touch; off += (uint64_t)g_page)
        p[off] = 0x5a;
    return p;
}

static void worker_segment(int index, int dirfd, long k, enum mode mode)
{
    char name[64];
    const char *step = "";
    snprintf(name, sizeof name, "torch_%d_%ld", (int)getpid(), k);
    int fd = make_file(dirfd, name, O.size, O.touch, &step);
    if (fd < 0)
        child_fail(index, "%s: %s: %s", name, step, strerror(-fd));
    if (mode == M_FD) {
        if (unlinkat(dirfd, name, 0) < 0)
            child_fail(index, "%s: unlink: %s", name, strerror(errno));
        return; /* keep only the fd */
    }
    void *p = map_touch(fd, O.size, O.touch);
    if (!p)
        child_fail(index, "%s: mmap: %s", name, strerror(errno));
    if (mode == M_NAMED)
        return; /* keep fd, mapping and name */
    if (unlinkat(dirfd, name, 0) < 0)
        child_fail(index, "%s: unlink: %s", name, strerror(errno));
    if (mode == M_PASSED)
        child_send(index, MSG_PASSED, (int)k, fd);
    close(fd);
    if (mode == M_PASSED)
        munmap(p, O.size); /* only main holds it now */
}

static void on_fault(int sig)
{
    (void)sig;
}

/* What shows a DataLoader worker of any torch release, named or not: the
 * signals torch's workers catch (SIGBUS, SIGSEGV, SIGFPE) and libtorch
 * mapped as code, here a page of a file named libtorch_cpu.so in a folder
 * of its own, removed at once (the mapping keeps its path). */
static void look_like_torch_worker(int index)
{
    struct sigaction sa = {.sa_handler = on_fault};
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGBUS, SIGSEGV, SIGFPE};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    const char *tmp = getenv("TMPDIR");
    char dir[4096], lib[4200];
    snprintf(dir, sizeof(dir), "%s/shmscene-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        child_fail(index, "mkdtemp %s: %s", dir, strerror(errno));
    snprintf(lib, sizeof(lib), "%s/libtorch_cpu.so", dir);
    int fd = open(lib, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    void *page = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, 4096) == 0)
        page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0); /* as code is */
    int err = errno;
    if (fd >= 0)
        close(fd);
    unlink(lib);
    rmdir(dir);
    if (page == MAP_FAILED)
        child_fail(index, "%s: %s", lib, strerror(err));
}

static _Noreturn void worker_run(int index, bool stuck)
{
    child_init(stuck ? 0 : g_main_pid);
    if (stuck) {
        signal(SIGTERM, SIG_IGN);
        look_like_torch_worker(index);
    }
    if (O.worker_comm)
        prctl(PR_SET_NAME, O.worker_comm);
    int dirfd = open(O.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        child_fail(index, "%s: %s", O.dir, strerror(errno));
    for (long k = 0; k < O.per_worker; k++)
        worker_segment(index, dirfd, k, O.modes[k % O.nmodes]);
    close(dirfd);
    child_send(index, MSG_DONE, 0, -1);
    close(g_csock);
    for (;;)
        pause();
}

static _Noreturn void orphans_run(int index)
{
    child_init(g_main_pid);
    int dirfd = open(O.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        child_fail(index, "%s: %s", O.dir, strerror(errno));
    for (long k = 0; k < O.orphans; k++) {
        char name[64];
        const char *step = "";
        snprintf(name, sizeof name, "torch_%d_%ld", (int)getpid(), k);
        int fd = make_file(dirfd, name, O.orphan_size, O.orphan_size, &step);
        if (fd < 0)
            child_fail(index, "%s: %s: %s", name, step, strerror(-fd));
        close(fd);
    }
    child_send(index, MSG_DONE, 0, -1);
    _exit(0);
}

/* Forks a child loop forever: a grandchild opens and maps PATH (if any), lives 1-5 ms,
 * exits and is reaped, so scans race with processes that vanish. */
static _Noreturn void churn_run(const char *path)
{
    child_init(g_main_pid);
    close_range(3, ~0U, 0); /* hold none of main's passed fds */
    pid_t self = getpid();
    unsigned seed = (unsigned)self;
    for (;;) {
        struct timespec life = {0, (long)(1 + rand_r(&seed) % 5) * 1000000L};
        pid_t gc = fork();
        if (gc == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != self)
                _exit(0);
            int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
                mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
            nanosleep(&life, NULL);
            _exit(0);
        }
        if (gc < 0)
            nanosleep(&(struct timespec){0, 10000000L}, NULL);
        else
            while (waitpid(gc, NULL, 0) < 0 && errno == EINTR)
                ;
    }
}

static struct child *spawn(enum role role)
{
    struct child *c = &g_kids[g_nkids];
    c->role = role;
    c->pid = fork();
    if (c->pid < 0)
        fatal("fork %s: %s", role_names[role], strerror(errno));
    if (c->pid > 0)
        g_nkids++;
    return c;
}

static void push_passed(int fd)
{
    static size_t cap;
    if (g_passed_got == cap) {
        cap = cap ? cap * 2 : 256;
        g_passed = realloc(g_passed, cap * sizeof *g_passed);
        if (!g_passed)
            fatal("out of memory");
    }
    g_passed[g_passed_got++] = fd;
}

/* Reads every queued message without blocking. */
static void drain(void)
{
    for (;;) {
        struct msg m;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
        ssize_t n = recvmsg(g_sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0)
            fatal("receive from workers: %s", strerror(errno));
        if (n == 0)
            return;
        if (n != sizeof m || m.index < 0 || (size_t)m.index >= g_nkids)
            fatal("malformed message from a child");
        struct child *c = &g_kids[m.index];
        if (mh.msg_flags & MSG_CTRUNC)
            fatal("passed fd of %s %d lost: too many open files in main (raise the hard "
                  "RLIMIT_NOFILE)",
                  role_names[c->role], (int)c->pid);
        if (m.type == MSG_ERROR) {
            m.text[sizeof m.text - 1] = '\0';
            fatal("%s %d: %s", role_names[c->role], (int)c->pid, m.text);
        } else if (m.type == MSG_DONE) {
            c->done = true;
        } else if (m.type == MSG_PASSED) {
            struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
            int fd;
            if (!h || h->cmsg_type != SCM_RIGHTS)
                fatal("passed segment of %s %d came without its fd", role_names[c->role],
                      (int)c->pid);
            memcpy(&fd, CMSG_DATA(h), sizeof fd);
            push_passed(fd);
        }
    }
}

static struct child *find_kid(pid_t pid)
{
    for (size_t i = 0; i < g_nkids; i++)
        if (g_kids[i].pid == pid)
            return &g_kids[i];
    return NULL;
}

static void reap_setup(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        struct child *c = find_kid(pid);
        if (!c)
            continue;
        c->reaped = true;
        if (!c->done)
            drain(); /* its last message may have landed after the previous drain */
        if (c->role == R_ORPHANS && c->done && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            continue;
        if (WIFSIGNALED(st))
            fatal("%s %d killed by signal %d during setup", role_names[c->role], (int)pid,
                  WTERMSIG(st));
        fatal("%s %d exited with status %d during setup", role_names[c->role], (int)pid,
              WEXITSTATUS(st));
    }
}

static bool setup_complete(void)
{
    for (size_t i = 0; i < g_nkids; i++) {
        const struct child *c = &g_kids[i];
        if (!c->done || (c->role == R_ORPHANS && !c->reaped))
            return false;
    }
    return true;
}

/* Consumes pending signals: a stop request during setup is fatal (SIGCHLD is left to
 * reap_setup, which runs on every pass of setup_wait). */
static void check_stop(void)
{
    struct signalfd_siginfo si;
    while (read(g_sigfd, &si, sizeof si) == sizeof si)
        if (si.ssi_signo != SIGCHLD)
            fatal("interrupted by signal %u during setup", si.ssi_signo);
}

/* Waits until every worker and the orphan creator are done ("ready" means that). */
static void setup_wait(void)
{
    for (;;) {
        drain();
        check_stop();
        reap_setup();
        if (setup_complete())
            break;
        struct pollfd p[2] = {{.fd = g_sock, .events = POLLIN}, {.fd = g_sigfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            fatal("poll: %s", strerror(errno));
    }
    if (g_passed_got != g_passed_want)
        fatal("received %zu passed fds, expected %zu", g_passed_got, g_passed_want);
}

static void make_main_files(void)
{
    const char *step = "";
    char name[64];
    for (long k = 0; k < O.unheld; k++) {
        if (k % 1024 == 0)
            check_stop();
        snprintf(name, sizeof name, "unheld_%ld", k);
        int fd = make_file(g_dirfd, name, O.unheld_size, O.unheld_size, &step);
        if (fd < 0)
            fatal("%s: %s: %s", name, step, strerror(-fd));
        close(fd);
    }
    for (size_t i = 0; O.evil && i < sizeof evils / sizeof evils[0]; i++) {
        int r = 0, fd;
        switch (evils[i].kind) {
        case EV_FILE:
            fd = make_file(g_dirfd, evils[i].name, EVIL_SIZE, EVIL_SIZE, &step);
            r = fd < 0 ? fd : close(fd);
            break;
        case EV_SYMLINK:
            step = "symlink";
            r = symlinkat(EVIL_TARGET, g_dirfd, evils[i].name) < 0 ? -errno : 0;
            break;
        case EV_DIR:
            step = "mkdir";
            r = mkdirat(g_dirfd, evils[i].name, 0700) < 0 ? -errno : 0;
            break;
        case EV_FIFO:
            step = "mkfifo";
            r = mkfifoat(g_dirfd, evils[i].name, 0600) < 0 ? -errno : 0;
            break;
        }
        if (r < 0) /* the names are hostile: name the entry by its type */
            fatal("evil-%s: %s: %s", evils[i].type, step, strerror(-r));
    }
}

static void put_segment(FILE *f, const char *mode, pid_t creator, uint64_t size, uint64_t touched,
                        const char *name)
{
    fprintf(f, "segment %s %d %llu %llu ", mode, (int)creator, (unsigned long long)size,
            (unsigned long long)touched);
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        fprintf(f, "%02x", *s);
    fputc('\n', f);
}

static void write_manifest_to(FILE *f)
{
    static const char *const keys[] = {"worker", "stuck", "orphan_creator", "churn", "zombie"};
    char name[64];
    fprintf(f, "main %d\n", (int)g_main_pid);
    for (size_t i = 0; i < g_nkids; i++)
        fprintf(f, "%s %d\n", keys[g_kids[i].role], (int)g_kids[i].pid);
    for (size_t i = 0; i < g_nkids; i++) {
        const struct child *c = &g_kids[i];
        for (long k = 0; (c->role == R_WORKER || c->role == R_STUCK) && k < O.per_worker; k++) {
            snprintf(name, sizeof name, "torch_%d_%ld", (int)c->pid, k);
            put_segment(f, mode_names[O.modes[k % O.nmodes]], c->pid, O.size, O.touch, name);
        }
        for (long k = 0; c->role == R_ORPHANS && k < O.orphans; k++) {
            snprintf(name, sizeof name, "torch_%d_%ld", (int)c->pid, k);
            put_segment(f, "orphan", c->pid, O.orphan_size, O.orphan_size, name);
        }
    }
    for (long k = 0; k < O.unheld; k++) {
        snprintf(name, sizeof name, "unheld_%ld", k);
        put_segment(f, "unheld", g_main_pid, O.unheld_size, O.unheld_size, name);
    }
    for (size_t i = 0; O.evil && i < sizeof evils / sizeof evils[0]; i++) {
        char mode[32];
        bool file = evils[i].kind == EV_FILE;
        uint64_t size = file ? EVIL_SIZE : evils[i].kind == EV_SYMLINK ? strlen(EVIL_TARGET) : 0;
        snprintf(mode, sizeof mode, "evil-%s", evils[i].type);
        put_segment(f, mode, g_main_pid, size, file ? EVIL_SIZE : 0, evils[i].name);
    }
    fputs("ready\n", f);
}

static void write_manifest(void)
{
    if (!O.manifest) {
        write_manifest_to(stdout);
        if (fflush(stdout) != 0)
            fatal("stdout: %s", strerror(errno));
        return;
    }
    size_t len = strlen(O.manifest) + 16;
    char *tmp = malloc(len);
    if (!tmp)
        fatal("out of memory");
    snprintf(tmp, len, "%s.tmp", O.manifest);
    FILE *f = fopen(tmp, "we");
    if (!f)
        fatal("%s: %s", tmp, strerror(errno));
    write_manifest_to(f);
    if (ferror(f) | (fclose(f) != 0))
        fatal("%s: write failed: %s", tmp, strerror(errno));
    if (rename(tmp, O.manifest) < 0)
        fatal("%s: rename: %s", O.manifest, strerror(errno));
    free(tmp);
}

/* Until SIGTERM/SIGINT/SIGHUP, or EOF on stdin with --wait-stdin. Reaps nothing. */
static void wait_for_stop(void)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = g_sigfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(p, O.wait_stdin ? 2 : 1, -1) < 0 && errno != EINTR)
            fatal("poll: %s", strerror(errno));
        struct signalfd_siginfo si;
        while (read(g_sigfd, &si, sizeof si) == sizeof si)
            if (si.ssi_signo != SIGCHLD)
                return;
        if (O.wait_stdin && p[1].revents) {
            char buf[4096];
            ssize_t n = read(0, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                return;
        }
    }
}

/* How many of each worker's segments use MODE. */
static uint64_t per_worker(enum mode mode)
{
    uint64_t n = 0;
    for (int j = 0; j < O.nmodes; j++)
        if (O.modes[j] == mode && O.per_worker > j)
            n += (uint64_t)(O.per_worker - j + O.nmodes - 1) / (uint64_t)O.nmodes;
    return n;
}

/* Raises RLIMIT_NOFILE (inherited by the workers) so fd-holding modes scale: as root
 * with CAP_SYS_RESOURCE, past the hard limit when main's passed fds need it. Fails
 * before forking anything when the limit cannot be met. */
static void raise_nofile(void)
{
    uint64_t held = per_worker(M_NAMED) + per_worker(M_FD);
    uint64_t need = 64 + (g_passed_want > held ? g_passed_want : held);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max &&
        setrlimit(RLIMIT_NOFILE, &(struct rlimit){need, need}) == 0)
        return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max)
        fatal("the scene needs %llu open fds in one process (%zu passed to main, %llu held "
              "per worker) but RLIMIT_NOFILE is %llu: use fewer segments or other --modes",
              (unsigned long long)need, g_passed_want, (unsigned long long)held,
              (unsigned long long)rl.rlim_max);
}

static long parse_count(const char *opt, const char *s, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > max)
        usage_error("--%s: expected a count from 0 to %ld, got '%s'", opt, max, s);
    return v;
}

static uint64_t parse_bytes(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mult = 1;
    if (*end && strchr("kKmMgG", *end)) {
        mult = (uint64_t)1 << (strchr("kK", *end) ? 10 : strchr("mM", *end) ? 20 : 30);
        end++;
        if (!strcmp(end, "iB") || !strcmp(end, "B"))
            end += strlen(end);
    }
    if (errno || end == s || *end || s[0] == '-' || v > (UINT64_C(1) << 50) / mult)
        usage_error("--%s: expected bytes (e.g. 4096, 256K, 1M), got '%s'", opt, s);
    return (uint64_t)v * mult;
}

static void parse_modes(const char *s)
{
    char *copy = strdup(s), *save = NULL;
    O.nmodes = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int m = 0;
        while (m < M_COUNT && strcmp(t, mode_names[m]))
            m++;
        if (m == M_COUNT)
            usage_error("--modes: unknown mode '%s' (named, fd, map, passed)", t);
        if (O.nmodes == MAX_MODES)
            usage_error("--modes: at most %d entries", MAX_MODES);
        O.modes[O.nmodes++] = (enum mode)m;
    }
    free(copy);
    if (!O.nmodes)
        usage_error("--modes: empty list");
}

static const char usage[] =
    "usage: shmscene [options]\n"
    "Builds a scene of shared-memory segments as PyTorch's DataLoader makes them.\n"
    "  --dir PATH          where segments are created (default /dev/shm)\n"
    "  --workers N         forked workers (default 2)\n"
    "  --per-worker S      segments per worker, torch_<pid>_<k> (default 4)\n"
    "  --modes LIST        cycle of named,fd,map,passed (default all four)\n"
    "  --size BYTES        apparent size of each segment (default 1M)\n"
    "  --touch BYTES       bytes written to each segment (default: --size)\n"
    "  --orphans O         named torch files of a creator that has exited\n"
    "  --orphan-size BYTES size of each orphan, fully written (default 256K)\n"
    "  --unheld U          files unheld_<k> made by main, held by nobody\n"
    "  --unheld-size BYTES size of each unheld file, fully written (default 4096)\n"
    "  --evil              hostile names, a symlink, a directory and a FIFO\n"
    "  --churn             a process that forks short-lived segment openers forever\n"
    "  --stuck-orphan      one more worker (same segments) that ignores SIGTERM and\n"
    "                      outlives main; listed as 'stuck', not 'worker'; it\n"
    "                      catches the signals torch's workers catch and maps a\n"
    "                      file named libtorch_cpu.so, as a DataLoader worker does\n"
    "  --zombies Z         children of main that exit and are never reaped\n"
    "  --zombie-signal N   the zombies end by signal N (no core) instead of exit 0\n"
    "  --worker-comm NAME  set the workers' comm (e.g. pt_data_worker)\n"
    "  --manifest PATH     write the manifest there (default stdout) when ready\n"
    "  --wait-stdin        also stop at EOF on stdin\n"
    "Manifest lines: main PID, worker PID, stuck PID, orphan_creator PID, churn PID,\n"
    "zombie PID, segment MODE CREATOR SIZE TOUCHED HEXNAME, then ready.\n"
    "Stops on SIGTERM/SIGINT: children are killed, named files stay.\n";

static void parse_opts(int argc, char **argv)
{
    enum {
        O_DIR = 256,
        O_WORKERS,
        O_PER,
        O_MODES,
        O_SIZE,
        O_TOUCH,
        O_ORPH,
        O_ORPHSZ,
        O_UNHELD,
        O_UNHELDSZ,
        O_EVIL,
        O_CHURN,
        O_STUCK,
        O_ZOMBIES,
        O_ZSIG,
        O_COMM,
        O_MANIFEST,
        O_STDIN,
        O_HELP
    };
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, O_DIR},
        {"workers", required_argument, NULL, O_WORKERS},
        {"per-worker", required_argument, NULL, O_PER},
        {"modes", required_argument, NULL, O_MODES},
        {"size", required_argument, NULL, O_SIZE},
        {"touch", required_argument, NULL, O_TOUCH},
        {"orphans", required_argument, NULL, O_ORPH},
        {"orphan-size", required_argument, NULL, O_ORPHSZ},
        {"unheld", required_argument, NULL, O_UNHELD},
        {"unheld-size", required_argument, NULL, O_UNHELDSZ},
        {"evil", no_argument, NULL, O_EVIL},
        {"churn", no_argument, NULL, O_CHURN},
        {"stuck-orphan", no_argument, NULL, O_STUCK},
        {"zombies", required_argument, NULL, O_ZOMBIES},
        {"zombie-signal", required_argument, NULL, O_ZSIG},
        {"worker-comm", required_argument, NULL, O_COMM},
        {"manifest", required_argument, NULL, O_MANIFEST},
        {"wait-stdin", no_argument, NULL, O_STDIN},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_DIR:
            O.dir = optarg;
            break;
        case O_WORKERS:
            O.workers = parse_count("workers", optarg, 30000);
            break;
        case O_PER:
            O.per_worker = parse_count("per-worker", optarg, 10000000);
            break;
        case O_MODES:
            parse_modes(optarg);
            break;
        case O_SIZE:
            O.size = parse_bytes("size", optarg);
            break;
        case O_TOUCH:
            O.touch = parse_bytes("touch", optarg);
            O.touch_set = true;
            break;
        case O_ORPH:
            O.orphans = parse_count("orphans", optarg, 10000000);
            break;
        case O_ORPHSZ:
            O.orphan_size = parse_bytes("orphan-size", optarg);
            break;
        case O_UNHELD:
            O.unheld = parse_count("unheld", optarg, 10000000);
            break;
        case O_UNHELDSZ:
            O.unheld_size = parse_bytes("unheld-size", optarg);
            break;
        case O_EVIL:
            O.evil = true;
            break;
        case O_CHURN:
            O.churn = true;
            break;
        case O_STUCK:
            O.stuck = true;
            break;
        case O_ZOMBIES:
            O.zombies = parse_count("zombies", optarg, 1000);
            break;
        case O_ZSIG:
            O.zombie_signal = parse_count("zombie-signal", optarg, 31);
            break;
        case O_COMM:
            O.worker_comm = optarg;
            break;
        case O_MANIFEST:
            O.manifest = optarg;
            break;
        case O_STDIN:
            O.wait_stdin = true;
            break;
        case O_HELP:
            fputs(usage, stdout);
            exit(0);
        default:
            usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        usage_error("unexpected argument '%s'", argv[optind]);
    if (!O.touch_set)
        O.touch = O.size;
    if (O.size == 0)
        usage_error("--size: segments are mapped, so they need at least 1 byte");
    if (O.touch > O.size)
        usage_error("--touch (%llu) exceeds --size (%llu)", (unsigned long long)O.touch,
                    (unsigned long long)O.size);
}

int main(int argc, char **argv)
{
    parse_opts(argc, argv);
    g_main_pid = getpid();
    g_page = sysconf(_SC_PAGESIZE);
    memset(g_fill, 0x5a, sizeof g_fill);
    g_passed_want = (size_t)(per_worker(M_PASSED) * (uint64_t)(O.workers + O.stuck));
    raise_nofile();
    /* Grandchildren orphaned at shutdown (churn) come back to main to be reaped. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    g_dirfd = open(O.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (g_dirfd < 0)
        fatal("%s: %s", O.dir, strerror(errno));
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGCHLD);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    g_sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    int sv[2];
    if (g_sigfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        fatal("setup: %s", strerror(errno));
    g_sock = sv[0];
    g_csock = sv[1];
    g_kids = calloc((size_t)(O.workers + O.zombies) + 4, sizeof *g_kids);
    if (!g_kids)
        fatal("out of memory");

    for (long i = 0; i <= O.workers; i++) {
        bool stuck = i == O.workers;
        if (stuck && !O.stuck)
            break;
        if (spawn(stuck ? R_STUCK : R_WORKER)->pid == 0)
            worker_run((int)i, stuck);
    }
    if (O.orphans && spawn(R_ORPHANS)->pid == 0)
        orphans_run((int)g_nkids);
    close(g_csock);
    g_csock = -1;
    make_main_files(); /* while the children work */
    setup_wait();
    close(g_sock);
    g_sock = -1;

    if (O.churn) {
        /* Only a named-mode segment: opening an orphan or unheld file would change
         * its state under the tests' feet. */
        char *path = NULL;
        for (int j = 0; j < O.nmodes && j < O.per_worker && O.workers > 0; j++) {
            if (O.modes[j] != M_NAMED)
                continue;
            size_t len = strlen(O.dir) + 64;
            if ((path = malloc(len)))
                snprintf(path, len, "%s/torch_%d_%d", O.dir, (int)g_kids[0].pid, j);
            break;
        }
        if (spawn(R_CHURN)->pid == 0)
            churn_run(path);
        free(path);
    }
    for (long z = 0; z < O.zombies; z++) {
        struct child *c = spawn(R_ZOMBIE);
        siginfo_t si;
        if (c->pid == 0) {
            if (O.zombie_signal) {
                struct rlimit none = {0, 0};
                setrlimit(RLIMIT_CORE, &none);
                signal((int)O.zombie_signal, SIG_DFL);
                raise((int)O.zombie_signal);
            }
            _exit(0);
        }
        while (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
            ;
    }
    close(g_dirfd);
    g_dirfd = -1;
    check_stop();
    write_manifest();
    wait_for_stop();
    kill_children();
    return 0;
}
