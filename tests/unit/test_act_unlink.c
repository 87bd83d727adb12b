/* act/unlink.c on a scratch directory standing in for a mount, with a fake
 * /proc tree whose fd links and maps lines point at the scratch files: a
 * root seam opened on the scratch tree (its proc; the mount is its /mnt). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "testutil.h"
#include "act/actlog.h"
#include "act/actns.h"
#include "act/unlink.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

struct fx {
    char root[64], mnt[96], proc[96];
    struct unlink_plan plan;
    struct sysroot sys;
};

static void path_of(const struct fx *f, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", f->mnt, name);
}

static void make_file(const struct fx *f, const char *name, size_t bytes)
{
    char p[256];
    path_of(f, name, p, sizeof(p));
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    char block[4096] = {1};
    for (size_t done = 0; done < bytes; done += sizeof(block))
        assert_int_equal(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
    close(fd);
}

static void put_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Appends a target for mnt/name as a scan would have seen it now. */
static struct unlink_target *add_target(struct fx *f, const char *name)
{
    char p[256];
    path_of(f, name, p, sizeof(p));
    struct stat st, mst;
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(stat(f->mnt, &mst), 0);
    struct unlink_target *t = VEC_PUSH(f->plan.items, f->plan.n, f->plan.cap);
    t->mount = xstrdup("/mnt"); /* as the watched root shows it */
    t->name = xstrdup(name);
    t->dev = mst.st_dev;
    t->ino = st.st_ino;
    t->uid = st.st_uid;
    t->mtime = (int64_t)st.st_mtim.tv_sec;
    t->alloc = (uint64_t)st.st_blocks * 512u;
    t->why = xstrdup("test");
    return t;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    snprintf(f->root, sizeof(f->root), "/tmp/shmwatch-unlink.XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->mnt, sizeof(f->mnt), "%s/mnt", f->root);
    snprintf(f->proc, sizeof(f->proc), "%s/proc", f->root);
    assert_int_equal(mkdir(f->mnt, 0755), 0);
    assert_int_equal(mkdir(f->proc, 0755), 0);
    f->sys = test_sysroot(f->proc, f->root);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
    assert_int_equal(system(cmd), 0);
    sysroot_close(&f->sys);
    unlink_plan_free(&f->plan);
    free(f);
    return 0;
}

/* Fake process PID holding mnt/name by fd FD (a link, as /proc shows it). */
static void fake_fd_holder(const struct fx *f, int pid, int fd, const char *name)
{
    char d[256], target[256];
    snprintf(d, sizeof(d), "%s/%d", f->proc, pid);
    mkdir(d, 0755);
    snprintf(d, sizeof(d), "%s/%d/fd", f->proc, pid);
    mkdir(d, 0755);
    snprintf(d, sizeof(d), "%s/%d/fd/%d", f->proc, pid, fd);
    path_of(f, name, target, sizeof(target));
    assert_int_equal(symlink(target, d), 0);
}

/* Fake process PID mapping mnt/name (a maps line with its device and inode). */
static void fake_map_holder(const struct fx *f, int pid, const char *name)
{
    char d[256], p[256], line[512];
    snprintf(d, sizeof(d), "%s/%d", f->proc, pid);
    mkdir(d, 0755);
    snprintf(d, sizeof(d), "%s/%d/fd", f->proc, pid);
    mkdir(d, 0755);
    path_of(f, name, p, sizeof(p));
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    snprintf(line, sizeof(line),
             "00400000-00452000 r-xp 00000000 08:01 77 /usr/bin/cat\n"
             "7f0000000000-7f0000100000 rw-s 00000000 %02x:%02x %llu %s\n",
             major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino, p);
    snprintf(d, sizeof(d), "%s/%d/maps", f->proc, pid);
    put_text(d, line);
}

static bool exists(const struct fx *f, const char *name)
{
    char p[256];
    struct stat st;
    path_of(f, name, p, sizeof(p));
    return lstat(p, &st) == 0;
}

static void run_all(struct fx *f, struct unlink_result *res, bool dry, uid_t uid,
                    struct actlog *log)
{
    struct unlink_opts o = {.sys = &f->sys, .uid = uid, .dry_run = dry, .log = log};
    struct unlink_run r;
    size_t idx, k = 0;
    unlink_begin(&r, &f->plan, &o);
    while (unlink_step(&r, &res[k], &idx)) {
        assert_int_equal(idx, k);
        k++;
    }
    assert_int_equal(k, f->plan.n);
    unlink_end(&r);
}

static void test_removes_orphan_keeps_held(void **state)
{
    struct fx *f = *state;
    make_file(f, "torch_1_1", 8192);
    make_file(f, "held_fd", 4096);
    make_file(f, "held_map", 4096);
    fake_fd_holder(f, 100, 7, "held_fd");
    fake_map_holder(f, 101, "held_map");
    add_target(f, "torch_1_1");
    add_target(f, "held_fd");
    add_target(f, "held_map");
    struct unlink_result res[3];
    char logpath[160];
    snprintf(logpath, sizeof(logpath), "%s/actions.log", f->root);
    struct actlog log;
    assert_int_equal(actlog_open(&log, logpath), 0);
    run_all(f, res, false, geteuid(), &log);
    assert_int_equal(res[0].outcome, UNLINK_REMOVED);
    assert_false(exists(f, "torch_1_1"));
    assert_int_equal(res[0].alloc, 8192);
    assert_int_equal(res[1].outcome, UNLINK_REFUSED);
    assert_int_equal(res[1].holder, 100);
    assert_non_null(strstr(res[1].reason, "fd 7"));
    assert_true(exists(f, "held_fd"));
    assert_int_equal(res[2].outcome, UNLINK_REFUSED);
    assert_int_equal(res[2].holder, 101);
    assert_non_null(strstr(res[2].reason, "maps it"));
    assert_true(exists(f, "held_map"));
    actlog_close(&log);
    /* One line per item, tab-separated, the result in field 6. */
    struct buf text;
    buf_init(&text);
    assert_int_equal(read_file(logpath, &text, 1 << 16), 0);
    char *cur = text.data, *line;
    int lines = 0;
    while ((line = next_line(&cur))) {
        lines++;
        assert_non_null(strstr(line, "\tunlink\t"));
        assert_non_null(strstr(line, lines == 1 ? "\tremoved\t" : "\trefused\t"));
    }
    assert_int_equal(lines, 3);
    buf_free(&text);
}

/* A folder one of whose files a process holds is refused whole, nothing
 * in it removed (and the entries read for its checks are freed: the
 * sanitizer build's leak check fails otherwise). */
static void test_held_folder_refused(void **state)
{
    struct fx *f = *state;
    char p[256];
    path_of(f, "joblib_memmapping_folder_1_a", p, sizeof(p));
    assert_int_equal(mkdir(p, 0700), 0);
    make_file(f, "joblib_memmapping_folder_1_a/free", 4096);
    make_file(f, "joblib_memmapping_folder_1_a/held", 4096);
    fake_fd_holder(f, 100, 7, "joblib_memmapping_folder_1_a/held");
    struct unlink_target *t = add_target(f, "joblib_memmapping_folder_1_a");
    t->folder = true;
    struct unlink_result res[1];
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].holder, 100);
    assert_true(exists(f, "joblib_memmapping_folder_1_a/free"));
    assert_true(exists(f, "joblib_memmapping_folder_1_a/held"));
}

/* A folder is re-checked entry by entry right before the unlink: one with
 * a directory, a FIFO or a file written since the scan inside is refused
 * whole; one replaced by a file, or by another folder, is refused; a dry
 * run says what it would remove; a free folder goes with its files. */
static void make_dir(const struct fx *f, const char *name)
{
    char p[256];
    path_of(f, name, p, sizeof(p));
    assert_int_equal(mkdir(p, 0700), 0);
}

static void test_folder_rechecked(void **state)
{
    struct fx *f = *state;
    char p[256];
    make_dir(f, "f_dir");
    make_file(f, "f_dir/a", 4096);
    make_dir(f, "f_dir/sub");
    make_dir(f, "f_fifo");
    path_of(f, "f_fifo/pipe", p, sizeof(p));
    assert_int_equal(mkfifo(p, 0600), 0);
    make_dir(f, "f_new");
    make_file(f, "f_new/a", 4096);
    make_dir(f, "f_file");
    make_dir(f, "f_other");
    make_dir(f, "f_dry");
    make_file(f, "f_dry/a", 4096);
    make_file(f, "f_dry/b", 4096);
    make_dir(f, "f_free");
    make_file(f, "f_free/a", 4096);
    const char *names[] = {"f_dir", "f_fifo", "f_new", "f_file", "f_other", "f_free"};
    for (size_t i = 0; i < 6; i++)
        add_target(f, names[i])->folder = true;
    /* Written to after the scan saw the folder. */
    path_of(f, "f_new/a", p, sizeof(p));
    struct timespec later[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = f->plan.items[2].mtime + 60}};
    assert_int_equal(utimensat(AT_FDCWD, p, later, 0), 0);
    /* f_file is now a file; f_other another folder under the old name. */
    path_of(f, "f_file", p, sizeof(p));
    assert_int_equal(rmdir(p), 0);
    make_file(f, "f_file", 4096);
    path_of(f, "f_other", p, sizeof(p));
    char keep[256];
    path_of(f, "f_other_old", keep, sizeof(keep)); /* kept: its inode is not reused */
    assert_int_equal(rename(p, keep), 0);
    make_dir(f, "f_other");
    struct unlink_result res[6];
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_string_equal(res[0].reason, "a directory inside it (never removed)");
    assert_true(exists(f, "f_dir/a"));
    assert_int_equal(res[1].outcome, UNLINK_REFUSED);
    assert_string_equal(res[1].reason, "an entry inside it is not a regular file");
    assert_true(exists(f, "f_fifo/pipe"));
    assert_int_equal(res[2].outcome, UNLINK_REFUSED);
    assert_int_equal(res[2].err, EBUSY);
    assert_true(exists(f, "f_new/a"));
    assert_int_equal(res[3].outcome, UNLINK_REFUSED);
    assert_string_equal(res[3].reason, "no longer a folder");
    assert_true(exists(f, "f_file"));
    assert_int_equal(res[4].outcome, UNLINK_REFUSED);
    assert_int_equal(res[4].err, ESTALE);
    assert_true(exists(f, "f_other"));
    assert_int_equal(res[5].outcome, UNLINK_REMOVED);
    assert_int_equal(res[5].alloc, 4096);
    assert_false(exists(f, "f_free"));
    /* A dry run checks every file and removes nothing. */
    unlink_plan_free(&f->plan);
    add_target(f, "f_dry")->folder = true;
    run_all(f, res, true, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_WOULD);
    assert_string_equal(res[0].reason, "every check passed (a folder of 2 files)");
    assert_int_equal(res[0].alloc, 8192);
    assert_true(exists(f, "f_dry/a"));
    assert_true(exists(f, "f_dry/b"));
}

static void test_never_follows_or_removes_special(void **state)
{
    struct fx *f = *state;
    char outside[160], p[256];
    snprintf(outside, sizeof(outside), "%s/outside", f->root);
    put_text(outside, "precious\n");
    path_of(f, "torch_1_2_3", p, sizeof(p));
    assert_int_equal(symlink(outside, p), 0);
    path_of(f, "torch_dir_1", p, sizeof(p));
    assert_int_equal(mkdir(p, 0700), 0);
    path_of(f, "torch_fifo_2", p, sizeof(p));
    assert_int_equal(mkfifo(p, 0600), 0);
    /* Targets the plan did not refuse, as if the scan had been fooled: the
     * re-check right before the unlink must refuse them itself. */
    add_target(f, "torch_1_2_3");
    add_target(f, "torch_dir_1");
    add_target(f, "torch_fifo_2");
    struct unlink_result res[3];
    run_all(f, res, false, geteuid(), NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal(res[i].outcome, UNLINK_REFUSED);
    assert_non_null(strstr(res[0].reason, "symbolic link"));
    assert_non_null(strstr(res[1].reason, "directory"));
    assert_non_null(strstr(res[2].reason, "FIFO"));
    assert_true(exists(f, "torch_1_2_3"));
    assert_true(exists(f, "torch_dir_1"));
    assert_true(exists(f, "torch_fifo_2"));
    struct stat st;
    assert_int_equal(stat(outside, &st), 0);
    assert_int_equal(st.st_size, 9);
}

static void test_replaced_gone_owner_dry(void **state)
{
    struct fx *f = *state;
    char p[256];
    make_file(f, "replaced", 4096);
    make_file(f, "gone", 4096);
    make_file(f, "not_mine", 4096);
    make_file(f, "dry", 4096);
    add_target(f, "replaced");
    add_target(f, "gone");
    add_target(f, "not_mine");
    struct unlink_result res[4];
    /* A new file under the old name: a different inode. Keep the old one
     * open so that its inode number cannot be reused. */
    path_of(f, "replaced", p, sizeof(p));
    int keep = open(p, O_RDONLY);
    assert_int_equal(unlink(p), 0);
    make_file(f, "replaced", 4096);
    path_of(f, "gone", p, sizeof(p));
    assert_int_equal(unlink(p), 0);
    /* Another caller: the files are not theirs. */
    uid_t other = geteuid() + 1;
    run_all(f, res, false, other, NULL);
    close(keep);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].err, ESTALE);
    assert_true(exists(f, "replaced"));
    assert_int_equal(res[1].outcome, UNLINK_GONE);
    assert_int_equal(res[2].outcome, UNLINK_REFUSED);
    assert_int_equal(res[2].err, EPERM);
    assert_non_null(strstr(res[2].reason, "not by you"));
    assert_true(exists(f, "not_mine"));
    /* A dry run checks and removes nothing. */
    unlink_plan_free(&f->plan);
    add_target(f, "dry");
    run_all(f, res, true, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_WOULD);
    assert_true(exists(f, "dry"));
}

static void test_nested_and_planned_refusal(void **state)
{
    struct fx *f = *state;
    char p[256], q[256];
    path_of(f, "sub", p, sizeof(p));
    assert_int_equal(mkdir(p, 0700), 0);
    make_file(f, "sub/inner", 4096);
    make_file(f, "sub/other", 4096);
    path_of(f, "lnk", q, sizeof(q));
    assert_int_equal(symlink(p, q), 0);
    add_target(f, "sub/inner");
    add_target(f, "lnk/other"); /* the scan never lists this, but a walk must not follow it */
    add_target(f, "sub/other")->refuse = "refused when planning";
    struct unlink_result res[3];
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REMOVED);
    assert_false(exists(f, "sub/inner"));
    assert_int_equal(res[1].outcome, UNLINK_REFUSED);
    assert_true(exists(f, "sub/other"));
    assert_int_equal(res[2].outcome, UNLINK_REFUSED);
    assert_string_equal(res[2].reason, "refused when planning");
}

/* Opens mnt/name for this test, a process the fake /proc does not show:
 * the holder search cannot see it, the kernel's lease can. -1 when the
 * kernel grants no lease there (a file system without them, or
 * fs.leases-enable 0). */
static int open_unseen(const struct fx *f, const char *name)
{
    char p[256];
    path_of(f, name, p, sizeof(p));
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    if (fcntl(fd, F_SETLEASE, F_WRLCK) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETLEASE, F_UNLCK);
    return fd;
}

/* The plan's one target, open where the search cannot look (unseen, an fd
 * of open_unseen), is refused with reason, dry or not, and kept (kept
 * exists); once unseen is closed it is removed. */
static void refused_while_unseen(struct fx *f, int unseen, const char *reason, const char *kept)
{
    struct unlink_result res[1];
    for (int dry = 1; dry >= 0; dry--) {
        run_all(f, res, dry, geteuid(), NULL);
        assert_int_equal(res[0].outcome, UNLINK_REFUSED);
        assert_string_equal(res[0].reason, reason);
        assert_true(exists(f, kept));
    }
    close(unseen);
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REMOVED);
    assert_false(exists(f, f->plan.items[0].name));
}

/* A file segment open in a process the holder search cannot see (one of
 * another pid namespace, say) is refused by the kernel's lease. */
static void test_open_unseen_refused(void **state)
{
    struct fx *f = *state;
    make_file(f, "torch_1_9", 4096);
    int unseen = open_unseen(f, "torch_1_9");
    if (unseen < 0) {
        skip();
        return;
    }
    add_target(f, "torch_1_9");
    refused_while_unseen(f, unseen, "in use: open in a process the search could not see (the "
                         "kernel refuses a lease on it)", "torch_1_9");
}

/* A file inside a folder that is open in a process the holder search
 * cannot see refuses the folder whole (its other file kept too), as the
 * kernel's lease does a file segment. */
static void test_folder_open_unseen_refused(void **state)
{
    struct fx *f = *state;
    make_dir(f, "joblib_memmapping_folder_1_b");
    make_file(f, "joblib_memmapping_folder_1_b/free", 4096);
    make_file(f, "joblib_memmapping_folder_1_b/open", 4096);
    int unseen = open_unseen(f, "joblib_memmapping_folder_1_b/open");
    if (unseen < 0) {
        skip();
        return;
    }
    add_target(f, "joblib_memmapping_folder_1_b")->folder = true;
    refused_while_unseen(f, unseen, "in use: a file inside it is open in a process the search "
                         "could not see (the kernel refuses a lease on it)",
                         "joblib_memmapping_folder_1_b/free");
}

/* The test hook (unlink_set_test_pause) runs once, after the scan and
 * before the first check; a holder that appears in it is found (the holder
 * search is repeated after the pause). */
static struct fx *paused_fx;
static int pauses;

static void pause_adds_holder(void)
{
    pauses++;
    fake_fd_holder(paused_fx, 200, 4, "late");
}

static void test_pause_hook(void **state)
{
    struct fx *f = *state;
    make_file(f, "late", 4096);
    make_file(f, "free", 4096);
    add_target(f, "late");
    add_target(f, "free");
    paused_fx = f;
    pauses = 0;
    unlink_set_test_pause(pause_adds_holder);
    struct unlink_result res[2];
    run_all(f, res, false, geteuid(), NULL);
    unlink_set_test_pause(NULL);
    assert_int_equal(pauses, 1);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].holder, 200);
    assert_true(exists(f, "late"));
    assert_int_equal(res[1].outcome, UNLINK_REMOVED);
    /* Unset, nothing pauses. */
    make_file(f, "free", 4096);
    unlink_plan_free(&f->plan);
    memset(&f->plan, 0, sizeof(f->plan));
    add_target(f, "free");
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(pauses, 1);
    assert_int_equal(res[0].outcome, UNLINK_REMOVED);
}

static void test_mount_changed(void **state)
{
    struct fx *f = *state;
    make_file(f, "x", 4096);
    struct unlink_target *t = add_target(f, "x");
    t->dev = makedev(0, 9999); /* another device than the directory's */
    struct unlink_result res[1];
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_non_null(strstr(res[0].reason, "no longer the one scanned"));
    assert_true(exists(f, "x"));
}

/* Out of descriptors once the mount is open: the item is refused with that
 * error (EMFILE), not with another's or none. */
static void test_out_of_descriptors(void **state)
{
    struct fx *f = *state;
    make_file(f, "x", 4096);
    add_target(f, "x");
    struct unlink_opts o = {.sys = &f->sys, .uid = geteuid()};
    struct unlink_run r;
    struct unlink_result res[1];
    size_t idx;
    unlink_begin(&r, &f->plan, &o);
    int lowest = dup(0); /* the lowest free descriptor: the mount's */
    assert_true(lowest >= 0);
    close(lowest);
    struct rlimit old, tight;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    tight = old;
    tight.rlim_cur = (rlim_t)lowest + 1;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &tight), 0);
    bool stepped = unlink_step(&r, &res[0], &idx);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_true(stepped);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].err, EMFILE);
    assert_true(exists(f, "x"));
    unlink_end(&r);
}

/* In a --pid view, once the watched process is gone (or its pid is
 * another's), nothing is done below its root: it is no longer the root
 * scanned. */
static void test_watched_process_gone(void **state)
{
    struct fx *f = *state;
    make_file(f, "x", 4096);
    add_target(f, "x");
    f->sys.pid = 4242; /* no such process in the fake proc */
    f->sys.pid_start = 1;
    struct unlink_result res[1];
    run_all(f, res, false, geteuid(), NULL);
    f->sys.pid = 0;
    f->sys.pid_start = 0;
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_non_null(strstr(res[0].reason, "the watched process 4242 has exited"));
    assert_true(exists(f, "x"));
}

/* Out of fds, whether the watched process still runs cannot be read: the
 * item is refused (nothing is done on a liveness not proven), and the
 * reason says so, never that it has exited. */
static void test_watched_process_unknown(void **state)
{
    struct fx *f = *state;
    make_file(f, "x", 4096);
    add_target(f, "x");
    char d[256];
    snprintf(d, sizeof(d), "%s/4243", f->proc);
    assert_int_equal(mkdir(d, 0755), 0);
    strcat(d, "/stat");
    FILE *st = fopen(d, "w");
    assert_non_null(st);
    fputs("4243 (python3) S 1 4243 4243 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n", st);
    fclose(st);
    f->sys.pid = 4243;
    f->sys.pid_start = 777;
    assert_int_equal(sysroot_pid_check(&f->sys), 1); /* alive while fds are free */
    struct unlink_result res[1];
    struct fd_squeeze q;
    fds_squeeze(&q);
    struct unlink_opts o = {.sys = &f->sys, .uid = geteuid()};
    struct unlink_run r;
    size_t idx;
    unlink_begin(&r, &f->plan, &o);
    bool stepped = unlink_step(&r, &res[0], &idx);
    unlink_end(&r);
    fds_unsqueeze(&q);
    f->sys.pid = 0;
    f->sys.pid_start = 0;
    assert_true(stepped);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].err, EMFILE);
    assert_null(strstr(res[0].reason, "exited"));
    assert_non_null(strstr(res[0].reason, "cannot tell whether the watched process 4243 still runs"));
    assert_true(exists(f, "x"));
}

/* A file written to after the scan is in use, whatever its state was. */
static void test_written_since_scan(void **state)
{
    struct fx *f = *state;
    make_file(f, "written", 4096);
    make_file(f, "untouched", 4096);
    add_target(f, "written")->mtime -= 60; /* scanned a minute before the write */
    add_target(f, "untouched");
    struct unlink_result res[2];
    run_all(f, res, false, geteuid(), NULL);
    assert_int_equal(res[0].outcome, UNLINK_REFUSED);
    assert_int_equal(res[0].err, EBUSY);
    assert_non_null(strstr(res[0].reason, "written to since the scan"));
    assert_true(exists(f, "written"));
    assert_int_equal(res[1].outcome, UNLINK_REMOVED);
    assert_false(exists(f, "untouched"));
}

static void test_find_inodes(void **state)
{
    struct fx *f = *state;
    make_file(f, "a", 4096);
    make_file(f, "b", 4096);
    make_file(f, "c", 4096);
    fake_fd_holder(f, 200, 3, "a");
    fake_map_holder(f, 201, "b");
    struct inode_query q[4];
    const char *names[] = {"a", "b", "c", "a"};
    for (int i = 0; i < 4; i++) {
        char p[256];
        struct stat st;
        path_of(f, names[i], p, sizeof(p));
        assert_int_equal(stat(p, &st), 0);
        q[i].dev = st.st_dev;
        q[i].ino = st.st_ino;
    }
    struct holder_blind blind;
    assert_int_equal(holders_find_inodes(&f->sys, q, 4, 0, &blind), 0);
    assert_int_equal(q[0].pid, 200);
    assert_int_equal(q[0].fd, 3);
    assert_int_equal(q[1].pid, 201);
    assert_int_equal(q[1].fd, -1);
    assert_int_equal(q[2].pid, 0);
    assert_int_equal(q[3].pid, 200); /* a repeated query shares the answer */
    assert_int_equal(blind.denied, 0);
    /* The caller's own pid is never a holder. */
    assert_int_equal(holders_find_inodes(&f->sys, q, 1, 200, &blind), 0);
    assert_int_equal(q[0].pid, 0);
    /* A proc that cannot be listed proves nothing: an error. */
    struct sysroot closed = SYSROOT_NONE;
    assert_int_equal(holders_find_inodes(&closed, q, 1, 0, &blind), -EBADF);
}

static void test_blind_rules(void **state)
{
    (void)state;
    char why[200];
    struct holder_blind none = {.denied = 3, .unreachable = 3};
    assert_true(unlink_blind_ok(&none, 0, 0, 0600, why, sizeof(why)));
    struct holder_blind rootp = {.denied = 1, .uids = {0}, .nuids = 1};
    assert_false(unlink_blind_ok(&rootp, 0, 0, 0600, why, sizeof(why))); /* root sees all */
    assert_non_null(strstr(why, "uid 0"));
    assert_true(unlink_blind_ok(&rootp, 1000, 1000, 0600, why, sizeof(why)));
    struct holder_blind other = {.denied = 1, .uids = {1001}, .nuids = 1};
    assert_true(unlink_blind_ok(&other, 1000, 1000, 0600, why, sizeof(why)));
    assert_false(unlink_blind_ok(&other, 1000, 1000, 0644, why, sizeof(why)));
    struct holder_blind own = {.denied = 1, .uids = {1000}, .nuids = 1};
    assert_false(unlink_blind_ok(&own, 1000, 1000, 0600, why, sizeof(why)));
    struct holder_blind many = {.denied = 20, .nuids = 0, .more_uids = true};
    assert_false(unlink_blind_ok(&many, 1000, 1000, 0666, why, sizeof(why)));
    assert_true(unlink_blind_ok(&many, 1000, 1000, 0600, why, sizeof(why)));
}

/* The owner checks both removers share (unlink_owner_ok), with the exact
 * sentences the removers have always given: the caller must own it (or be
 * root), and a container's user namespace must map its owner. */
static void test_owner_rules(void **state)
{
    (void)state;
    struct unlink_result res;
    memset(&res, 0, sizeof(res));
    assert_true(unlink_owner_ok(1000, NULL, 1000, UNLINK_OWNED_FILE, &res));
    assert_true(unlink_owner_ok(0, NULL, 1001, UNLINK_OWNED_FOLDER, &res));
    assert_false(unlink_owner_ok(1000, NULL, 1001, UNLINK_OWNED_FILE, &res));
    assert_int_equal(res.outcome, UNLINK_REFUSED);
    assert_int_equal(res.err, EPERM);
    assert_string_equal(res.reason,
        "owned by uid 1001, not by you (uid 1000): only its owner or root may remove it");
    assert_false(unlink_owner_ok(1000, NULL, 0, UNLINK_OWNED_FOLDER, &res));
    assert_string_equal(res.reason,
        "owned by uid 0, not by you (uid 1000): only its owner or root may remove it");
    assert_false(unlink_owner_ok(1000, NULL, 1001, UNLINK_OWNED_IN_FOLDER, &res));
    assert_string_equal(res.reason, "a file inside it is owned by uid 1001, not by you");

    /* A rootless container mapping host uids 100000..165535. */
    struct actns_uids range = {.start = 100000, .count = 65536};
    struct actns ns;
    memset(&ns, 0, sizeof(ns));
    ns.uids = &range;
    ns.nuids = 1;
    assert_true(unlink_owner_ok(0, &ns, 100999, UNLINK_OWNED_FILE, &res));
    assert_false(unlink_owner_ok(0, &ns, 0, UNLINK_OWNED_FILE, &res));
    assert_int_equal(res.err, EPERM);
    assert_string_equal(res.reason, "owned by uid 0, which its container's user namespace does "
                                    "not map: not its container's file");
    assert_false(unlink_owner_ok(0, &ns, 165536, UNLINK_OWNED_FOLDER, &res));
    assert_string_equal(res.reason, "owned by uid 165536, which its container's user namespace "
                                    "does not map: not its container's folder");
    assert_false(unlink_owner_ok(0, &ns, 5, UNLINK_OWNED_IN_FOLDER, &res));
    assert_string_equal(res.reason, "a file inside it is owned by uid 5, which its container's "
                                    "user namespace does not map");
    /* The caller's own check comes first. */
    assert_false(unlink_owner_ok(1000, &ns, 0, UNLINK_OWNED_FILE, &res));
    assert_non_null(strstr(res.reason, "not by you"));
    ns.all_uids = true; /* a container of the watcher's own user namespace */
    assert_true(unlink_owner_ok(0, &ns, 0, UNLINK_OWNED_FOLDER, &res));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_removes_orphan_keeps_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_follows_or_removes_special, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaced_gone_owner_dry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_and_planned_refusal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_folder_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_rechecked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_unseen_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_open_unseen_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mount_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_descriptors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_process_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_process_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_written_since_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_find_inodes, setup, teardown),
        cmocka_unit_test(test_blind_rules),
        cmocka_unit_test(test_owner_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
