#include "testutil.h"
#include "collect/scan.h"
#include "collect/shmnotify.h"

/* A scan of two mounts, a and b of tree t (paths as the watcher sees them). */
struct two_mounts {
    struct shm_mount mounts[2];
    struct node_mount nodes[2];
    struct scan scan;
};

static void two_mounts(struct two_mounts *m, struct test_tree *t)
{
    memset(m, 0, sizeof(*m));
    m->mounts[0].path = strdup(tree_path(t, "a"));
    m->mounts[1].path = strdup(tree_path(t, "b"));
    snprintf(m->nodes[0].id, sizeof(m->nodes[0].id), "0:1001");
    snprintf(m->nodes[1].id, sizeof(m->nodes[1].id), "0:1002");
    m->scan.mounts.items = m->mounts;
    m->scan.mounts.n = 2;
    m->scan.node.mounts = m->nodes;
    m->scan.node.nmounts = 2;
}

/* The test's tree, removed by teardown whatever the test's outcome. */
static int setup(void **state)
{
    struct test_tree *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    tree_make(t, "shmnotify");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct test_tree *t = *state;
    tree_remove(t);
    free(t);
    return 0;
}

/* A mount whose watch went (its directory removed: IN_IGNORED) is watched
 * again at the next scan that shows it, wherever it is in the list, and
 * its churn is counted again. */
static void test_watch_made_again(void **state)
{
    struct test_tree *t = *state;
    tree_dir(t, "a");
    tree_dir(t, "b");
    struct two_mounts m;
    two_mounts(&m, t);
    struct sysroot sys = SYSROOT_NONE;
    struct shmnotify sn;
    assert_int_equal(shmnotify_init(&sn), 0);
    shmnotify_follow(&sn, &m.scan, &sys);
    assert_int_equal(sn.n, 2);
    assert_true(sn.items[0].wd >= 0);
    assert_true(sn.items[1].wd >= 0);
    assert_int_not_equal(sn.items[0].wd, sn.items[1].wd);

    assert_int_equal(rmdir(tree_path(t, "a")), 0);
    shmnotify_read(&sn);
    assert_int_equal(sn.items[0].wd, -1);
    tree_dir(t, "a");
    shmnotify_follow(&sn, &m.scan, &sys);
    assert_true(sn.items[0].wd >= 0);
    assert_int_not_equal(sn.items[0].wd, sn.items[1].wd);

    FILE *f = fopen(tree_path(t, "a/seg"), "w");
    assert_non_null(f);
    fclose(f);
    shmnotify_read(&sn);
    uint64_t created, removed;
    assert_true(shmnotify_take(&sn, "0:1001", &created, &removed));
    assert_int_equal(created, 1);
    assert_int_equal(removed, 0);

    shmnotify_free(&sn);
    free(m.mounts[0].path);
    free(m.mounts[1].path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_watch_made_again, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
