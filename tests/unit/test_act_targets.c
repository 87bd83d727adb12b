/* act/targets.c on the shared fake scene, and the action log's format. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "fake_scene.h"
#include "act/actlog.h"
#include "act/targets.h"
#include "act/reap.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

static const struct unlink_target *find(const struct unlink_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return &p->items[i];
    return NULL;
}

static void with_model(void (*fn)(const struct model *m))
{
    struct scan *s = fake_scene();
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);
    fn(&m);
    model_free(&m);
    scan_free(s);
    free(s);
}

static void orphans_only(const struct model *m)
{
    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p;
    targets_clean(m, &pol, &p);
    /* The two orphans, and the symlink of a dead creator listed as refused. */
    assert_int_equal(p.n, 3);
    assert_int_equal(p.ntry, 2);
    const struct unlink_target *t = find(&p, "torch_999_1");
    assert_non_null(t);
    assert_null(t->refuse);
    assert_int_equal(t->alloc, 2 * MiB);
    assert_non_null(strstr(t->why, "999"));
    assert_non_null(find(&p, "__KMP_REGISTERED_LIB_888_0"));
    t = find(&p, "torch_1_2_3");
    assert_non_null(t);
    assert_non_null(t->refuse);
    assert_non_null(strstr(t->refuse, "symbolic link"));
    assert_int_equal(p.bytes, 2 * MiB + 4096);
    /* Never anything in use or hidden. */
    assert_null(find(&p, "torch_11_100"));
    assert_null(find(&p, "torch_12_7_1"));
    assert_null(find(&p, "torch_12_2"));
    unlink_plan_free(&p);
}

static void with_unheld(const struct model *m)
{
    struct clean_policy pol;
    clean_policy_default(&pol);
    pol.all_unheld = true;
    pol.min_age_s = 600; /* the scene's files are exactly 600 s old */
    struct unlink_plan p;
    targets_clean(m, &pol, &p);
    /* torch_12_2's creator, worker 12, is alive: a batch in flight, kept
     * however old; the semaphore names no creator. */
    assert_null(find(&p, "torch_12_2"));
    assert_int_equal(p.live, 1);
    assert_non_null(find(&p, "sem.mp-abc"));
    assert_int_equal(p.young, 0);
    unlink_plan_free(&p);
    pol.min_age_s = 601;
    targets_clean(m, &pol, &p);
    assert_null(find(&p, "torch_12_2"));
    assert_null(find(&p, "sem.mp-abc"));
    assert_int_equal(p.live, 1);
    assert_int_equal(p.young, 1);
    assert_non_null(find(&p, "torch_999_1")); /* orphans regardless of age */
    unlink_plan_free(&p);
    /* Chosen alone (the dashboard's U on its row): refused, with why. */
    pol.min_age_s = 0;
    memset(&p, 0, sizeof(p));
    char why[200];
    size_t tried = 0;
    for (size_t i = 0; i < m->nsegs; i++)
        if (!strcmp(m->segs[i].name, "torch_12_2")) {
            tried++;
            assert_false(targets_add_segment(m, i, &pol, &p, why, sizeof(why)));
            assert_string_equal(why,
                                "its creator pid 12 is alive: a live job's, a batch in flight");
        }
    assert_int_equal(tried, 1);
    unlink_plan_free(&p);
}

static void single_choices(const struct model *m)
{
    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p = {0};
    char why[200];
    for (size_t i = 0; i < m->nsegs; i++) {
        const struct segment *sg = &m->segs[i];
        bool ok = targets_add_segment(m, i, &pol, &p, why, sizeof(why));
        assert_int_equal(ok, sg->state == SEG_ORPHAN);
        if (sg->state == SEG_IN_USE)
            assert_non_null(strstr(why, "in use"));
        if (sg->state == SEG_HIDDEN)
            assert_non_null(strstr(why, "no name"));
        if (sg->state == SEG_UNHELD)
            assert_non_null(strstr(why, "owner is unknown"));
    }
    assert_int_equal(p.n, 2);
    assert_false(targets_add_segment(m, m->nsegs, &pol, &p, why, sizeof(why)));
    unlink_plan_free(&p);
}

static void roles(const struct model *m)
{
    struct signal_plan w = {0}, z = {0}, mg = {0};
    targets_role(m, ROLE_ORPHAN_WORKER, &w);
    targets_role(m, ROLE_ZOMBIE, &z);
    targets_role(m, ROLE_SHM_MANAGER, &mg);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.items[0].pid, 20);
    assert_non_null(strstr(w.items[0].why, "caught signals and libtorch whose parent, pid 1"));
    assert_int_equal(z.n, 1);
    assert_int_equal(z.items[0].pid, 30);
    assert_non_null(strstr(z.items[0].why, "parent pid 10"));
    assert_int_equal(mg.n, 1);
    assert_int_equal(mg.items[0].pid, 13);
    struct signal_target t;
    assert_true(targets_proc(m, 40, &t));
    assert_int_equal(t.role, ROLE_HOLDER);
    free(t.cmdline);
    assert_false(targets_proc(m, 4242, &t));
    signal_plan_free(&w);
    signal_plan_free(&z);
    signal_plan_free(&mg);
}

static void reap_plan(const struct model *m)
{
    struct reap_plan p;
    /* No process table to examine the manager's clients (a proc with no
     * process in it): it is left alone. */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/sysvipc", fixtures_dir());
    struct sysroot sys = test_sysroot(dir, dir);
    reap_plan_build(m, &sys, NULL, NULL, &p);
    sysroot_close(&sys);
    assert_int_equal(p.workers.n, 1);
    assert_int_equal(p.workers.items[0].pid, 20);
    assert_int_equal(p.managers.n, 0);
    assert_int_equal(p.serving.n, 1);
    assert_int_equal(p.serving.items[0].pid, 13);
    assert_non_null(strstr(p.serving.items[0].why, "left alone"));
    assert_int_equal(p.zombies.n, 1);
    assert_int_equal(reap_plan_count(&p), 2);
    reap_plan_free(&p);
}

static void test_reap_plan(void **state)
{
    (void)state;
    with_model(reap_plan);
}

static void test_clean_orphans(void **state)
{
    (void)state;
    with_model(orphans_only);
}

static void test_clean_unheld(void **state)
{
    (void)state;
    with_model(with_unheld);
}

static void test_single_choices(void **state)
{
    (void)state;
    with_model(single_choices);
}

static void test_roles(void **state)
{
    (void)state;
    with_model(roles);
}

/* reap's and K's why of an orphaned worker says the fact that proved it: a
 * worker by its name or its signals whose parent is not its main. A process
 * that merely uses torch shared memory, reparented to init and its process
 * group's leader gone, is no orphan: a live main started by a script that
 * has exited looks so, and reap must never end it. */
static void test_orphan_why(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd");
    /* Its main died; a subreaper shell leads its process group and lives. */
    fake_add_proc(s, 50, 1, 50, 'S', "bash", "/usr/bin/bash");
    fake_add_proc(s, 60, 50, 50, 'S', "python3", "/usr/bin/python3")->sigcatch =
        TORCHPRINT_WORKER_SIGS;
    /* Named, reparented to init, its main (the leader, 69) gone with it. */
    fake_add_proc(s, 70, 1, 69, 'S', "pt_data_worker", "/usr/bin/python3");
    fake_add_file(s, "torch_70_1", 1, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, 70, 3, true, 1, "/dev/shm/torch_70_1", false, MiB, MiB);
    /* Neither name nor signals: a main whose launching script (79, its
     * process group's leader) has exited, holding its torch segment. */
    fake_add_proc(s, 80, 1, 79, 'S', "python3", "/usr/bin/python3");
    fake_add_file(s, "torch_80_1", 2, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, 80, 3, true, 2, "/dev/shm/torch_80_1", false, MiB, MiB);
    fake_torch_loaded(s, 60);
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);
    struct signal_plan w = {0};
    targets_role(&m, ROLE_ORPHAN_WORKER, &w);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.items[0].pid, 60);
    assert_string_equal(w.items[0].why, "orphaned worker: a DataLoader worker by its caught "
                                        "signals and libtorch whose parent, pid 50 (bash), is "
                                        "not its main");
    assert_int_equal(w.items[1].pid, 70);
    assert_string_equal(w.items[1].why, "orphaned worker: a DataLoader worker by its name whose "
                                        "parent, pid 1 (systemd), is not its main");
    assert_int_equal(model_find_proc(&m, 80)->role, ROLE_HOLDER);
    signal_plan_free(&w);
    model_free(&m);
    scan_free(s);
    free(s);
}

static void test_log(void **state)
{
    (void)state;
    char *p = actlog_default_path("/state", "/home/u");
    assert_string_equal(p, "/state/shmwatch/actions.log");
    free(p);
    p = actlog_default_path("relative", "/home/u");
    assert_string_equal(p, "/home/u/.local/state/shmwatch/actions.log");
    free(p);
    assert_null(actlog_default_path(NULL, NULL));

    char dir[] = "/tmp/shmwatch-log.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof(path), "%s/a.log", dir);
    struct actlog log;
    assert_int_equal(actlog_open(&log, path), 0);
    struct actlog_entry e = {.time = 86400, .action = "unlink", .target = "/dev/shm/x\ny\tz",
                             .owner = 1000, .bytes = 4096, .result = "removed",
                             .detail = "orphan"};
    actlog_write(&log, &e);
    e.result = "refused";
    e.owner = -1;
    actlog_write(&log, &e);
    assert_non_null(strstr(actlog_recent(&log, 0), "\trefused\t"));
    assert_non_null(strstr(actlog_recent(&log, 1), "\tremoved\t"));
    assert_null(actlog_recent(&log, 2));
    actlog_close(&log);
    struct buf text;
    buf_init(&text);
    assert_int_equal(read_file(path, &text, 4096), 0);
    /* Two lines; the name's newline and tab are escaped, so 7 fields each. */
    char *cur = text.data, *line;
    int n = 0;
    while ((line = next_line(&cur))) {
        n++;
        int tabs = 0;
        for (char *c = line; *c; c++)
            tabs += *c == '\t';
        assert_int_equal(tabs, 6);
        assert_non_null(strstr(line, "\t/dev/shm/x\\ny\\tz\t"));
        assert_non_null(strstr(line, n == 1 ? "owner=1000\tbytes=4096" : "owner=?"));
    }
    assert_int_equal(n, 2);
    buf_free(&text);
    unlink(path);
    rmdir(dir);
    /* An unwritable place: disabled, with the reason, and still a no-op to write. */
    assert_true(actlog_open(&log, "/nonexistent-dir/a.log") < 0);
    assert_int_equal(log.fd, -1);
    assert_true(log.err != 0);
    actlog_write(&log, &e);
    assert_non_null(actlog_recent(&log, 0));
    actlog_close(&log);
}

/* Records directory name at the top of the scene's mount, dated mtime, as
 * the scan's listing does (files.h: struct shm_dir). */
static void add_dir(struct scan *s, const char *name, int64_t mtime, ino_t ino)
{
    struct file_list *fl = &s->files;
    struct shm_dir *d = VEC_PUSH(fl->dirs, fl->ndirs, fl->dirs_cap);
    d->mount = 0;
    d->name = files_name(fl, name);
    d->dev = s->mounts.items[0].dev;
    d->ino = ino;
    d->uid = 1000;
    d->mtime = mtime;
}

/* The directories the scan recorded at the top of a mount, no I/O: one
 * named after a dead creator is added (refused) at any age; any other only
 * with all_unheld and old enough; a folder segment (joblib's) never, the
 * model has it. */
static void test_add_dirs(void **state)
{
    (void)state;
    struct scan *s = fake_scene(); /* scanned at 1600 */
    add_dir(s, "torch_999_5", 1600, 5); /* creator 999 is dead; dated at the scan */
    add_dir(s, "torch_10_5", 1000, 6);  /* creator 10 is alive; 600 s old at the scan */
    add_dir(s, "plain", 1000, 7);
    add_dir(s, "joblib_memmapping_folder_999_ab_cd", 1000, 8);
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);

    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p = {0};
    targets_add_dirs(&m, &pol, &p);
    assert_int_equal(p.n, 1);
    const struct unlink_target *t = find(&p, "torch_999_5");
    assert_non_null(t);
    assert_non_null(t->refuse);
    assert_non_null(strstr(t->refuse, "directory"));
    assert_int_equal(t->state, SEG_UNHELD);
    assert_string_equal(t->mount, "/dev/shm");
    assert_true(t->dev == s->mounts.items[0].dev && t->ino == 5 && t->uid == 1000);
    assert_int_equal(t->mtime, 1600);
    assert_int_equal(p.ntry, 0);
    unlink_plan_free(&p);

    pol.all_unheld = true;
    pol.min_age_s = 600;
    memset(&p, 0, sizeof(p));
    targets_add_dirs(&m, &pol, &p);
    assert_int_equal(p.n, 3);
    assert_non_null(find(&p, "torch_999_5"));
    assert_non_null(find(&p, "torch_10_5"));
    assert_non_null(find(&p, "plain"));
    for (size_t i = 0; i < p.n; i++)
        assert_non_null(p.items[i].refuse);
    unlink_plan_free(&p);

    pol.min_age_s = 601;
    memset(&p, 0, sizeof(p));
    targets_add_dirs(&m, &pol, &p);
    assert_int_equal(p.n, 1);
    assert_non_null(find(&p, "torch_999_5"));
    unlink_plan_free(&p);

    model_free(&m);
    scan_free(s);
    free(s);
}

/* A joblib folder of a dead creator that is not an orphan (written at the
 * scan: it may be in flight) is kept by a default clean, never planned as
 * a folder to remove; the same folder old enough is an orphan, removed. */
#define JOBLIB_A "joblib_memmapping_folder_999_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_" \
                 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define JOBLIB_B "joblib_memmapping_folder_999_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_" \
                 "cccccccccccccccccccccccccccccccc"
static void test_young_folder(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty(); /* scanned at 1600 */
    fake_add_file(s, JOBLIB_A, 71, FT_DIR, 0, 0);
    s->files.items[s->files.n - 1].mtime = 1600; /* written at the scan */
    fake_add_file(s, JOBLIB_B, 72, FT_DIR, 0, 0); /* 600 s old */
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);

    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p;
    targets_clean(&m, &pol, &p);
    const struct unlink_target *t = find(&p, JOBLIB_A);
    if (t)
        fail_msg("the young folder is planned (refuse %s, why %s)",
                 t->refuse ? t->refuse : "none", t->why);
    assert_int_equal(p.inflight, 1);
    t = find(&p, JOBLIB_B);
    assert_non_null(t);
    assert_true(t->folder);
    assert_null(t->refuse);
    assert_int_equal(t->state, SEG_ORPHAN);
    unlink_plan_free(&p);

    model_free(&m);
    scan_free(s);
    free(s);
}

/* A container restarted on a /dev/shm that outlived it (a pod's emptyDir):
 * every process that has the mount at /dev/shm started at 1200. What was
 * last changed before then is its earlier run's, whatever process its pid
 * names now (pid 7 came back); what came after, or is held, or carries no
 * pid, or whose creator lives since before it, is not; and nothing of it
 * holds without every process in sight. */
static struct scan *restarted(bool view_initial)
{
    struct scan *s = fake_scene_empty(); /* scanned at 1600 */
    s->ns.hz = 100; /* the clock: boot at 0 */
    /* pid 7 of the new run; pid 9, a process of another user that this
     * shmwatch cannot place, running since 500. */
    fake_add_proc(s, 7, 1, 7, 'S', "python3", "/usr/bin/python3")->start_ticks = 1200 * 100;
    fake_add_proc(s, 9, 1, 9, 'S', "python3", "/usr/bin/python3")->start_ticks = 500 * 100;
    procs_sort(&s->procs);
    const char *names[] = {"torch_7_1", "torch_8_1", "torch_7_2",
                           "torch_7_3", "cache.bin", "torch_9_1"};
    int64_t mtimes[] = {1000, 1000, 1300, 1000, 1000, 1000};
    for (size_t i = 0; i < 6; i++) {
        fake_add_file(s, names[i], 100 + i, FT_REGULAR, 4 * MiB, 4 * MiB);
        s->files.items[s->files.n - 1].mtime = mtimes[i];
        s->files.items[s->files.n - 1].ctime = mtimes[i];
    }
    fake_add_holder(s, 7, 5, true, 103, "/dev/shm/torch_7_3", false, 4 * MiB, 4 * MiB);
    s->ns.ndevs = 1;
    s->ns.reach = xcalloc(1, sizeof(*s->ns.reach));
    s->ns.reach[0].nshm_procs = 1;
    s->ns.reach[0].shm_first_ticks = 1200 * 100;
    s->ns.view_initial = view_initial;
    return s;
}

static void test_earlier_run(void **state)
{
    (void)state;
    struct model_opts o;
    model_opts_default(&o);
    struct scan *s = restarted(true);
    struct model m;
    model_build(s, &o, &m);
    const struct segment *sg = NULL;
    for (size_t i = 0; i < m.nsegs; i++)
        if (strcmp(m.segs[i].name, "torch_7_1") == 0)
            sg = &m.segs[i];
    assert_non_null(sg);
    assert_int_equal(sg->state, SEG_ORPHAN);
    assert_true(sg->earlier_run);
    assert_false(sg->creator_alive); /* pid 7 is the new run's */
    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p;
    targets_clean(&m, &pol, &p);
    assert_int_equal(p.n, 2);
    assert_non_null(find(&p, "torch_7_1"));
    assert_non_null(find(&p, "torch_8_1"));
    const char *why = find(&p, "torch_8_1")->why;
    assert_non_null(strstr(why, "orphan: held by nobody, left by an earlier run of its container "
                                "(restarted at "));
    assert_null(find(&p, "torch_7_2")); /* written by the new run */
    assert_null(find(&p, "torch_7_3")); /* held */
    assert_null(find(&p, "cache.bin")); /* no pid in its name */
    assert_null(find(&p, "torch_9_1")); /* its creator lives since before */
    unlink_plan_free(&p);
    /* The budget says what the leftovers hold, and to clean them first. */
    const struct budget *b = model_mount_budget(&m, 0);
    bool said = false;
    for (size_t i = 0; i < b->nadvice; i++)
        said |= strstr(b->advice[i], "An earlier run of this container left 8.0 MiB of orphans") &&
                strstr(b->advice[i], "clean them first");
    assert_true(said);
    assert_int_equal(m.mounts[0].leftover, 8 * MiB);
    model_free(&m);
    scan_free(s);
    free(s);

    /* Inside a pid namespace, processes out of sight may have the mount:
     * nothing is of an earlier run. */
    s = restarted(false);
    model_build(s, &o, &m);
    targets_clean(&m, &pol, &p);
    assert_null(find(&p, "torch_7_1"));
    assert_int_equal(m.mounts[0].leftover, 0);
    unlink_plan_free(&p);
    model_free(&m);
    scan_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_dirs),
        cmocka_unit_test(test_young_folder),
        cmocka_unit_test(test_clean_orphans),
        cmocka_unit_test(test_earlier_run),
        cmocka_unit_test(test_clean_unheld),
        cmocka_unit_test(test_single_choices),
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_orphan_why),
        cmocka_unit_test(test_reap_plan),
        cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
