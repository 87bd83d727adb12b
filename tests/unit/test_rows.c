/* The dashboard's rows (src/ui/rows.c, sort.c) over the shared fake scene:
 * the tree's shape and where each segment goes, filtering with ancestors and
 * descendants, collapsed branches, the tree lines, sorting, and the cursor
 * staying on its item. No terminal is involved. */
#include <stdio.h>

#include "testutil.h"

#include "config/config.h"
#include "fake_scene.h"
#include "ui/ui_priv.h"

struct fixture {
    struct snap snap;
    struct ui_settings set;
    struct ui u;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct scan *s = fake_scene();
    f->snap.scan = *s;
    free(s);
    struct model_opts mo;
    model_opts_default(&mo);
    model_build(&f->snap.scan, &mo, &f->snap.model);
    config_defaults(&f->set.cfg);
    f->u.set = &f->set;
    f->u.snap = &f->snap;
    f->u.view = CONFIG_VIEW_TREE;
    f->u.sort = CONFIG_SORT_SIZE;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    free(f->u.rows);
    keyset_clear(&f->u.collapsed);
    keyset_clear(&f->u.marked);
    model_free(&f->snap.model);
    scan_free(&f->snap.scan);
    config_free(&f->set.cfg);
    free(f);
    return 0;
}

/* A row as "depth kind what": "0 G 10", "1 P 12", "2 S torch_12_2", "0 X 2". */
static const char *describe(const struct row *r, char *buf, size_t n)
{
    static const char kinds[] = "GPSX";
    switch (r->key.kind) {
    case ROW_SEG: snprintf(buf, n, "%u S %s", r->depth, r->seg->name); break;
    case ROW_SECTION: snprintf(buf, n, "%u X %d", r->depth, r->key.section); break;
    default: snprintf(buf, n, "%u %c %d", r->depth, kinds[r->key.kind], (int)r->key.pid); break;
    }
    return buf;
}

static void assert_rows(const struct ui *u, const char *const *want, size_t n)
{
    char buf[128];
    for (size_t i = 0; i < u->nrows && i < n; i++)
        assert_string_equal(describe(&u->rows[i], buf, sizeof(buf)), want[i]);
    assert_int_equal(u->nrows, n);
}

#define ASSERT_ROWS(u, ...)                                                                        \
    do {                                                                                           \
        static const char *const want_[] = {__VA_ARGS__};                                          \
        assert_rows((u), want_, sizeof(want_) / sizeof(want_[0]));                                 \
    } while (0)

static void test_tree_shape(void **state)
{
    struct fixture *f = *state;
    rows_rebuild(&f->u);
    /* The group of main 10: worker 12 (8 MiB hidden, 1 MiB unheld it created),
     * worker 11 with the segment it created though main holds it, manager 13;
     * other holders cat (40) and the orphaned worker 20; orphans; unheld. */
    ASSERT_ROWS(&f->u, "0 G 10", "1 P 12", "2 S torch_12_7_1", "2 S torch_12_2", "1 P 11",
                "2 S torch_11_100", "1 P 13", "0 X 0", "1 P 40", "2 S torch_40_1",
                "2 S my segment\n1", "1 P 20", "2 S torch_20_1", "0 X 1", "1 S torch_999_1",
                "1 S __KMP_REGISTERED_LIB_888_0", "0 X 2", "1 S sem.mp-abc", "1 S torch_1_2_3");
    const struct row *g = &f->u.rows[0];
    assert_int_equal(g->count, 3);
    assert_int_equal(g->size, 13 * MiB);  /* 8 + 1 + 4 */
    assert_int_equal(g->alloc, 11 * MiB); /* 6 + 1 + 4 */
    assert_true(g->expandable && g->expanded);
    assert_false(f->u.rows[6].expandable); /* the manager holds nothing */
}

static void test_tree_lines(void **state)
{
    struct fixture *f = *state;
    rows_rebuild(&f->u);
    /* Bit d: the row (or its ancestor) at depth d is the last of its siblings. */
    assert_int_equal(f->u.rows[1].lastmask, 0);         /* worker 12: more follow */
    assert_int_equal(f->u.rows[3].lastmask, 1u << 2);   /* torch_12_2: last under 12 */
    assert_int_equal(f->u.rows[6].lastmask, 1u << 1);   /* manager 13: last of the group */
    assert_int_equal(f->u.rows[12].lastmask, 6);        /* last of 20, itself last */
    assert_int_equal(f->u.rows[16].lastmask, 1);        /* the unheld section ends the list */
    assert_int_equal(f->u.rows[18].lastmask, 3);
}

static void test_filter_keeps_ancestors(void **state)
{
    struct fixture *f = *state;
    snprintf(f->u.filter, sizeof(f->u.filter), "TORCH_12");
    rows_rebuild(&f->u);
    ASSERT_ROWS(&f->u, "0 G 10", "1 P 12", "2 S torch_12_7_1", "2 S torch_12_2");
}

static void test_filter_keeps_descendants(void **state)
{
    struct fixture *f = *state;
    snprintf(f->u.filter, sizeof(f->u.filter), "cat");
    rows_rebuild(&f->u);
    ASSERT_ROWS(&f->u, "0 X 0", "1 P 40", "2 S torch_40_1", "2 S my segment\n1");
    snprintf(f->u.filter, sizeof(f->u.filter), "no such thing");
    rows_rebuild(&f->u);
    assert_int_equal(f->u.nrows, 0);
}

static void test_collapse(void **state)
{
    struct fixture *f = *state;
    struct row_key group = {.kind = ROW_GROUP, .pid = 10};
    struct row_key holders = {.kind = ROW_SECTION, .section = SEC_HOLDERS};
    keyset_toggle(&f->u.collapsed, &group);
    keyset_toggle(&f->u.collapsed, &holders);
    rows_rebuild(&f->u);
    ASSERT_ROWS(&f->u, "0 G 10", "0 X 0", "0 X 1", "1 S torch_999_1",
                "1 S __KMP_REGISTERED_LIB_888_0", "0 X 2", "1 S sem.mp-abc", "1 S torch_1_2_3");
    assert_false(f->u.rows[0].expanded);
    /* A filter shows matches inside collapsed branches. */
    snprintf(f->u.filter, sizeof(f->u.filter), "torch_11");
    rows_rebuild(&f->u);
    ASSERT_ROWS(&f->u, "0 G 10", "1 P 11", "2 S torch_11_100");
    /* Toggling again expands. */
    f->u.filter[0] = '\0';
    keyset_toggle(&f->u.collapsed, &group);
    rows_rebuild(&f->u);
    assert_true(f->u.rows[0].expanded);
    assert_int_equal(f->u.rows[1].key.pid, 12);
}

static void test_flat_sorts(void **state)
{
    struct fixture *f = *state;
    f->u.view = CONFIG_VIEW_FLAT;
    rows_rebuild(&f->u);
    assert_int_equal(f->u.nrows, f->snap.model.nsegs);
    assert_string_equal(f->u.rows[0].seg->name, "torch_12_7_1"); /* 8 MiB */
    assert_string_equal(f->u.rows[f->u.nrows - 1].seg->name, "torch_1_2_3"); /* 11 bytes */
    f->u.sort = CONFIG_SORT_STATE;
    rows_rebuild(&f->u);
    assert_int_equal(f->u.rows[0].seg->state, SEG_ORPHAN);
    assert_int_equal(f->u.rows[f->u.nrows - 1].seg->state, SEG_IN_USE);
    f->u.sort = CONFIG_SORT_NAME;
    f->u.reverse = true;
    rows_rebuild(&f->u);
    assert_string_equal(f->u.rows[0].seg->name, "torch_999_1");
    assert_string_equal(f->u.rows[f->u.nrows - 1].seg->name, "__KMP_REGISTERED_LIB_888_0");
    /* Numbers in names sort as numbers. */
    f->u.reverse = false;
    rows_rebuild(&f->u);
    size_t i12 = 0, i999 = 0;
    for (size_t i = 0; i < f->u.nrows; i++) {
        if (strcmp(f->u.rows[i].seg->name, "torch_12_2") == 0)
            i12 = i;
        if (strcmp(f->u.rows[i].seg->name, "torch_999_1") == 0)
            i999 = i;
    }
    assert_true(i12 < i999);
}

static void test_processes_view(void **state)
{
    struct fixture *f = *state;
    f->u.view = CONFIG_VIEW_PROCESSES;
    f->u.sort = CONFIG_SORT_PID;
    rows_rebuild(&f->u);
    assert_int_equal(f->u.nrows, f->snap.model.nprocs);
    for (size_t i = 1; i < f->u.nrows; i++)
        assert_true(f->u.rows[i - 1].key.pid < f->u.rows[i].key.pid);
    f->u.sort = CONFIG_SORT_STATE; /* zombies and orphaned workers first */
    rows_rebuild(&f->u);
    assert_int_equal(f->u.rows[0].proc->role, ROLE_ZOMBIE);
    assert_int_equal(f->u.rows[1].proc->role, ROLE_ORPHAN_WORKER);
}

static void test_cursor_follows_its_item(void **state)
{
    struct fixture *f = *state;
    f->u.view = CONFIG_VIEW_FLAT;
    rows_rebuild(&f->u);
    size_t k = 0;
    while (strcmp(f->u.rows[k].seg->name, "torch_20_1") != 0)
        k++;
    f->u.cursor = k;
    f->u.sort = CONFIG_SORT_NAME;
    rows_rebuild(&f->u);
    assert_string_equal(f->u.rows[f->u.cursor].seg->name, "torch_20_1");
    assert_true(f->u.cursor != k);
    /* Into the tree: still on it. */
    f->u.view = CONFIG_VIEW_TREE;
    rows_rebuild(&f->u);
    assert_string_equal(f->u.rows[f->u.cursor].seg->name, "torch_20_1");
    /* Filtered away: the cursor stays within the rows. */
    snprintf(f->u.filter, sizeof(f->u.filter), "sem.");
    rows_rebuild(&f->u);
    assert_true(f->u.cursor < f->u.nrows);
}

static void test_keyset(void **state)
{
    (void)state;
    struct keyset ks = {0};
    struct row_key a = {.kind = ROW_SEG, .dev = 1, .ino = 2};
    struct row_key b = {.kind = ROW_SEG, .dev = 1, .ino = 3};
    struct row_key p = {.kind = ROW_PROC, .pid = 2};
    keyset_toggle(&ks, &a);
    keyset_toggle(&ks, &p);
    assert_true(keyset_has(&ks, &a));
    assert_false(keyset_has(&ks, &b));
    assert_true(keyset_has(&ks, &p));
    keyset_toggle(&ks, &a);
    assert_false(keyset_has(&ks, &a));
    assert_int_equal(ks.n, 1);
    keyset_clear(&ks);
    assert_int_equal(ks.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tree_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_keeps_ancestors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_keeps_descendants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collapse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flat_sorts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_processes_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_follows_its_item, setup, teardown),
        cmocka_unit_test(test_keyset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
