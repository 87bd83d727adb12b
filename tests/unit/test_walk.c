/* The one-pass /proc walk: the stat, status and cmdline parsers, the
 * per-process holder reader in both of its ways of reading mappings
 * (PROCMAP_QUERY and the maps text), and a walk of the real /proc that
 * must find this very process holding its files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/pidscan.h"
#include "collect/procmap.h"
#include "collect/procs.h"
#include "collect/walk.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

static void test_parse_stat(void **state)
{
    (void)state;
    /* comm with spaces and parentheses; flags with PF_KTHREAD clear;
     * starttime 123456; startcode 0x557a3c400000; sigcatch 0x4a02 (SIGBUS
     * SIGSEGV SIGFPE SIGINT) */
    const char *t = "4321 (a) b (c) S 4000 4321 1 34816 4321 4194560 100 0 0 0 5 6 0 0 20 0 "
                    "1 0 123456 12345678 900 18446744073709551615 93983485198336 93983485300000 "
                    "0 0 0 0 0 4096 18946 0 0 0 17 1 0 0 0 0 0\n";
    struct proc p = {0};
    assert_true(procs_parse_stat(t, &p));
    assert_int_equal(p.pid, 4321);
    assert_string_equal(p.comm, "a) b (c");
    assert_int_equal(p.state, 'S');
    assert_int_equal(p.ppid, 4000);
    assert_int_equal(p.pgid, 4321);
    assert_int_equal(p.sid, 1);
    assert_false(p.kernel_thread);
    assert_int_equal(p.start_ticks, 123456);
    assert_int_equal(p.start_code, 0x557a3c400000ull);
    assert_int_equal(p.sigcatch, 18946);
    assert_int_equal(p.nspid, 4321);

    const char *k = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 "
                    "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 0 0 0 0 0 0\n";
    struct proc q = {.sigcatch = 7};
    assert_true(procs_parse_stat(k, &q));
    assert_true(q.kernel_thread);
    assert_int_equal(q.ppid, 0);
    assert_int_equal(q.start_ticks, 3);
    assert_int_equal(q.sigcatch, 0); /* a kernel thread's is not read */

    /* A long comm is cut to 15 bytes; a line without ')' is refused. */
    struct proc r = {0};
    assert_true(procs_parse_stat("7 (a_very_long_command_name) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 "
                                 "0 1 0 99 0 0",
                                 &r));
    assert_string_equal(r.comm, "a_very_long_com");
    assert_int_equal(r.state, 'Z');
    assert_int_equal(r.start_ticks, 99);
    assert_false(procs_parse_stat("7 (x S 1 7", &r));
    assert_false(procs_parse_stat("", &r));
}

/* Numbers at the edges of 64 bits (found by fuzzing): LLONG_MIN is read
 * without overflowing its negation; a number beyond 64 bits is refused
 * rather than wrapped into a plausible pid. */
static void test_parse_stat_extremes(void **state)
{
    (void)state;
    struct proc p = {0};
    assert_true(procs_parse_stat("1 () S -9223372036854775808 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                                 "1 0 99 0 0 18446744073709551615 0",
                                 &p));
    assert_int_equal(p.start_ticks, 99);
    assert_false(procs_parse_stat("1 () S -9223372036854775809 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                                  "1 0 99 0 0",
                                  &p));
    assert_false(procs_parse_stat("1 () S 18446744073709551617 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
                                  "1 0 99 0 0",
                                  &p));
    assert_false(procs_parse_stat("1() S-10000000000000000000000000000000000000000000000000000000"
                                  "00000000\3600000-4",
                                  &p));
    struct proc q = {.uid = 7, .rss_anon = 7}; /* both overwritten by the parse */
    procs_parse_status("Uid:\t0\t-9223372036854775808\nRssAnon:\t-9223372036854775808 kB\n", &q);
    assert_int_equal(q.uid, 0);
    assert_int_equal(q.rss_anon, 0); /* LLONG_MIN kB, wrapped: no overflow trap */
}

static void test_parse_status(void **state)
{
    (void)state;
    const char *t = "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4321\n"
                    "NSpid:\t4321\t17\nUid:\t1000\t1001\t1002\t1003\nGid:\t0\t0\t0\t0\n"
                    "RssAnon:\t  204800 kB\nRssFile:\t    9000 kB\nRssShmem:\t    4096 kB\n"
                    "SigCgt:\t0000000180004a02\n";
    struct proc p = {.pid = 4321, .nspid = 4321};
    procs_parse_status(t, &p);
    assert_int_equal(p.uid, 1001);
    assert_int_equal(p.rss_anon, 204800ull * 1024);

    assert_int_equal(p.nspid, 17);
    assert_int_equal(p.sigcatch, 0x180004a02ull);
}

/* statm: RssAnon is resident - shared pages; a malformed text or one with
 * more shared than resident leaves it alone. */
static void test_parse_statm(void **state)
{
    (void)state;
    struct proc p = {.rss_anon = 7};
    procs_parse_statm("70000 5000 1200 300 0 9000 0\n", &p, 4096);
    assert_int_equal(p.rss_anon, 3800ull * 4096);
    procs_parse_statm("0 0 0 0 0 0 0\n", &p, 4096); /* a zombie's, a kernel thread's */
    assert_int_equal(p.rss_anon, 0);
    p.rss_anon = 7;
    procs_parse_statm("70000 100 1200 300 0 9000 0\n", &p, 4096);
    procs_parse_statm("70000 x\n", &p, 4096);
    procs_parse_statm("", &p, 4096);
    assert_int_equal(p.rss_anon, 7);
}

/* RssShmem, read for the details page only, of this very process: at least
 * the shared anonymous memory it has touched; refused for a pid that is
 * another process's (wrong start time) or gone. */
static void test_read_shmem(void **state)
{
    (void)state;
    size_t len = 1u << 20;
    char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    memset(mem, 1, len);
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(proc >= 0);
    char text[4096];
    FILE *f = fopen("/proc/self/stat", "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    struct proc me = {0};
    assert_true(procs_parse_stat(text, &me));
    uint64_t shmem = 0;
    assert_int_equal(procs_read_shmem(proc, getpid(), me.start_ticks, &shmem), 0);
    assert_true(shmem >= len);
    assert_int_equal(procs_read_shmem(proc, getpid(), me.start_ticks + 1, &shmem), -ESRCH);
    assert_int_equal(procs_read_shmem(proc, 999999999, 1, &shmem), -ESRCH);
    close(proc);
    munmap(mem, len);
}

static void test_join_cmdline(void **state)
{
    (void)state;
    const char args[] = "python3\0train.py\0--workers\0004\0";
    char *s = procs_join_cmdline(args, sizeof(args) - 1, "python3", false);
    assert_string_equal(s, "python3 train.py --workers 4");
    free(s);
    s = procs_join_cmdline("", 0, "kworker/0:1", false);
    assert_string_equal(s, "[kworker/0:1]");
    free(s);
    s = procs_join_cmdline("", 0, "python3", true);
    assert_string_equal(s, "[python3] <defunct>");
    free(s);
}

/* Three files in /tmp held by this process: named (fd and mapping), hidden
 * by fd only, hidden by mapping only. */
struct held {
    char dir[64];
    int named_fd, hidden_fd;
    void *named_map, *hidden_map;
    dev_t dev;
    ino_t named, by_fd, by_map;
};

static int make(struct held *h, const char *name, ino_t *ino)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", h->dir, name);
    int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 8192), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    h->dev = st.st_dev;
    *ino = st.st_ino;
    return fd;
}

static int setup(void **state)
{
    struct held *h = calloc(1, sizeof(*h));
    snprintf(h->dir, sizeof(h->dir), "/tmp/shmwatch-walk-XXXXXX");
    assert_non_null(mkdtemp(h->dir));
    h->named_fd = make(h, "torch_1_1", &h->named);
    h->named_map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, h->named_fd, 0);
    h->hidden_fd = make(h, "torch_1_2", &h->by_fd);
    int m = make(h, "torch_1_3", &h->by_map);
    h->hidden_map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, m, 4096);
    close(m);
    char path[128];
    snprintf(path, sizeof(path), "%s/torch_1_2", h->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/torch_1_3", h->dir);
    unlink(path);
    assert_true(h->named_map != MAP_FAILED && h->hidden_map != MAP_FAILED);
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    struct held *h = *state;
    munmap(h->named_map, 8192);
    munmap(h->hidden_map, 4096);
    close(h->named_fd);
    close(h->hidden_fd);
    char path[128];
    snprintf(path, sizeof(path), "%s/torch_1_1", h->dir);
    unlink(path);
    rmdir(h->dir);
    free(h);
    return 0;
}

static const struct shm_holder *find(const struct holder_list *hl, ino_t ino)
{
    for (size_t i = 0; i < hl->n; i++)
        if (hl->items[i].ino == ino && hl->items[i].pid == getpid())
            return &hl->items[i];
    return NULL;
}

static void check_held(const struct held *h, const struct holder_list *hl)
{
    const struct shm_holder *r = find(hl, h->named);
    assert_non_null(r);
    assert_int_equal(r->fd, h->named_fd);
    assert_true(r->mapped);
    assert_false(r->deleted);
    assert_int_equal(r->map_bytes, 8192);

    r = find(hl, h->by_fd);
    assert_non_null(r);
    assert_int_equal(r->fd, h->hidden_fd);
    assert_false(r->mapped);
    assert_true(r->deleted);
    assert_true(r->stat_ok);
    assert_int_equal(r->size, 8192);
    assert_non_null(r->path);
    assert_non_null(strstr(r->path, "/torch_1_2"));
    assert_null(strstr(r->path, "(deleted)"));

    r = find(hl, h->by_map);
    assert_non_null(r);
    assert_int_equal(r->fd, -1);
    assert_true(r->mapped);
    assert_true(r->deleted);
    assert_int_equal(r->map_bytes, 8192); /* offset 4096 + 4096 mapped */
    assert_non_null(r->path);
    assert_non_null(strstr(r->path, "/torch_1_3"));
    if (map_files_readable()) { /* map_files/ gives the inode's own size */
        assert_true(r->stat_ok);
        assert_int_equal(r->size, 8192);
    }
}

/* This process's startcode, from its stat. */
static uint64_t self_start_code(int piddir)
{
    struct buf b;
    buf_init(&b);
    struct proc me = {0};
    assert_int_equal(read_file_at(piddir, "stat", &b, READ_LINE_MAX), 0);
    assert_true(procs_parse_stat(b.data, &me));
    buf_free(&b);
    assert_true(me.start_code > 1);
    return me.start_code;
}

/* The executable from the maps text just read (pidscan_exe): what the exe
 * link says; nothing for another pid, without a startcode, or when the
 * line is on a watched device (a watched line may have been cut at its
 * " (deleted)"): the link is read then. */
static void test_exe_from_text(void **state)
{
    (void)state;
    char link[4096];
    ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
    assert_true(n > 0);
    link[n] = '\0';
    struct stat bin;
    assert_int_equal(stat("/proc/self/exe", &bin), 0);
    int piddir = open("/proc/self", O_RDONLY | O_DIRECTORY);
    assert_true(piddir >= 0);
    uint64_t start_code = self_start_code(piddir);
    dev_t made_up = makedev(0xab, 1);
    for (int watched = 0; watched < 2; watched++) {
        struct holder_list hl = {0};
        struct warnings w;
        warn_init(&w);
        procmap_force(PROCMAP_WAY_TEXT); /* read by pidscan_new */
        struct pidscan *ps =
            pidscan_new(watched ? &bin.st_dev : &made_up, 1, NULL, &hl, &w, NULL);
        procmap_force(PROCMAP_WAY_QUERY);
        assert_null(pidscan_exe(ps, getpid(), start_code)); /* no walk yet */
        pidscan_run(ps, piddir, getpid());
        const char *exe = pidscan_exe(ps, getpid(), start_code);
        if (watched)
            assert_null(exe);
        else if (!exe || strcmp(exe, link) != 0)
            fail_msg("exe from the text: %s, the link: %s", exe ? exe : "(none)", link);
        assert_null(pidscan_exe(ps, getpid() + 1, start_code));
        assert_null(pidscan_exe(ps, getpid(), 1)); /* startcode not shown */
        assert_null(pidscan_exe(ps, getpid(), 0)); /* no memory */
        pidscan_free(ps);
        holders_free(&hl);
        warn_free(&w);
    }
    close(piddir);
}

/* The named file is known from the listing, told one by one
 * (pidscan_known) or as the list (pidscan_new's, taken in at the first
 * holder). */
static void run_pidscan(const struct held *h, bool text, bool as_list, struct holder_list *hl)
{
    struct warnings w;
    warn_init(&w);
    struct file_list fl = {0};
    if (as_list) {
        struct shm_file *f = VEC_PUSH(fl.items, fl.n, fl.cap);
        f->dev = h->dev;
        f->ino = h->named;
    }
    procmap_force(text ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY); /* read by pidscan_new */
    struct pidscan *ps = pidscan_new(&h->dev, 1, &fl, hl, &w, NULL);
    procmap_force(PROCMAP_WAY_QUERY);
    if (!as_list)
        pidscan_known(ps, h->dev, h->named);
    int piddir = open("/proc/self", O_RDONLY | O_DIRECTORY);
    assert_true(piddir >= 0);
    assert_true(pidscan_run(ps, piddir, getpid()) >= 3);
    assert_int_equal(pidscan_queried(ps), !text && kernel_has_query());
    /* No executable from the text through the ioctl (test_exe_from_text). */
    if (!text)
        assert_null(pidscan_exe(ps, getpid(), self_start_code(piddir)));
    close(piddir);
    pidscan_free(ps);
    files_free(&fl);
    warn_free(&w);
}

static void test_pidscan_both_ways(void **state)
{
    struct held *h = *state;
    for (int way = 0; way < 4; way++) {
        struct holder_list hl = {0};
        run_pidscan(h, way & 1, way & 2, &hl);
        check_held(h, &hl);
        /* The listed file needs no name: it comes from the listing. */
        assert_null(find(&hl, h->named)->path);
        /* Every other inode is counted once as unlisted (the model's bound
         * on hidden segments), however many records it has. */
        size_t distinct = 0;
        for (size_t i = 0; i < hl.n; i++) {
            const struct shm_holder *r = &hl.items[i];
            bool again = r->dev == h->dev && r->ino == h->named;
            for (size_t j = 0; j < i && !again; j++)
                again = hl.items[j].dev == r->dev && hl.items[j].ino == r->ino;
            distinct += !again;
        }
        assert_true(distinct >= 2); /* by_fd, by_map */
        assert_int_equal(hl.unlisted, distinct);
        holders_free(&hl);
    }
}

static void test_walk_self(void **state)
{
    struct held *h = *state;
    struct proc_list pl = {0};
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct sysroot sys = test_sysroot("/proc", NULL);
    struct walk_opts o = {
        .sys = &sys, .devs = &h->dev, .ndevs = 1,
        .world_pid = getpid(),
    };
    assert_int_equal(walk_run(&o, &pl, &hl, &w), 0);
    sysroot_close(&sys);
    check_held(h, &hl);
    const struct proc *me = procs_find(&pl, getpid());
    assert_non_null(me);
    assert_string_equal(me->comm, "test_walk");
    assert_non_null(me->cmdline); /* a holder: its costly facts are read */
    assert_non_null(strstr(me->cmdline, "test_walk"));
    assert_non_null(me->exe);
    assert_true(me->mntns != 0);
    assert_int_equal(me->uid, geteuid()); /* the owner of /proc/PID */
    assert_true(me->rss_anon > 0);
    /* Its parent is read too (it could be a DataLoader's main). */
    if (getppid() > 0) { /* 0: the parent is outside this pid namespace */
        const struct proc *parent = procs_find(&pl, getppid());
        assert_non_null(parent);
        assert_non_null(parent->cmdline);
    }
    for (size_t i = 1; i < pl.n; i++)
        assert_true(pl.items[i - 1].pid < pl.items[i].pid);
    /* A kernel thread holds nothing and is never read in detail. */
    for (size_t i = 0; i < pl.n; i++)
        if (pl.items[i].kernel_thread)
            assert_null(pl.items[i].cmdline);
    procs_free(&pl);
    holders_free(&hl);
    warn_free(&w);
}

/* A process that maps an executable file named like libtorch is noted as
 * having PyTorch loaded, in both ways of reading mappings, also when the
 * scan has already learnt the file (the second process in one scan); one
 * that maps only other executables is not. */
static void test_pidscan_torch(void **state)
{
    (void)state;
    char dir[] = "/tmp/shmwatch-torch-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char lib[64];
    snprintf(lib, sizeof(lib), "%s/libtorch_fake.so", dir);
    int fd = open(lib, O_CREAT | O_RDWR, 0700);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    int piddir = open("/proc/self", O_RDONLY | O_DIRECTORY);
    assert_true(piddir >= 0);
    for (int text = 0; text < 2; text++) {
        struct holder_list hl = {0};
        struct warnings w;
        warn_init(&w);
        procmap_force(text ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY); /* read by pidscan_new */
        struct pidscan *ps = pidscan_new(&st.st_dev, 1, NULL, &hl, &w, NULL);
        procmap_force(PROCMAP_WAY_QUERY);
        pidscan_run(ps, piddir, getpid());
        assert_int_equal(hl.ntorch, 0); /* not mapped yet */
        void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        assert_true(m != MAP_FAILED);
        pidscan_run(ps, piddir, getpid());
        pidscan_run(ps, piddir, getpid()); /* the name asked once, then known */
        assert_int_equal(hl.ntorch, 2);
        assert_int_equal(hl.torch_pids[1], getpid());
        munmap(m, 4096);
        pidscan_free(ps);
        holders_free(&hl);
        warn_free(&w);
    }
    close(piddir);
    close(fd);
    unlink(lib);
    rmdir(dir);
}

/* A stat line of a fixture process: pid, comm, ppid and start time. */
static void fake_stat(struct test_tree *t, int pid, const char *comm, int ppid,
                      unsigned long long start)
{
    char rel[32], text[256];
    snprintf(rel, sizeof(rel), "%d/stat", pid);
    snprintf(text, sizeof(text),
             "%d (%s) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n", pid, comm, ppid,
             pid, pid, start);
    tree_file(t, rel, text);
}

/* A walk of the fixture /proc of t (no mount watched), whose process
 * world is the watched one: its processes into pl (to free); walk_run's
 * result. */
static int walk_fixture(const struct test_tree *t, pid_t world, struct proc_list *pl)
{
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct sysroot sys = test_sysroot(t->dir, NULL);
    struct walk_opts o = {.sys = &sys, .world_pid = world};
    int rc = walk_run(&o, pl, &hl, &w);
    sysroot_close(&sys);
    holders_free(&hl);
    warn_free(&w);
    return rc;
}

/* The second pass reads the costly facts of wanted parents: a parent whose
 * pid is another process's by then (a pid reused within the scan) must not
 * lend that newcomer's cmdline. On a fixture /proc: worker 200's cmdline
 * is a FIFO, so the walk's first pass waits on it while a child of the test
 * replaces pid 100 (its parent, not wanted until the second pass) by a
 * process of another start time; then the walk goes on. */
static void test_second_pass_pid_reused(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "shmwatch-walk-reuse");
    fake_stat(&t, 100, "python3", 1, 500);
    tree_file(&t, "100/cmdline", "python3\ntrain.py"); /* its first cmdline: never read */
    fake_stat(&t, 200, "pt_data_worker", 100, 600);
    char fifo[512];
    snprintf(fifo, sizeof(fifo), "%s", tree_path(&t, "200/cmdline"));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGPIPE, SIG_IGN);
        int fd = open(fifo, O_WRONLY); /* until the walk opens it to read */
        fake_stat(&t, 100, "impostor", 1, 999); /* pid 100 reused */
        tree_file(&t, "100/cmdline", "impostor");
        if (fd >= 0 && write(fd, "worker", 6) != 6)
            _exit(2);
        _exit(fd >= 0 ? 0 : 1);
    }
    struct proc_list pl = {0};
    int rc = walk_fixture(&t, 200, &pl);
    int release = open(fifo, O_RDONLY | O_NONBLOCK); /* should the walk never have opened it */
    if (release >= 0)
        close(release);
    int status = -1;
    waitpid(child, &status, 0);
    assert_int_equal(rc, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const struct proc *worker = procs_find(&pl, 200);
    assert_non_null(worker);
    assert_string_equal(worker->cmdline, "worker");
    const struct proc *parent = procs_find(&pl, 100);
    assert_non_null(parent);
    assert_string_equal(parent->comm, "python3"); /* as the first pass read it */
    assert_null(parent->cmdline); /* not the newcomer's "impostor" */
    procs_free(&pl);
    tree_remove(&t);
}

/* A kernel thread is never read for its costly facts, also when it is the
 * parent of a fingerprinted worker (a process the kernel started, with
 * kthreadd as its parent): worker 300's own facts are read, kthreadd's
 * (pid 2, PF_KTHREAD set) keep cmdline NULL, as want() leaves every kernel
 * thread. */
static void test_worker_of_kthreadd(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "shmwatch-walk-kthread");
    tree_file(&t, "2/stat", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 "
                            "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 0 0 0 0 "
                            "0 0\n");
    tree_file(&t, "2/cmdline", ""); /* as the kernel shows it: read, it becomes [kthreadd] */
    fake_stat(&t, 300, "pt_data_worker", 2, 600);
    tree_file(&t, "300/cmdline", "worker");
    struct proc_list pl = {0};
    assert_int_equal(walk_fixture(&t, 300, &pl), 0);
    const struct proc *worker = procs_find(&pl, 300);
    assert_non_null(worker);
    assert_string_equal(worker->cmdline, "worker");
    const struct proc *kthreadd = procs_find(&pl, 2);
    assert_non_null(kthreadd);
    assert_true(kthreadd->kernel_thread);
    assert_null(kthreadd->cmdline);
    procs_free(&pl);
    tree_remove(&t);
}

/* A plain reader of stat, field by field with a switch: the reference
 * procs_parse_stat must agree with (the same verdict and the same fields on
 * any text, nspid set with pid also on a line that ends before sigcatch, as
 * old kernels write it), but for a kernel thread's sigcatch, which
 * procs_parse_stat leaves 0 (it reads no further than start_ticks). */
static bool ref_read_num(const char **s, long long *out)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return false;
    unsigned long long v = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p++ - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg && v > (unsigned long long)LLONG_MAX + 1)
        return false;
    *out = neg ? (v ? -(long long)(v - 1) - 1 : 0) : (long long)v;
    *s = p;
    return true;
}

static bool ref_skip_num(const char **s)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '-')
        p++;
    const char *digits = p;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == digits)
        return false;
    *s = p;
    return true;
}

static bool ref_parse_stat(const char *text, struct proc *p)
{
    const char *s = text, *open = strchr(text, '('), *close = strrchr(text, ')');
    long long v;
    if (!open || !close || close < open || close[1] != ' ' || !ref_read_num(&s, &v) || v <= 0)
        return false;
    p->pid = (pid_t)v;
    p->nspid = p->pid;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof(p->comm))
        n = sizeof(p->comm) - 1;
    memcpy(p->comm, open + 1, n);
    p->comm[n] = '\0';
    s = close + 2;
    p->state = *s ? *s++ : '?';
    for (int field = 4; field <= 34; field++) {
        bool ok;
        switch (field) {
        case 4: case 5: case 6: case 9: case 22: case 34:
            ok = ref_read_num(&s, &v);
            break;
        default:
            ok = ref_skip_num(&s);
            break;
        }
        if (!ok)
            return field > 22;
        switch (field) {
        case 4: p->ppid = (pid_t)v; break;
        case 5: p->pgid = (pid_t)v; break;
        case 6: p->sid = (pid_t)v; break;
        case 9: p->kernel_thread = ((unsigned long long)v & 0x00200000u) != 0; break;
        case 22: p->start_ticks = (unsigned long long)v; break;
        case 34: p->sigcatch = (uint64_t)v; break;
        default: break;
        }
    }
    return true;
}

static size_t stat_checked;

/* Both parsers on text, from the same poisoned start: same verdict, and on
 * a line taken the same fields (a refused line leaves p alone; a line that
 * ends before sigcatch, an old kernel's, has sigcatch 0). */
static void check_stat_against_ref(const char *text)
{
    struct proc a, b;
    memset(&a, 0xa5, sizeof(a));
    memset(&b, 0xa5, sizeof(b));
    bool ra = procs_parse_stat(text, &a), rb = ref_parse_stat(text, &b);
    if (ra != rb)
        fail_msg("verdict %d, the reference's %d: \"%s\"", ra, rb, text);
    stat_checked++;
    if (!ra) {
        struct proc poison;
        memset(&poison, 0xa5, sizeof(poison));
        assert_memory_equal(&a, &poison, sizeof(a));
        return;
    }
    assert_int_equal(a.pid, b.pid);
    assert_string_equal(a.comm, b.comm); /* its bytes past the end are no one's */
    assert_int_equal(a.state, b.state);
    assert_int_equal(a.ppid, b.ppid);
    assert_int_equal(a.pgid, b.pgid);
    assert_int_equal(a.sid, b.sid);
    assert_memory_equal(&a.kernel_thread, &b.kernel_thread, sizeof(a.kernel_thread));
    assert_int_equal(a.start_ticks, b.start_ticks);
    uint64_t poison;
    memset(&poison, 0xa5, sizeof(poison));
    if (a.kernel_thread || b.sigcatch == poison)
        assert_int_equal(a.sigcatch, 0); /* read no further, or none there */
    else
        assert_int_equal(a.sigcatch, b.sigcatch);
    assert_int_equal(a.nspid, b.nspid);
}

/* text, each of its prefixes, and each byte of it replaced in turn by a
 * space, a tab, '-', '9', 'x', ')' and the end of the text. */
static void check_stat_variants(const char *text)
{
    char buf[1024];
    size_t len = strlen(text);
    assert_true(len < sizeof(buf));
    check_stat_against_ref(text);
    for (size_t k = 0; k <= len; k++) {
        memcpy(buf, text, k);
        buf[k] = '\0';
        check_stat_against_ref(buf);
    }
    static const char subst[] = {' ', '\t', '-', '9', 'x', ')', '\0'};
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof(subst); k++) {
            memcpy(buf, text, len + 1);
            buf[i] = subst[k];
            check_stat_against_ref(buf);
        }
    }
}

/* The faster parse reads what the switch did: on the recorded fixtures, on
 * every process of this machine, on lines made to hurt (comm with spaces
 * and ')', short lines, no sigcatch, tabs, signs, numbers of 19, 20 and
 * more digits), and on every prefix and single-byte change of each. */
static void test_parse_stat_as_before(void **state)
{
    (void)state;
    static const char *const made[] = {
        "4321 (a) b (c) S 4000 4321 1 34816 4321 4194560 100 0 0 0 5 6 0 0 20 0 1 0 123456 "
        "12345678 900 18446744073709551615 1 1 0 0 0 0 0 4096 18946 0 0 0 17 1 0 0 0 0 0\n",
        "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 "
        "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 0 0 0 0 0 0\n",
        "7 (old kernel) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 4294967295 0 0 0 0",
        "7 (x) S\t1\t7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 1 0 0 0 0 0 0 0 0 -0 "
        "9999999999999999999 18446744073709551615",
        "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1234567890123456789 0 0 1 0 0 0 0 0 0 "
        "0 0 0 18446744073709551616",
        "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 1 0 0 0 0 0 0 0 0 0 "
        "00000000000000000000000000042",
        "7 ()) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -99 0 0 1 0 0 0 0 0 0 0 0 0 -1",
    };
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
        check_stat_variants(made[i]);
    static const char *const recorded[] = {
        "procfiles/proc/300/stat", "nsmap/proc/1/stat",   "nsmap/proc/100/stat",
        "nsmap/proc/200/stat",     "nsmap/proc/300/stat", "nsmap/proc/400/stat",
        "nsmap/proc/500/stat",     "scanfail/proc/4242/stat",
    };
    char path[4096], text[1024];
    for (size_t i = 0; i < sizeof(recorded) / sizeof(recorded[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", fixtures_dir(), recorded[i]);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        check_stat_variants(text);
    }
    size_t live = 0;
    DIR *d = opendir("/proc");
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* gone */
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        check_stat_against_ref(text);
        live++;
    }
    closedir(d);
    assert_true(live > 0);
    assert_true(stat_checked > 10000);
}

/* The name of a process's directory under /proc, as snprintf "%d" writes it. */
static void test_pid_dir_name(void **state)
{
    (void)state;
    const pid_t pids[] = {0, 1, 9, 10, 99, 100, 4194304, 2147483647, -1, -2147483647 - 1};
    for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
        char want[16], got[16];
        memset(got, 'x', sizeof(got));
        snprintf(want, sizeof(want), "%d", (int)pids[i]);
        assert_ptr_equal(pid_dir_name(got, pids[i]), got);
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pid_dir_name),
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_parse_stat_extremes),
        cmocka_unit_test(test_parse_stat_as_before),
        cmocka_unit_test(test_parse_status),
        cmocka_unit_test(test_parse_statm),
        cmocka_unit_test(test_read_shmem),
        cmocka_unit_test(test_join_cmdline),
        cmocka_unit_test(test_exe_from_text),
        cmocka_unit_test_setup_teardown(test_pidscan_both_ways, setup, teardown),
        cmocka_unit_test(test_pidscan_torch),
        cmocka_unit_test_setup_teardown(test_walk_self, setup, teardown),
        cmocka_unit_test(test_second_pass_pid_reused),
        cmocka_unit_test(test_worker_of_kthreadd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
