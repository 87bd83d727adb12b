/* act/actns.c: a container's view for actions. The mount directory is
 * reached from the view's root without following any link (an absolute
 * link would lead out of the container) and without "." or ".."; the view
 * is alive only while its holder is the process it was opened on; and the
 * action log names the container in a field of its own, escaped, after the
 * fields it always had. Runs on a temporary tree and on children of its own. */
#include "testutil.h"
#include "act/actlog.h"
#include "act/actns.h"
#include "act/actviews.h"
#include "act/unlink.h"
#include "collect/containers.h"
#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tree[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tree, sizeof(tree), "/tmp/test_actns.XXXXXX");
    if (!mkdtemp(tree))
        return -1;
    char p[128];
    snprintf(p, sizeof(p), "%s/dev", tree);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/dev/shm", tree);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/run", tree);
    mkdir(p, 0755);
    /* run/shm -> /dev/shm, and an absolute link out of the tree */
    snprintf(p, sizeof(p), "%s/run/shm", tree);
    if (symlink("/dev/shm", p) != 0)
        return -1;
    snprintf(p, sizeof(p), "%s/out", tree);
    if (symlink("/", p) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd) == 0 ? 0 : -1;
}

/* A view of the tree as if it were a container's root (no holder: alive). */
static void open_tree(struct actns *ns)
{
    memset(ns, 0, sizeof(*ns));
    assert_int_equal(sysroot_open(&ns->root, "/proc", "/", tree), 0);
}

static void test_opendir_walks_below_root(void **state)
{
    (void)state;
    struct actns ns;
    open_tree(&ns);
    int fd = actns_opendir(&ns, "/dev/shm");
    assert_true(fd >= 0);
    struct stat a, b;
    char p[128];
    snprintf(p, sizeof(p), "%s/dev/shm", tree);
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(stat(p, &b), 0);
    assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
    close(fd);
    fd = actns_opendir(&ns, "//dev//shm/"); /* repeated slashes are one */
    assert_true(fd >= 0);
    close(fd);
    fd = actns_opendir(&ns, "/"); /* the root itself */
    assert_true(fd >= 0);
    close(fd);
    actns_close(&ns);
}

static void test_opendir_stays_inside(void **state)
{
    (void)state;
    struct actns ns;
    open_tree(&ns);
    /* The last component a link: never followed. */
    int fd = actns_opendir(&ns, "/run/shm");
    assert_true(fd == -ELOOP || fd == -ENOTDIR);
    /* An absolute link on the way ("/out" -> "/") never leads to the
     * host's directories: /tmp exists on the host, not in the tree. */
    fd = actns_opendir(&ns, "/out/tmp");
    assert_true(fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR || fd == -EXDEV);
    assert_int_equal(actns_opendir(&ns, "dev/shm"), -EINVAL);
    assert_int_equal(actns_opendir(&ns, "/nonexistent"), -ENOENT);
    actns_close(&ns);
}

static void test_alive_follows_the_holder(void **state)
{
    (void)state;
    struct sysroot host;
    assert_int_equal(sysroot_open(&host, "/proc", "/", "/"), 0);
    pid_t child = paused_child();
    struct actns ns;
    assert_int_equal(actns_open(&ns, &host, child, 0, NULL), 0);
    assert_true(actns_alive(&ns));
    assert_non_null(ns.label);
    assert_true(ns.mntns != 0);
    char *where = actns_where(&ns);
    assert_true(strncmp(where, "in ", 3) == 0);
    free(where);
    /* The same process by a start time the scan saw: accepted; another: refused. */
    struct actns again;
    assert_int_equal(actns_open(&again, &host, child, ns.root.pid_start, NULL), 0);
    actns_close(&again);
    assert_int_equal(actns_open(&again, &host, child, ns.root.pid_start + 1, "web"), -ESRCH);
    assert_int_equal(again.root.root, -1);
    /* A view that could not be opened still names it, and is never alive. */
    assert_string_equal(again.label, "web");
    assert_false(actns_alive(&again));
    actns_close(&again);
    /* A view of the holder works while it lives: its root is this one. */
    int fd = actns_opendir(&ns, "/proc");
    assert_true(fd >= 0);
    close(fd);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_false(actns_alive(&ns));
    actns_close(&ns);
    assert_null(ns.label);
    actns_close(&ns); /* twice is harmless */
    assert_int_equal(actns_open(&ns, &host, child, 0, NULL), -ESRCH);
    assert_false(actns_alive(&ns));
    actns_close(&ns);
    sysroot_close(&host);
}

/* clean --pid and reap --pid open the running system as the dashboard does
 * (sysroot_open_system, cli/actcli.c) and their target's view from it: the
 * view holds a pidfd of the target, so its end is known with no stat to
 * read, and a pid handed to another process never passes for it. */
static void test_pid_view_holds_a_pidfd(void **state)
{
    (void)state;
    struct sysroot host;
    assert_int_equal(sysroot_open_system(&host, 0), 0);
    pid_t child = paused_child();
    struct actviews v;
    assert_int_equal(actviews_open_pid(&v, &host, child), 0);
    assert_true(v.pid.root.pidfd > 2);
    assert_int_equal(v.pid.root.pidfd_pid, child);
    int proc = v.pid.root.proc;
    v.pid.root.proc = -1; /* no stat can be read: only the pidfd can say */
    assert_int_equal(actns_check(&v.pid), 1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(actns_check(&v.pid), 0);
    assert_false(actns_alive(&v.pid));
    v.pid.root.proc = proc;
    actviews_close(&v);
    sysroot_close(&host);
}

/* Out of fds a view's holder cannot be checked: actns_check says -EMFILE,
 * not 0 ("exited"), for an open view, a view kept closed (re-opened for
 * each check) and a view whose open ran out of fds; none is alive (every
 * action refused); once fds are free again the open ones answer 1. */
static void test_check_out_of_fds(void **state)
{
    (void)state;
    struct sysroot host;
    assert_int_equal(sysroot_open(&host, "/proc", "/", "/"), 0); /* no pidfds: the stat answers */
    pid_t child = paused_child();
    struct actns open_ns, closed_ns, failed_ns;
    assert_int_equal(actns_open(&open_ns, &host, child, 0, "a"), 0);
    assert_int_equal(actns_open(&closed_ns, &host, child, 0, "b"), 0);
    /* kept closed as sysroot_spare does it */
    pid_t pid = closed_ns.root.pid;
    unsigned long long start = closed_ns.root.pid_start;
    sysroot_close(&closed_ns.root);
    closed_ns.root.pid = pid;
    closed_ns.root.pid_start = start;
    closed_ns.root.via = &host;
    struct fd_squeeze q;
    fds_squeeze(&q);
    int c_open = actns_check(&open_ns), c_closed = actns_check(&closed_ns);
    bool a_open = actns_alive(&open_ns), a_closed = actns_alive(&closed_ns);
    int rc_failed = actns_open(&failed_ns, &host, child, 0, "c");
    int c_failed = actns_check(&failed_ns);
    int dir = actns_opendir(&closed_ns, "/proc");
    fds_unsqueeze(&q);
    assert_int_equal(c_open, -EMFILE);
    assert_int_equal(c_closed, -EMFILE);
    assert_false(a_open);
    assert_false(a_closed);
    assert_int_equal(rc_failed, -EMFILE);
    assert_int_equal(c_failed, -EMFILE);
    assert_false(actns_alive(&failed_ns));
    assert_int_equal(dir, -EMFILE);
    assert_int_equal(actns_check(&open_ns), 1);
    assert_int_equal(actns_check(&closed_ns), 1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(actns_check(&open_ns), 0);
    assert_int_equal(actns_check(&closed_ns), 0);
    actns_close(&open_ns);
    actns_close(&closed_ns);
    actns_close(&failed_ns);
    sysroot_close(&host);
}

/* A process table (sorted by pid) for the views' choice of processes. */
static void add_proc(struct scan *s, pid_t pid, pid_t ppid, char state, unsigned long mntns)
{
    struct proc *p = &s->procs.items[s->procs.n++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->ppid = ppid;
    p->state = state;
    p->mntns = mntns;
}

static void test_views_pick_processes(void **state)
{
    (void)state;
    struct proc items[5];
    struct scan s;
    memset(&s, 0, sizeof(s));
    s.procs.items = items;
    s.procs.cap = 5;
    add_proc(&s, 10, 1, 'S', 100); /* in the container */
    add_proc(&s, 11, 1, 'S', 200); /* a neighbour's */
    add_proc(&s, 12, 10, 'Z', 0);  /* a zombie of the container's */
    add_proc(&s, 13, 11, 'Z', 0);  /* a zombie of the neighbour's */
    add_proc(&s, 14, 1, 'S', 0);   /* namespace unknown: not provably in it */
    struct model m;
    memset(&m, 0, sizeof(m));
    m.scan = &s;
    const struct actns *ns;

    struct actviews v;
    actviews_own(&v);
    for (size_t i = 0; i < s.procs.n; i++) {
        assert_true(actviews_proc(&v, &m, &items[i], &ns));
        assert_null(ns);
    }
    assert_null(actviews_mount(&v, 0));

    v.mode = ACTVIEWS_PID; /* --pid: only the processes of its mount namespace */
    v.pid.mntns = 100;
    bool want[] = {true, false, true, false, false};
    for (size_t i = 0; i < s.procs.n; i++) {
        ns = NULL;
        assert_int_equal(actviews_proc(&v, &m, &items[i], &ns), want[i]);
        if (want[i])
            assert_ptr_equal(ns, &v.pid);
    }
    assert_ptr_equal(actviews_mount(&v, 3), &v.pid);

    /* --all: every process, each with its container's view, the host's for
     * the rest. The scan gives each zombie its parent's container
     * (node_assign), so the zombies here carry 0 and 1. */
    struct actns ctrs[2];
    memset(ctrs, 0, sizeof(ctrs));
    size_t proc_ctr[] = {0, 1, 0, 1, NODE_HOST};
    s.node.proc_ctr = proc_ctr;
    s.node.nprocs = 5;
    v.mode = ACTVIEWS_ALL;
    v.ctrs = ctrs;
    v.nctrs = 2;
    const struct actns *want_all[] = {&ctrs[0], &ctrs[1], &ctrs[0], &ctrs[1], &v.host};
    for (size_t i = 0; i < s.procs.n; i++) {
        assert_true(actviews_proc(&v, &m, &items[i], &ns));
        assert_ptr_equal(ns, want_all[i]);
    }
    /* A mount the watcher's namespace shows: the host's view. */
    assert_ptr_equal(actviews_mount(&v, 0), &v.host);
    struct unlink_target t[1];
    memset(t, 0, sizeof(t));
    struct unlink_plan plan = {.items = t, .n = 1};
    actviews_set_plan(&v, &plan);
    assert_ptr_equal(t[0].ns, &v.host);
}

/* actns_label of ci gives want. */
static void assert_label(const struct container_info *ci, const char *want)
{
    char *l = actns_label(ci, 42);
    assert_string_equal(l, want);
    free(l);
}

static void test_labels(void **state)
{
    (void)state;
    const char *digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    assert_label(NULL, "pid 42");
    struct container_info ci = {.runtime = RUNTIME_DOCKER, .id = (char *)digest};
    assert_label(&ci, "0123456789ab");
    ci.name = "web";
    assert_label(&ci, "web");
    /* ctr's "web" (an id a person chose) of the namespace probe, not
     * another namespace's "web"; a digest id (the kubelet's) is unique on
     * the node and needs no namespace. */
    ci.runtime = RUNTIME_CONTAINERD;
    ci.containerd_namespace = "probe";
    ci.id = "web";
    assert_label(&ci, "probe/web");
    ci.name = NULL;
    assert_label(&ci, "probe/web");
    ci.containerd_namespace = "k8s.io";
    ci.id = (char *)digest;
    ci.name = "bert";
    assert_label(&ci, "bert");
    ci.name = NULL;
    assert_label(&ci, "0123456789ab");
}

static void test_log_names_the_container(void **state)
{
    (void)state;
    struct actlog_entry e = {.time = 86400,
                             .action = "unlink",
                             .target = "/dev/shm/x",
                             .owner = 0,
                             .bytes = 4096,
                             .result = "removed",
                             .detail = "ok"};
    struct buf b;
    buf_init(&b);
    actlog_format(&b, &e);
    assert_null(strstr(b.data, "container="));
    size_t plain = b.len;
    buf_free(&b);
    buf_init(&b);
    e.container = "web\tnew\nline";
    actlog_format(&b, &e);
    /* The fields before keep their places; the new one is last and escaped. */
    const char *c = strstr(b.data, "\tcontainer=");
    assert_non_null(c);
    assert_int_equal((size_t)(c - b.data), plain);
    assert_null(strchr(c + 1, '\t'));
    assert_null(strchr(b.data, '\n'));
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opendir_walks_below_root),
        cmocka_unit_test(test_opendir_stays_inside),
        cmocka_unit_test(test_alive_follows_the_holder),
        cmocka_unit_test(test_pid_view_holds_a_pidfd),
        cmocka_unit_test(test_check_out_of_fds),
        cmocka_unit_test(test_views_pick_processes),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_log_names_the_container),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
