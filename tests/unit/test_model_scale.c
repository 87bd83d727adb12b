/* The model at scale: a segment held by thousands of processes folds each
 * one's fd and mapping into one holder entry and counts the segment once
 * per process, and --pid mode maps the pids in names through the watched
 * namespace. (That this stays linear is the benchmark's to show: its growth
 * ratios, tests/bench/run.sh; a timed unit test would only be flaky.) */
#include <stdio.h>

#include "fake_scene.h"
#include "model/model.h"
#include "testutil.h"

static void test_many_holders(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_file(s, "big", 7, FT_REGULAR, 4 * MiB, 4 * MiB);
    enum { N = 20000 };
    for (pid_t pid = 100; pid < 100 + N; pid++) {
        fake_add_proc(s, pid, 1, pid, 'S', "reader", NULL);
        /* The walk's order: a process's fd, then its mapping. */
        fake_add_holder(s, pid, 5, false, 7, "/dev/shm/big", false, 4 * MiB, 4 * MiB);
        fake_add_holder(s, pid, -1, true, 7, "/dev/shm/big", false, 4 * MiB, 4 * MiB);
    }
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);
    assert_int_equal(m.nsegs, 1);
    const struct segment *sg = &m.segs[0];
    assert_int_equal(sg->nholders, N);
    for (size_t i = 0; i < sg->nholders; i++) {
        assert_int_equal(sg->holders[i].fd, 5);
        assert_true(sg->holders[i].mapped);
    }
    /* Each holder is listed with the segment counted once. */
    assert_int_equal(m.nprocs, N);
    for (size_t i = 0; i < m.nprocs; i++) {
        assert_int_equal(m.procs[i].nsegments, 1);
        assert_int_equal(m.procs[i].shm_bytes, 4 * MiB);
    }
    model_free(&m);
    scan_free(s);
    free(s);
}

static void test_pid_mode_creators(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->target_pid = 500;
    /* Host pids 500.. are pids 1.. of the watched namespace 77; host pids
     * 900.. live in namespace 88 and reuse the same inner numbers. */
    for (pid_t i = 0; i < 300; i++) {
        struct proc *p = fake_add_proc(s, 500 + i, i ? 500 : 1, 500, 'S', "python3", NULL);
        p->pidns = 77;
        p->nspid = 1 + i;
    }
    for (pid_t i = 0; i < 300; i++) {
        struct proc *p = fake_add_proc(s, 900 + i, 1, 900, i == 41 ? 'Z' : 'S', "other", NULL);
        p->pidns = 88;
        p->nspid = 1 + i;
    }
    fake_add_file(s, "torch_42_1", 1, FT_REGULAR, MiB, MiB);   /* inner 42: host 541 */
    fake_add_file(s, "torch_301_1", 2, FT_REGULAR, MiB, MiB);  /* no such inner pid */
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);
    assert_int_equal(m.nsegs, 2);
    const struct segment *a = strcmp(m.segs[0].name, "torch_42_1") ? &m.segs[1] : &m.segs[0];
    const struct segment *b = a == &m.segs[0] ? &m.segs[1] : &m.segs[0];
    assert_true(a->has_creator);
    assert_int_equal(a->creator_pid, 541);
    assert_true(a->creator_alive); /* namespace 88's inner 42 is a zombie: not it */
    assert_true(b->has_creator);
    assert_false(b->creator_alive);
    assert_int_equal(b->state, SEG_ORPHAN);
    model_free(&m);
    scan_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_holders),
        cmocka_unit_test(test_pid_mode_creators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
