/* The map of watched mounts to the pid namespaces that reach them, read by
 * the walk from a fixture /proc (tests/fixtures/nsmap), and what the model
 * lets a creator pid prove with it: one namespace, several (ambiguous), a
 * watcher inside a pid namespace (private, trusted or unproven), and the
 * in-flight minimum age. */
#include <sys/sysmacros.h>

#include "testutil.h"
#include "act/targets.h"
#include "collect/nsmap.h"
#include "collect/walk.h"
#include "fake_scene.h"
#include "model/model.h"
#include "util/units.h"

#define INIT NSMAP_INIT_PIDNS
#define OTHER 4026532600ul

/* nsmap_sees_of on a mountinfo text, parsed by the one parser. */
static void sees_of(const char *text, const dev_t *devs, size_t ndevs, unsigned char *sees)
{
    struct mountinfo mi;
    mountinfo_parse(strdup(text), &mi);
    nsmap_sees_of(&mi, devs, ndevs, sees);
    mountinfo_free(&mi);
}

static void test_parse_helpers(void **state)
{
    (void)state;
    assert_int_equal(status_parse_nspid("Name:\tx\nNSpid:\t200\t7\n", &(pid_t){0}), 2);
    assert_int_equal(status_parse_nspid("NSpid:\t5\nPPid:\t1\n", &(pid_t){0}), 1);
    assert_int_equal(status_parse_nspid("Name:\tx\n", &(pid_t){0}), 0);
    dev_t devs[] = {makedev(0, 45), makedev(0, 99)};
    unsigned char sees[2] = {0};
    char text[] = "22 1 0:21 / /proc rw - proc proc rw\n"
                  "bad line\n"
                  "25 22 0:99 / /dev/shm rw - tmpfs shm rw\n"
                  "26 22 0:450 / /x rw - tmpfs tmpfs rw";
    sees_of(text, devs, 2, sees);
    assert_int_equal(sees[0], 0); /* 0:450 is not 0:45 */
    assert_int_equal(sees[1], NSMAP_SHOWS | NSMAP_AT_SHM);

    /* A test's or a container's tmpfs mounted over the host's /dev/shm
     * hides it: shm_open there reaches the top one only. A mount on another
     * point of the same device (a bind) still counts. */
    unsigned char hid[2] = {0};
    char over[] = "25 22 0:45 / /dev/shm rw shared:9 - tmpfs tmpfs rw\n"
                  "40 25 0:99 / /dev/shm rw - tmpfs tmpfs rw\n";
    sees_of(over, devs, 2, hid);
    assert_int_equal(hid[0], 0);
    assert_int_equal(hid[1], NSMAP_SHOWS | NSMAP_AT_SHM);
    unsigned char bind[2] = {0};
    char both[] = "25 22 0:45 / /dev/shm rw - tmpfs tmpfs rw\n"
                  "40 25 0:99 / /dev/shm rw - tmpfs tmpfs rw\n"
                  "41 30 0:45 / /mnt/host\\040shm rw - tmpfs tmpfs rw";
    sees_of(both, devs, 2, bind);
    assert_int_equal(bind[0], NSMAP_SHOWS); /* not at /dev/shm: hidden there */

    /* A runtime's own mount of a container's tmpfs at its state path
     * (podman's userdata/shm) shows it, not at /dev/shm; /run/shm is. */
    unsigned char state_path[2] = {0};
    char podman[] = "94 26 0:45 / /var/lib/containers/storage/overlay-containers/x/userdata/shm "
                    "rw - tmpfs shm rw\n"
                    "95 26 0:99 / /run/shm rw - tmpfs shm rw\n"
                    "96 26 0:99 / /dev/shmx rw - tmpfs shm rw\n";
    sees_of(podman, devs, 2, state_path);
    assert_int_equal(state_path[0], NSMAP_SHOWS);
    assert_int_equal(state_path[1], NSMAP_SHOWS | NSMAP_AT_SHM);

    /* The stacking decides, not the order of the lines: a mount slid
     * beneath the top one (move_mount's MOVE_MOUNT_BENEATH) is listed after
     * it and stays hidden by it. */
    unsigned char beneath[2] = {0};
    sees_of("25 40 0:45 / /dev/shm rw - tmpfs tmpfs rw\n"
            "40 22 0:99 / /dev/shm rw - tmpfs tmpfs rw\n",
            devs, 2, beneath);
    assert_int_equal(beneath[0], NSMAP_SHOWS | NSMAP_AT_SHM);
    assert_int_equal(beneath[1], 0);
}

static bool has_ns(const struct mount_reach *r, unsigned long ns)
{
    for (size_t i = 0; i < r->npidns; i++)
        if (r->pidns[i] == ns)
            return true;
    return false;
}

/* The fixture: the host's /dev/shm (0:45) reached from the first pid
 * namespace and from an --ipc=host container's; a container's own tmpfs
 * (0:99) from that container's namespace alone. */
static void test_walk_fixture(void **state)
{
    (void)state;
    char proc[512];
    snprintf(proc, sizeof(proc), "%s/nsmap/proc", fixtures_dir());
    dev_t devs[] = {makedev(0, 45), makedev(0, 99)};
    struct nsmap ns;
    nsmap_init(&ns, devs, 2);
    struct proc_list pl = {0};
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct sysroot sys = test_sysroot(proc, NULL);
    struct walk_opts o = {.sys = &sys, .devs = devs, .ndevs = 2, .world_pid = 100, .ns = &ns};
    assert_int_equal(walk_run(&o, &pl, &hl, &w), 0);
    sysroot_close(&sys);
    assert_int_equal(pl.n, 6);

    assert_int_equal(ns.self_pidns, INIT);
    assert_int_equal(ns.self_depth, 1);
    assert_int_equal(ns.view_pidns, INIT);
    assert_true(ns.view_initial);
    assert_true(ns.pid1_ok);
    /* Four mount namespaces met (1 and 100 share one), each read once;
     * 500's cannot be read. */
    assert_int_equal(ns.nns, 4);

    assert_int_equal(ns.reach[0].npidns, 3);
    assert_true(has_ns(&ns.reach[0], INIT));
    assert_true(has_ns(&ns.reach[0], OTHER));
    assert_true(has_ns(&ns.reach[0], 4026532602ul)); /* unreadable: may reach it */
    assert_true(ns.reach[0].pidns[0] < ns.reach[0].pidns[1]);
    assert_int_equal(ns.reach[1].npidns, 2);
    assert_true(has_ns(&ns.reach[1], 4026532601ul));
    assert_true(has_ns(&ns.reach[1], 4026532602ul));
    const struct mntns_seen *seen = nsmap_mntns(&ns, 4026532500ul, -1); /* met already */
    assert_non_null(seen);
    assert_true(seen->sees[0]);
    assert_false(seen->sees[1]);
    /* Any of the first n devices, in one lookup: the roles' question. */
    assert_false(nsmap_shows_first(&ns, 4026532500ul, 0));
    assert_true(nsmap_shows_first(&ns, 4026532500ul, 1));
    assert_true(nsmap_shows_first(&ns, 4026532500ul, 99)); /* no further than the devices */
    assert_false(nsmap_shows_first(&ns, 4026539999ul, 2)); /* never met */
    assert_false(nsmap_shows_first(&ns, 0, 2));

    /* NSpid is read for the processes of other pid namespaces that reach a
     * watched mount: their pid where they name their segments. */
    const struct proc *c = procs_find(&pl, 200);
    assert_non_null(c);
    assert_int_equal(c->nspid, 7);
    assert_int_equal(c->pidns, OTHER);
    assert_int_equal(c->mntns, 4026532500ul);
    assert_int_equal(procs_find(&pl, 300)->nspid, 1);
    assert_int_equal(procs_find(&pl, 100)->nspid, 100);
    assert_int_equal(procs_find(&pl, 400)->pidns, 0);

    nsmap_free(&ns);
    procs_free(&pl);
    holders_free(&hl);
    warn_free(&w);
}

/* ---- The model's reading of the map ---- */

static const dev_t scene_devs[] = {0}; /* the fake scene's one mount */

/* The fake scene with namespace facts: every process in the first pid
 * namespace, the mount reached from the given namespaces. */
static struct scan *scene(const unsigned long *pidns, size_t n, bool initial)
{
    struct scan *s = fake_scene();
    nsmap_init(&s->ns, scene_devs, 1);
    s->ns.self_pidns = initial ? INIT : OTHER;
    s->ns.view_pidns = s->ns.self_pidns;
    s->ns.self_depth = 1;
    s->ns.view_initial = initial;
    for (size_t i = 0; i < s->procs.n; i++)
        s->procs.items[i].pidns = s->ns.self_pidns;
    struct mount_reach *r = &s->ns.reach[0];
    r->pidns = calloc(n ? n : 1, sizeof(*r->pidns));
    memcpy(r->pidns, pidns, n * sizeof(*pidns));
    r->npidns = n;
    return s;
}

static const struct segment *seg(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (strcmp(m->segs[i].name, name) == 0)
            return &m->segs[i];
    fail_msg("no segment %s", name);
    return NULL;
}

static void build(struct scan *s, struct model *m, double min_age, bool trust)
{
    struct model_opts o;
    model_opts_default(&o);
    assert_true(o.orphan_min_age_s == ORPHAN_MIN_AGE_DEFAULT);
    o.orphan_min_age_s = min_age;
    o.trust_pids = trust;
    model_build(s, &o, m);
}

static void done(struct scan *s, struct model *m)
{
    model_free(m);
    scan_free(s);
    free(s);
}

/* torch_999_1 (age 600 s, held by nobody, pid 999 alive nowhere). */
static void test_one_namespace(void **state)
{
    (void)state;
    const unsigned long ns[] = {INIT};
    struct scan *s = scene(ns, 1, true);
    struct model m;
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_SOUND);
    const struct segment *sg = seg(&m, "torch_999_1");
    assert_int_equal(sg->state, SEG_ORPHAN);
    assert_false(sg->creator_alive);
    assert_false(sg->creator_unknown);
    assert_int_equal(sg->note, NOTE_NONE);
    done(s, &m);
}

static void test_shared(void **state)
{
    (void)state;
    const unsigned long ns[] = {INIT, OTHER};
    struct scan *s = scene(ns, 2, true);
    struct model m;
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_SHARED);
    assert_int_equal(m.mounts[0].pids.npidns, 2);
    const struct segment *sg = seg(&m, "torch_999_1");
    assert_int_equal(sg->state, SEG_UNHELD); /* never an orphan on a pid alone */
    assert_true(sg->creator_unknown);
    assert_int_equal(sg->note, NOTE_SHARED);
    char note[256];
    assert_non_null(strstr(segment_note(&m, sg, note, sizeof(note)), "2 pid namespaces"));
    assert_int_equal(m.totals.orphans, 0);
    /* clean keeps it, and says why; --all-unheld past min_age takes it. */
    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p;
    targets_clean(&m, &pol, &p);
    assert_int_equal(p.ntry, 0);
    assert_true(p.doubtful >= 1);
    assert_non_null(p.doubt);
    unlink_plan_free(&p);
    pol.all_unheld = true;
    pol.min_age_s = 60;
    targets_clean(&m, &pol, &p);
    bool planned = false;
    for (size_t i = 0; i < p.n; i++)
        planned = planned || strcmp(p.items[i].name, "torch_999_1") == 0;
    assert_true(planned);
    unlink_plan_free(&p);
    done(s, &m);

    /* Alive in the other namespace (pid 999 there is 5000 here): alive. */
    s = scene(ns, 2, true);
    struct proc *c = fake_add_proc(s, 5000, 1, 5000, 'S', "python3", "/usr/bin/python3");
    c->pidns = OTHER;
    c->nspid = 999;
    procs_sort(&s->procs);
    build(s, &m, 0, false);
    sg = seg(&m, "torch_999_1");
    assert_int_equal(sg->state, SEG_UNHELD);
    assert_true(sg->creator_alive);
    assert_false(sg->creator_unknown);
    assert_int_equal(sg->creator_pid, 5000);
    assert_int_equal(sg->note, NOTE_NONE);
    /* A live creator in the first namespace still counts (torch_11_100). */
    assert_true(seg(&m, "torch_11_100")->creator_alive);
    done(s, &m);
}

/* A container's tmpfs that its runtime also mounts at a state path in the
 * host's namespace (podman's userdata/shm): only the namespaces that have it
 * at /dev/shm count, so the container's pid namespace alone reads the pid
 * (creator 999 is dead there: an orphan). Kept: a second namespace at
 * /dev/shm (--ipc=host) makes it shared; a mount no namespace has at
 * /dev/shm (--mount) counts every namespace that has it. */
static void test_state_path(void **state)
{
    (void)state;
    const unsigned long ns[] = {INIT, OTHER};
    const unsigned long *at_shm[] = {(const unsigned long[]){OTHER}, ns, NULL};
    const size_t nat_shm[] = {1, 2, 0};
    const enum pid_evidence want[] = {PIDS_SOUND, PIDS_SHARED, PIDS_SHARED};
    for (size_t k = 0; k < 3; k++) {
        struct scan *s = scene(ns, 2, true);
        struct mount_reach *r = &s->ns.reach[0];
        r->nshm_pidns = nat_shm[k];
        r->shm_pidns = calloc(2, sizeof(*r->shm_pidns));
        memcpy(r->shm_pidns, at_shm[k] ? at_shm[k] : ns, nat_shm[k] * sizeof(*ns));
        struct model m;
        build(s, &m, 0, false);
        assert_int_equal(m.mounts[0].pids.evidence, want[k]);
        assert_int_equal(m.mounts[0].pids.npidns, k == 0 ? 1 : 2);
        const struct segment *sg = seg(&m, "torch_999_1");
        assert_int_equal(sg->state, k == 0 ? SEG_ORPHAN : SEG_UNHELD);
        if (k == 0)
            assert_int_equal(m.mounts[0].pids.lookup, OTHER);
        done(s, &m);
    }
}

/* The watcher inside a pid namespace: unproven, unless the mount is shown
 * private (born after the namespace's init started, not propagated) or the
 * user trusts the pids. */
static void test_inside(void **state)
{
    (void)state;
    const unsigned long ns[] = {OTHER};
    struct scan *s = scene(ns, 1, false);
    s->ns.pid1_ok = true;
    s->ns.pid1_start.tv_sec = 500;
    s->ns.reach[0].btime_ok = true;
    s->ns.reach[0].btime.tv_sec = 499;
    s->ns.reach[0].btime.tv_nsec = 900000000; /* 100 ms before the container: not private */
    struct model m;
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_UNPROVEN);
    const struct segment *sg = seg(&m, "torch_999_1");
    assert_int_equal(sg->state, SEG_UNHELD);
    assert_int_equal(sg->note, NOTE_UNPROVEN);
    assert_true(sg->creator_unknown);
    assert_non_null(pid_evidence_note(PIDS_UNPROVEN));
    model_free(&m);

    build(s, &m, 0, true); /* the user's word */
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_TRUSTED);
    assert_int_equal(seg(&m, "torch_999_1")->state, SEG_ORPHAN);
    model_free(&m);

    s->ns.reach[0].btime.tv_sec = 499;
    s->ns.reach[0].btime.tv_nsec = 985000000; /* within 20 ms of the init's start,
                                               * to the tick: private */
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_PRIVATE);
    assert_int_equal(seg(&m, "torch_999_1")->state, SEG_ORPHAN);
    model_free(&m);

    s->ns.reach[0].propagates = true; /* shared: or master: it has peers elsewhere */
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_UNPROVEN);
    model_free(&m);

    s->ns.reach[0].propagates = false;
    s->ns.reach[0].btime_ok = false; /* a kernel before 5.18: no birth time */
    build(s, &m, 0, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_UNPROVEN);
    done(s, &m);
}

/* In flight: younger than orphan_min_age, a dead creator's segment is not
 * an orphan yet; a scan without namespace facts takes its pids as sound. */
static void test_in_flight(void **state)
{
    (void)state;
    struct scan *s = fake_scene(); /* no namespace facts */
    struct model m;
    build(s, &m, 3600, false);
    assert_int_equal(m.mounts[0].pids.evidence, PIDS_SOUND);
    const struct segment *sg = seg(&m, "torch_999_1");
    assert_int_equal(sg->state, SEG_UNHELD);
    assert_int_equal(sg->note, NOTE_YOUNG);
    assert_false(sg->creator_alive);
    assert_false(sg->creator_unknown);
    char note[256];
    assert_non_null(strstr(segment_note(&m, sg, note, sizeof(note)), "orphan_min_age 1h"));
    /* The text, and its cut in a small buffer, are snprintf's. */
    char age[32], want[256];
    fmt_duration(age, sizeof(age), (double)segment_age_s(&m, sg));
    int len = snprintf(want, sizeof(want),
                       "written %s ago, younger than orphan_min_age 1h00m: it may be in flight "
                       "between processes",
                       age);
    assert_string_equal(note, want);
    for (size_t n = 1; n <= (size_t)len + 2; n++) {
        char got[256], cut[256];
        memset(got, '#', sizeof(got));
        memset(cut, '#', sizeof(cut));
        snprintf(cut, n, "%s", want);
        assert_ptr_equal(segment_note(&m, sg, got, n), got);
        assert_memory_equal(got, cut, sizeof(got));
    }
    struct clean_policy pol;
    clean_policy_default(&pol);
    struct unlink_plan p;
    targets_clean(&m, &pol, &p);
    assert_true(p.inflight >= 1);
    for (size_t i = 0; i < p.n; i++)
        assert_string_not_equal(p.items[i].name, "torch_999_1");
    unlink_plan_free(&p);
    model_free(&m);

    build(s, &m, 600, false); /* exactly the age: old enough */
    assert_int_equal(seg(&m, "torch_999_1")->state, SEG_ORPHAN);
    done(s, &m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_helpers), cmocka_unit_test(test_walk_fixture),
        cmocka_unit_test(test_one_namespace), cmocka_unit_test(test_shared),
        cmocka_unit_test(test_state_path),
        cmocka_unit_test(test_inside),        cmocka_unit_test(test_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
