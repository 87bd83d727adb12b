/* The cgroup reader: its line parsers, and every layout in
 * tests/fixtures/cgroup read end to end. */
#include "testutil.h"

#include "collect/cgroup.h"
#include "collect/mounts.h"

#define HYBRID_ID "9488ab73805b3d4b09cca9bfc090d0cd"
#define DOCKER_V2_ID "8c1f5e0b7a3d49e2a6f4c9d1b0e87a5f3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f"
#define DOCKER_V1_ID "4f1a7c8e2b9d06e35c71a8f2d4b69e0c13a57f8e2d9b4c6a0f1e3d5c7b9a2e4f"

static char *cgroup_fixture(const char *name)
{
    const char *base = getenv("FIXTURES");
    assert_non_null(base);
    size_t n = strlen(base) + strlen(name) + 16;
    char *p = malloc(n);
    snprintf(p, n, "%s/cgroup/%s", base, name);
    return p;
}

/* Reads the cgroup of pid (0: self) with self's mountinfo, as a scan does,
 * through a seam opened on proc and host. */
static int collect_at(const char *proc, const char *host, pid_t pid, struct cgroup_info *info,
                      struct warnings *w)
{
    struct sysroot sys;
    assert_int_equal(sysroot_open(&sys, proc, host, host), 0);
    struct mountinfo mi;
    (void)mountinfo_read(sys.proc, "self/mountinfo", &mi); /* unreadable: empty, as in a scan */
    int rc = cgroup_collect(&sys, pid, &mi, info, w, NULL);
    mountinfo_free(&mi);
    sysroot_close(&sys);
    return rc;
}

/* Reads a fixture tree (its proc, the tree as host) as self would be read. */
static int collect(const char *name, struct cgroup_info *info, struct warnings *w)
{
    char *root = cgroup_fixture(name);
    warn_init(w);
    char proc[4096];
    snprintf(proc, sizeof(proc), "%s/proc", root);
    int rc = collect_at(proc, root, 0, info, w);
    free(root);
    return rc;
}

/* --- Parsers ------------------------------------------------------------- */

static void test_parse_line(void **state)
{
    (void)state;
    struct cgroup_line l;
    char v1[] = "4:memory:/jobs/abc";
    assert_true(cgroup_parse_line(v1, &l));
    assert_int_equal(l.id, 4);
    assert_string_equal(l.controllers, "memory");
    assert_string_equal(l.path, "/jobs/abc");

    char v2[] = "0::/";
    assert_true(cgroup_parse_line(v2, &l));
    assert_int_equal(l.id, 0);
    assert_string_equal(l.controllers, "");
    assert_string_equal(l.path, "/");

    /* A path may itself hold colons. */
    char colon[] = "8:cpu,cpuacct:/kubepods/pod1:x";
    assert_true(cgroup_parse_line(colon, &l));
    assert_string_equal(l.controllers, "cpu,cpuacct");
    assert_string_equal(l.path, "/kubepods/pod1:x");

    char bad1[] = "garbage", bad2[] = "x:memory:/a", bad3[] = "4:memory:", bad4[] = ":memory:/";
    assert_false(cgroup_parse_line(bad1, &l));
    assert_false(cgroup_parse_line(bad2, &l));
    assert_false(cgroup_parse_line(bad3, &l));
    assert_false(cgroup_parse_line(bad4, &l));
}

static void test_list_has(void **state)
{
    (void)state;
    assert_true(cgroup_list_has("rw,memory", "memory"));
    assert_true(cgroup_list_has("memory", "memory"));
    assert_true(cgroup_list_has("rw,cpu,cpuacct", "cpu"));
    assert_false(cgroup_list_has("rw,cpuacct", "cpu"));
    assert_false(cgroup_list_has("rw,nsdelegate,memory_recursiveprot", "memory"));
    assert_false(cgroup_list_has("", "memory"));
}

static void test_relative(void **state)
{
    (void)state;
    assert_string_equal(cgroup_relative("/docker/abc", "/docker/abc"), "");
    assert_string_equal(cgroup_relative("/docker/abc/", "/docker/abc"), "");
    assert_string_equal(cgroup_relative("/docker/abc/sub", "/docker/abc"), "/sub");
    assert_string_equal(cgroup_relative("/docker/abc/sub", "/docker/abc/"), "/sub");
    assert_null(cgroup_relative("/docker/abcd", "/docker/abc"));
    assert_null(cgroup_relative("/", "/docker/abc"));
    assert_string_equal(cgroup_relative("/a/b", "/"), "/a/b");
    assert_string_equal(cgroup_relative("/", "/"), "");
}

static void test_limits(void **state)
{
    (void)state;
    /* LONG_MAX rounded down to 4 KiB, 16 KiB and 64 KiB pages. */
    assert_true(cgroup_v1_unlimited(9223372036854771712ULL));
    assert_true(cgroup_v1_unlimited(9223372036854759424ULL));
    assert_true(cgroup_v1_unlimited(9223372036854710272ULL));
    assert_true(cgroup_v1_unlimited(9223372036854775807ULL));
    assert_false(cgroup_v1_unlimited(1073741824ULL));
    assert_false(cgroup_v1_unlimited(9223372036854644736ULL)); /* 128 KiB below */

    bool limited = true;
    uint64_t v = 1;
    assert_true(cgroup_parse_limit("max\n", &limited, &v));
    assert_false(limited);
    assert_true(cgroup_parse_limit("536870912\n", &limited, &v));
    assert_true(limited);
    assert_int_equal(v, 536870912);
    assert_true(cgroup_parse_limit("9223372036854771712\n", &limited, &v));
    assert_false(limited);
    assert_false(cgroup_parse_limit("", &limited, &v));
    assert_false(cgroup_parse_limit("-1\n", &limited, &v));
    assert_false(cgroup_parse_limit("512M\n", &limited, &v));
    assert_false(cgroup_parse_limit("maximal\n", &limited, &v));
}

static void test_stat(void **state)
{
    (void)state;
    uint64_t v = 0;
    const char *t = "file_mapped 5\nfile 7\nanon_thp 0\nanon 9\n";
    assert_true(cgroup_stat_get(t, "file", &v));
    assert_int_equal(v, 7);
    assert_true(cgroup_stat_get(t, "anon", &v));
    assert_int_equal(v, 9);
    assert_false(cgroup_stat_get(t, "shmem", &v));
    assert_false(cgroup_stat_get("anon x\n", "anon", &v));

    struct cgroup_stat st;
    cgroup_parse_stat("anon 1\nfile 2\nshmem 3\n", 2, &st);
    assert_int_equal(st.anon, 1);
    assert_int_equal(st.file, 2);
    assert_int_equal(st.shmem, 3);
    assert_false(st.has_hier_limit);

    /* v1 prefers the hierarchical total_* keys. */
    cgroup_parse_stat("cache 2\nrss 1\nshmem 3\nhierarchical_memory_limit 100\n"
                      "total_cache 20\ntotal_rss 10\ntotal_shmem 30\n",
                      1, &st);
    assert_int_equal(st.anon, 10);
    assert_int_equal(st.file, 20);
    assert_int_equal(st.shmem, 30);
    assert_true(st.has_hier_limit);
    assert_int_equal(st.hier_limit, 100);

    cgroup_parse_stat("cache 2\nrss 1\nshmem 3\nhierarchical_memory_limit 9223372036854771712\n",
                      1, &st);
    assert_int_equal(st.anon, 1);
    assert_int_equal(st.file, 2);
    assert_int_equal(st.shmem, 3);
    assert_false(st.has_hier_limit);
}

static void test_oom_kills(void **state)
{
    (void)state;
    uint64_t v = 99;
    /* v2 memory.events */
    assert_true(cgroup_parse_oom_kills("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n"
                                       "oom_group_kill 0\n",
                                       &v));
    assert_int_equal(v, 2);
    /* v1 memory.oom_control: oom_kill_disable is another key, not a prefix match */
    assert_true(cgroup_parse_oom_kills("oom_kill_disable 1\nunder_oom 0\noom_kill 7\n", &v));
    assert_int_equal(v, 7);
    /* A kernel before 4.13: no oom_kill key, so nothing is known. */
    assert_false(cgroup_parse_oom_kills("oom_kill_disable 0\nunder_oom 0\n", &v));
    assert_false(cgroup_parse_oom_kills("", &v));
    assert_false(cgroup_parse_oom_kills("oom_kill many\n", &v));
}

/* --- Fixture trees ---------------------------------------------------------- */

static void test_hybrid(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("hybrid", &c, &w), 0);
    assert_true(c.present);
    assert_int_equal(c.version, 1);
    assert_string_equal(c.path, "/jobs/" HYBRID_ID);
    assert_string_equal(c.dir, "/sys/fs/cgroup/memory/jobs/" HYBRID_ID);
    assert_false(c.has_limit);
    assert_false(c.limit_inherited);
    assert_int_equal(c.usage, 47927296);
    assert_true(c.has_peak);
    assert_int_equal(c.peak, 55312384);
    assert_int_equal(c.anon, 1986560);
    assert_int_equal(c.file, 43741184);
    assert_int_equal(c.shmem, 0);
    assert_false(c.has_oom_kills); /* no memory.oom_control in the capture: unknown, not 0 */
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

static void test_v1(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("v1", &c, &w), 0);
    assert_true(c.present);
    assert_int_equal(c.version, 1);
    assert_string_equal(c.path, "/jobs/" HYBRID_ID "/train/loader");
    assert_string_equal(c.dir, "/sys/fs/cgroup/memory/jobs/" HYBRID_ID "/train/loader");
    /* memory.limit_in_bytes is the sentinel; the parent's 1 GiB applies. */
    assert_true(c.has_limit);
    assert_int_equal(c.limit, 1073741824);
    assert_true(c.limit_inherited);
    assert_int_equal(c.usage, 151433216);
    assert_true(c.has_peak);
    assert_int_equal(c.peak, 151498752);
    assert_int_equal(c.anon, 107917312);
    assert_int_equal(c.file, 42004480);
    assert_int_equal(c.shmem, 41943040); /* the 40 MiB written to /dev/shm */
    assert_true(c.has_oom_kills); /* memory.oom_control oom_kill */
    assert_int_equal(c.oom_kills, 3);
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

static void test_v2(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("v2", &c, &w), 0);
    assert_true(c.present);
    assert_int_equal(c.version, 2);
    assert_string_equal(c.path, "/user.slice/user-1000.slice/user@1000.service/app.slice/train.scope");
    assert_string_equal(c.dir, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/"
                               "app.slice/train.scope");
    /* The scope says max; user-1000.slice caps it at 6 GiB. */
    assert_true(c.has_limit);
    assert_int_equal(c.limit, 6442450944ULL);
    assert_true(c.limit_inherited);
    assert_int_equal(c.usage, 3993300992ULL);
    assert_true(c.has_peak);
    assert_int_equal(c.peak, 4127195136ULL);
    assert_int_equal(c.anon, 1326931968ULL);
    assert_int_equal(c.file, 2617835520ULL);
    assert_int_equal(c.shmem, 1073741824ULL);
    assert_true(c.has_oom_kills); /* memory.events oom_kill */
    assert_int_equal(c.oom_kills, 2);
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

static void check_docker_v2(const struct cgroup_info *c)
{
    assert_true(c->present);
    assert_int_equal(c->version, 2);
    assert_true(c->has_limit);
    assert_int_equal(c->limit, 536870912);
    assert_false(c->limit_inherited);
    assert_int_equal(c->usage, 187949056);
    assert_false(c->has_peak);
    assert_int_equal(c->anon, 98304000);
    assert_int_equal(c->file, 84934656);
    assert_int_equal(c->shmem, 67108864);
    assert_false(c->has_oom_kills); /* no memory.events: the kernel does not say */
}

static void test_namespaced(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("namespaced", &c, &w), 0);
    check_docker_v2(&c);
    assert_string_equal(c.path, "/");
    assert_string_equal(c.dir, "/sys/fs/cgroup");
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

/* unshare -C without a fresh mount: the old mount's root is outside the
 * namespace. No cgroup, and a warning that says what to do. */
static void test_namespaced_stale(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("namespaced-stale", &c, &w), 0);
    assert_false(c.present);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.msg[0], "made outside this cgroup namespace (its root is /../..)"));
    cgroup_free(&c);
    warn_free(&w);
}

static void test_nocontroller(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("nocontroller", &c, &w), 0);
    assert_false(c.present);
    assert_null(c.path);
    assert_false(c.has_limit);
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

static void test_container_hostpath(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    assert_int_equal(collect("container-hostpath", &c, &w), 0);
    assert_true(c.present);
    assert_int_equal(c.version, 1);
    assert_string_equal(c.path, "/docker/" DOCKER_V1_ID);
    /* The mount's root is /docker/<id>: the directory is the mount itself. */
    assert_string_equal(c.dir, "/sys/fs/cgroup/memory");
    assert_true(c.has_limit);
    assert_int_equal(c.limit, 8589934592ULL);
    assert_false(c.limit_inherited);
    assert_int_equal(c.usage, 3390173184ULL);
    assert_true(c.has_peak);
    assert_int_equal(c.peak, 5012127744ULL);
    assert_int_equal(c.anon, 1720320000ULL);
    assert_int_equal(c.file, 1640484864ULL);
    assert_int_equal(c.shmem, 1342177280ULL);
    assert_int_equal(w.n, 0);
    cgroup_free(&c);
    warn_free(&w);
}

static void test_missing_files(void **state)
{
    (void)state;
    struct cgroup_info c;
    struct warnings w;
    char *empty = cgroup_fixture(""); /* no self/cgroup there */
    warn_init(&w);
    assert_int_equal(collect_at(empty, empty, 0, &c, &w), -ENOENT);
    free(empty);
    assert_false(c.present);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.msg[0], "cannot read"));
    cgroup_free(&c);
    warn_free(&w);
}

/* A v1 memory line whose hierarchy is not mounted: no cgroup, and a warning. */
static void test_unmounted(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "shmwatch-cgroup");
    tree_file(&t, "proc/7/cgroup", "4:memory:/x\n0::/\n");
    tree_file(&t, "proc/self/mountinfo", "22 27 0:21 / /proc rw - proc proc rw\n");

    struct cgroup_info c;
    struct warnings w;
    warn_init(&w);
    assert_int_equal(collect_at(tree_path(&t, "proc"), t.dir, 7, &c, &w), 0);
    assert_false(c.present);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.msg[0], "not mounted"));
    cgroup_free(&c);
    warn_free(&w);
    tree_remove(&t);
}

/* Containers that share a cgroup have it read once per scan: the second
 * answer comes from the memo (a change of the file in between is not seen),
 * another cgroup is read afresh, a cgroup that cannot be read is warned
 * about once; without a memo every call reads the files. */
static void test_memo(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "shmwatch-cgmemo");
    tree_file(&t, "proc/self/mountinfo", "30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    tree_file(&t, "proc/7/cgroup", "0::/jobs/a\n");
    tree_file(&t, "proc/8/cgroup", "0::/jobs/a\n");
    tree_file(&t, "proc/9/cgroup", "0::/jobs/b\n");
    tree_file(&t, "proc/10/cgroup", "4:memory:/gone\n");
    tree_file(&t, "sys/fs/cgroup/jobs/a/memory.current", "500\n");
    tree_file(&t, "sys/fs/cgroup/jobs/a/memory.max", "1000\n");
    tree_file(&t, "sys/fs/cgroup/jobs/b/memory.current", "700\n");
    tree_file(&t, "sys/fs/cgroup/jobs/b/memory.max", "2000\n");
    for (int i = 0; i < 2; i++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "sys/fs/cgroup/jobs/%c/memory.stat", "ab"[i]);
        tree_file(&t, rel, "anon 100\nfile 10\nshmem 5\n");
        snprintf(rel, sizeof(rel), "sys/fs/cgroup/jobs/%c/memory.events", "ab"[i]);
        tree_file(&t, rel, "oom 0\noom_kill 0\n");
    }
    struct sysroot sys;
    assert_int_equal(sysroot_open(&sys, tree_path(&t, "proc"), t.dir, t.dir), 0);
    struct mountinfo mi;
    assert_int_equal(mountinfo_read(sys.proc, "self/mountinfo", &mi), 0);
    struct warnings w;
    warn_init(&w);
    struct cgroup_memo memo = {0};
    struct cgroup_info c7, c8, c9, c10a, c10b, fresh;
    assert_int_equal(cgroup_collect(&sys, 7, &mi, &c7, &w, &memo), 0);
    assert_true(c7.present);
    assert_int_equal(c7.usage, 500);
    assert_int_equal(c7.limit, 1000);
    tree_file(&t, "sys/fs/cgroup/jobs/a/memory.current", "600\n");
    assert_int_equal(cgroup_collect(&sys, 8, &mi, &c8, &w, &memo), 0);
    assert_true(c8.present);
    assert_int_equal(c8.usage, 500); /* the memo's */
    assert_string_equal(c8.path, "/jobs/a");
    assert_true(c8.path != c7.path); /* its own copy: freed on its own */
    assert_int_equal(cgroup_collect(&sys, 9, &mi, &c9, &w, &memo), 0);
    assert_int_equal(c9.usage, 700);
    assert_int_equal(c9.limit, 2000);
    assert_int_equal(w.n, 0);
    assert_int_equal(cgroup_collect(&sys, 10, &mi, &c10a, &w, &memo), 0);
    assert_int_equal(cgroup_collect(&sys, 10, &mi, &c10b, &w, &memo), 0);
    assert_false(c10a.present);
    assert_false(c10b.present);
    assert_int_equal(w.n, 1); /* not mounted: said once */
    assert_int_equal(cgroup_collect(&sys, 8, &mi, &fresh, &w, NULL), 0);
    assert_int_equal(fresh.usage, 600);
    /* From the text of a cgroup file read already (the node view's one
     * read per container): proc/11/cgroup does not exist, so nothing but
     * the text can name /jobs/b; a text naming no cgroup is said once. */
    struct cgroup_info c11, c12;
    cgroup_collect_text(&sys, 11, "0::/jobs/b\n", &mi, &c11, &w, NULL);
    assert_true(c11.present);
    assert_string_equal(c11.path, "/jobs/b");
    assert_int_equal(c11.usage, 700);
    assert_int_equal(c11.limit, 2000);
    size_t nw = w.n;
    cgroup_collect_text(&sys, 12, "garbage\n", &mi, &c12, &w, &memo);
    assert_false(c12.present);
    assert_int_equal(w.n, nw + 1);
    assert_non_null(strstr(w.msg[w.n - 1], "12/cgroup names no cgroup"));
    cgroup_free(&c11);
    cgroup_free(&c12);
    cgroup_free(&c7);
    cgroup_free(&c8);
    cgroup_free(&c9);
    cgroup_free(&c10a);
    cgroup_free(&c10b);
    cgroup_free(&fresh);
    cgroup_memo_free(&memo);
    warn_free(&w);
    mountinfo_free(&mi);
    sysroot_close(&sys);
    tree_remove(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_line),
        cmocka_unit_test(test_list_has),
        cmocka_unit_test(test_relative),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_stat),
        cmocka_unit_test(test_oom_kills),
        cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_v1),
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_namespaced),
        cmocka_unit_test(test_namespaced_stale),
        cmocka_unit_test(test_nocontroller),
        cmocka_unit_test(test_container_hostpath),
        cmocka_unit_test(test_missing_files),
        cmocka_unit_test(test_unmounted),
        cmocka_unit_test(test_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
