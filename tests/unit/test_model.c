/* The model over a scan built in memory: states, kinds, byte figures, roles
 * and DataLoader groups. */
#include <signal.h>
#include <sys/sysmacros.h>

#include "testutil.h"
#include "model/model.h"
#include "report/report.h"
#include "fake_scene.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

static const struct segment *seg(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (strcmp(m->segs[i].name, name) == 0)
            return &m->segs[i];
    fail_msg("no segment %s", name);
    return NULL;
}

static int setup(void **state)
{
    struct scan *s = fake_scene();
    struct model *m = calloc(1, sizeof(*m));
    struct model_opts o;
    model_opts_default(&o);
    model_build(s, &o, m);
    *state = m;
    return 0;
}

static int teardown(void **state)
{
    struct model *m = *state;
    struct scan *s = (struct scan *)m->scan;
    model_free(m);
    scan_free(s);
    free(s);
    free(m);
    return 0;
}

/* The kind alone, as name_facts reads it. */
static enum seg_kind kind_of(const char *name)
{
    pid_t creator;
    return name_facts(name, &creator);
}

static void test_states(void **state)
{
    const struct model *m = *state;
    assert_int_equal(m->nsegs, 10);
    assert_int_equal(seg(m, "torch_11_100")->state, SEG_IN_USE);
    assert_int_equal(seg(m, "torch_12_7_1")->state, SEG_HIDDEN);
    assert_int_equal(seg(m, "torch_999_1")->state, SEG_ORPHAN);
    assert_int_equal(seg(m, "torch_12_2")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "torch_1_2_3")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "__KMP_REGISTERED_LIB_888_0")->state, SEG_ORPHAN);
    assert_int_equal(seg(m, "sem.mp-abc")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "torch_20_1")->state, SEG_IN_USE);
    assert_int_equal(seg(m, "torch_40_1")->state, SEG_HIDDEN);
}

static void test_kinds_and_creators(void **state)
{
    const struct model *m = *state;
    const struct segment *s = seg(m, "torch_12_7_1");
    assert_int_equal(s->kind, KIND_TORCH);
    assert_true(s->has_creator);
    assert_int_equal(s->creator_pid, 12);
    assert_true(s->creator_alive);
    s = seg(m, "torch_999_1");
    assert_int_equal(s->creator_pid, 999);
    assert_false(s->creator_alive);
    assert_int_equal(seg(m, "__KMP_REGISTERED_LIB_888_0")->kind, KIND_OMP);
    assert_int_equal(seg(m, "sem.mp-abc")->kind, KIND_SEM);
    assert_false(seg(m, "sem.mp-abc")->has_creator);
    assert_int_equal(seg(m, "my segment\n1")->kind, KIND_OTHER);
}

static void test_kind_names(void **state)
{
    (void)state;
    pid_t p;
    assert_int_equal(kind_of("torch_1_2"), KIND_TORCH);
    assert_int_equal(kind_of("torch_1_2_3"), KIND_TORCH);
    assert_int_equal(kind_of("torch_1_2_3_4"), KIND_OTHER);
    assert_int_equal(kind_of("torch_1_"), KIND_OTHER);
    assert_int_equal(kind_of("torch_a_2"), KIND_OTHER);
    assert_int_equal(kind_of("torch_1_2\n"), KIND_OTHER);
    assert_int_equal(kind_of("xtorch_1_2"), KIND_OTHER);
    /* torch 1.13: torch_<pid>_<random u32>_<counter> */
    assert_int_equal(kind_of("torch_18607_2457419449_0"), KIND_TORCH);
    assert_int_equal(kind_of("torch_1_4294967295_12"), KIND_TORCH);
    assert_int_equal(kind_of("torch_1_18446744073709551616"), KIND_OTHER);
    assert_int_equal(kind_of("torch_2147483648_1"), KIND_OTHER);
    assert_true(name_creator_pid("torch_6420_3996645901_5", &p));
    assert_int_equal(p, 6420);
    assert_true(name_creator_pid("torch_4321_7_2", &p));
    assert_int_equal(p, 4321);
    assert_true(name_creator_pid("__KMP_REGISTERED_LIB_77", &p));
    assert_int_equal(p, 77);
    assert_false(name_creator_pid("__KMP_REGISTERED_LIB_x", &p));
    assert_false(name_creator_pid("torch_0_1", &p));
}


/* Every row of doc/design.md's table of kinds, and names that only look so. */
static void test_kinds_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum seg_kind kind;
        pid_t creator;
    } rows[] = {
        {"torch_4321_7_2", KIND_TORCH, 4321},
        {"joblib_memmapping_folder_77_0123456789abcdef0123456789abcdef_"
         "fedcba9876543210fedcba9876543210", KIND_JOBLIB, 77},
        {"joblib_memmapping_folder_78_140245395021392", KIND_JOBLIB, 78},
        {"joblib_memmapping_folder_x_1", KIND_OTHER, 0},
        {"joblib_memmapping_folder_79_", KIND_OTHER, 0},
        {"__KMP_REGISTERED_LIB_55_1000", KIND_OMP, 55},
        {"nccl-AbC123", KIND_NCCL, 0},
        {"nccl-AbC12", KIND_OTHER, 0},
        {"nccl-shm-send-0-1-2", KIND_NCCL, 0},
        {"nccl-shm-recv-0-1-2", KIND_NCCL, 0},
        {"psm_0123abcd", KIND_PYTHON, 0},
        {"psm_0123abcg", KIND_OTHER, 0},
        {"sem.mp-x1y2", KIND_SEM, 0},
        {"vader_segment.node.1.2", KIND_MPI, 0},
        {"sm_segment.node.1000.2.0", KIND_MPI, 0},
        {"mpich_shar_tmpXYZ", KIND_MPI, 0},
        {"open_mpi.0000", KIND_MPI, 0},
        {"psm2_shm.123", KIND_MPI, 0},
        {"ucx_shm_posix_5ae8e2c1", KIND_UCX, 0},
        {"ucx_shm_posix_", KIND_OTHER, 0},
        {"plasmaA1b2C3", KIND_RAY, 0},
        {"plasma", KIND_OTHER, 0},
        {"nvidia_dali_1234", KIND_DALI, 0},
        {"deepspeed_allreduce_buffer_0", KIND_DEEPSPEED, 0},
        {"pulse-shm-2840113127", KIND_PULSE, 0},
        {"pulse-shm-x", KIND_OTHER, 0},
        {".org.chromium.Chromium.Ab12", KIND_CHROMIUM, 0},
        {".com.google.Chrome.xyz", KIND_CHROMIUM, 0},
        {"my data", KIND_OTHER, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        pid_t p = -1;
        enum seg_kind k = name_facts(rows[i].name, &p);
        if (k != rows[i].kind || p != rows[i].creator)
            fail_msg("%s: kind %s creator %d", rows[i].name, seg_kind_name(k), (int)p);
    }
    /* Names and their parse go both ways; only three kinds carry a creator. */
    for (int k = 0; k < KIND_COUNT; k++) {
        enum seg_kind back;
        assert_true(seg_kind_parse(seg_kind_name((enum seg_kind)k), &back));
        assert_int_equal(back, k);
        assert_int_equal(seg_kind_has_creator((enum seg_kind)k),
                         k == KIND_TORCH || k == KIND_JOBLIB || k == KIND_OMP);
    }
    enum seg_kind back;
    assert_false(seg_kind_parse("tensorflow", &back));
}

static void test_holders_joined(void **state)
{
    const struct model *m = *state;
    const struct segment *s = seg(m, "torch_11_100");
    /* pid 10's fd record and its mapping-only record fold into one. */
    assert_int_equal(s->nholders, 1);
    assert_int_equal(s->holders[0].pid, 10);
    assert_int_equal(s->holders[0].fd, 5);
    assert_true(s->holders[0].mapped);
    s = seg(m, "torch_12_7_1");
    assert_int_equal(s->nholders, 2);
    assert_int_equal(s->size, 8 * MiB);
    assert_int_equal(s->alloc, 6 * MiB);
    s = seg(m, "torch_40_1");
    assert_false(s->alloc_known);
    assert_int_equal(s->alloc, 2 * MiB);
}

static void test_figures(void **state)
{
    const struct model *m = *state;
    const struct mount_figures *f = &m->mounts[0];
    uint64_t named = 4 * MiB + 2 * MiB + 1 * MiB + 0 + 4096 + 4096 + 1 * MiB + 1 * MiB;
    assert_int_equal(f->named, named);
    assert_int_equal(f->hidden, 6 * MiB + 2 * MiB);
    assert_int_equal(f->orphan, 2 * MiB + 4096);
    assert_int_equal(f->unattributed, 40 * MiB - named - 8 * MiB);
    assert_int_equal(f->pending, 2 * MiB);
    assert_int_equal(m->totals.hidden, 2);
    assert_int_equal(m->totals.orphans, 2);
    assert_int_equal(m->totals.orphan_bytes, 2 * MiB + 4096);
}

static const struct mproc *proc(const struct model *m, pid_t pid)
{
    const struct mproc *p = model_find_proc(m, pid);
    if (!p)
        fail_msg("pid %d is not in the model", (int)pid);
    return p;
}

static void test_roles(void **state)
{
    const struct model *m = *state;
    assert_null(model_find_proc(m, 5)); /* the launcher is not a main */
    assert_int_equal(proc(m, 10)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 11)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 12)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 13)->role, ROLE_SHM_MANAGER);
    assert_int_equal(proc(m, 20)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(proc(m, 30)->role, ROLE_ZOMBIE);
    assert_int_equal(proc(m, 40)->role, ROLE_HOLDER);
    assert_int_equal(m->totals.zombies, 1);
    assert_int_equal(m->totals.orphan_workers, 1);
    assert_int_equal(proc(m, 10)->nsegments, 2);
    assert_int_equal(proc(m, 10)->shm_bytes, 10 * MiB);
}

static void test_groups(void **state)
{
    const struct model *m = *state;
    assert_int_equal(m->ngroups, 1);
    const struct group *g = model_find_group(m, 10);
    assert_non_null(g);
    assert_int_equal(g->nworkers, 2);
    assert_int_equal(g->workers[0], 11);
    assert_int_equal(g->workers[1], 12);
    assert_int_equal(g->nmanagers, 1);
    assert_int_equal(g->managers[0], 13);
    /* torch_11_100, torch_12_7_1 and the unheld torch_12_2 (creator 12). */
    assert_int_equal(g->nsegments, 3);
    assert_int_equal(g->shm_bytes, 4 * MiB + 6 * MiB + 1 * MiB);
    assert_int_equal(seg(m, "torch_12_7_1")->group, 10);
    assert_int_equal(seg(m, "torch_999_1")->group, 0);
    assert_int_equal(proc(m, 13)->group, 10);
    assert_int_equal(proc(m, 20)->group, 0);
}

static void test_without_holder_scan_nothing_is_orphan(void **state)
{
    (void)state;
    struct scan *s = fake_scene();
    s->holders_scanned = false;
    struct model m;
    struct model_opts o;
    model_opts_default(&o);
    model_build(s, &o, &m);
    assert_int_equal(m.totals.orphans, 0);
    model_free(&m);
    scan_free(s);
    free(s);
}


/* torch < 2.5 names nothing: workers that hold no segment are known by
 * libtorch plus the signals torch's workers catch (SIGBUS, SIGSEGV, SIGFPE). */
#define WORKER_SIGS ((1ull << 6) | (1ull << 7) | (1ull << 10))
#define FAULTHANDLER_SIGS (WORKER_SIGS | (1ull << 3) | (1ull << 5))
#define PY "/usr/bin/python3.11"

static struct model *build(struct scan *s)
{
    procs_sort(&s->procs);
    struct model *m = calloc(1, sizeof(*m));
    struct model_opts o;
    model_opts_default(&o);
    model_build(s, &o, m);
    return m;
}

static void free_model(struct model *m)
{
    struct scan *s = (struct scan *)m->scan;
    model_free(m);
    scan_free(s);
    free(s);
    free(m);
}

#define JOBLIB "joblib_memmapping_folder_999_0123456789abcdef0123456789abcdef_" \
               "fedcba9876543210fedcba9876543210"

/* A joblib folder is one segment: its files' sizes summed, their holders
 * its own, an orphan only when nobody holds any of them and its creator is
 * dead; kinds without a creator pid are never orphans. */
/* A DataLoader's main 100 and its workers 101 and 102, their holders read. */
static struct scan *loader_scene(void)
{
    struct scan *s = fake_scene_empty();
    s->holders_scanned = true;
    fake_add_proc(s, 100, 1, 100, 'S', "python3", PY);
    fake_add_proc(s, 101, 100, 100, 'S', "pt_data_worker", PY);
    fake_add_proc(s, 102, 100, 100, 'S', "pt_data_worker", PY);
    return s;
}

/* A group's batch from its segments: 3 batches in flight of an image
 * (8 pages) and a label (1 page); one more label-sized segment of another
 * batch shape is counted in the bytes but not as a batch. */
static void test_loader_batch(void **state)
{
    (void)state;
    struct scan *s = loader_scene();
    char path[64];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "/dev/shm/torch_101_%d", 10 + i);
        fake_add_holder(s, 100, 20 + i, true, 500 + (ino_t)i, path, true, 8 * 4096 - 100, 8 * 4096);
        snprintf(path, sizeof(path), "/dev/shm/torch_101_%d", 20 + i);
        fake_add_holder(s, 100, 30 + i, true, 600 + (ino_t)i, path, true, 64, 4096);
    }
    struct model *m = build(s);
    const struct group *g = model_find_group(m, 100);
    assert_non_null(g);
    assert_int_equal(g->nworkers, 2);
    assert_int_equal(g->batches_in_flight, 3);
    assert_int_equal(g->batch_segment_bytes, 8 * 4096);
    assert_int_equal(g->batch_shm_bytes, 9 * 4096);
    assert_int_equal(g->batch_segments, 6); /* plan --observe's segments and shm_bytes */
    assert_int_equal(g->batch_segments_bytes, 27 * 4096);
    assert_int_equal(g->shm_per_worker, g->shm_bytes / 2);
    assert_int_equal(g->peak_shm, g->shm_bytes);
    assert_int_equal(loader_prefetch_of(g), 1); /* 3 in flight = 2 held + 2 x 0.5 */
    assert_int_equal(m->budget.loader_main, 100);
    assert_int_equal(m->budget.loader_batch, 9 * 4096);
    /* A stream remembers the peak: a later, emptier scan still shows it. */
    struct group_peaks peaks = {0};
    group_peaks_learn(&peaks, m);
    assert_int_equal(peaks.n, 1);
    assert_int_equal(peaks.items[0].peak_shm, g->shm_bytes);
    uint64_t was = g->shm_bytes;
    free_model(m);
    s = fake_scene_empty();
    s->holders_scanned = true;
    fake_add_proc(s, 100, 1, 100, 'S', "python3", PY);
    fake_add_proc(s, 101, 100, 100, 'S', "pt_data_worker", PY);
    fake_add_holder(s, 100, 20, true, 500, "/dev/shm/torch_101_10", true, 8 * 4096, 8 * 4096);
    procs_sort(&s->procs);
    m = calloc(1, sizeof(*m));
    struct model_opts o;
    model_opts_default(&o);
    o.peaks = &peaks;
    model_build(s, &o, m);
    g = model_find_group(m, 100);
    assert_non_null(g);
    assert_true(g->shm_bytes < was);
    assert_int_equal(g->peak_shm, was);
    free_model(m);
    group_peaks_free(&peaks);
}

/* A loop that keeps 4 batches, with 2 workers of prefetch factor 2: 8 in
 * flight, of which the main holds 4 (received: fd and mapping) and the
 * workers 4 (prefetched: their descriptors only). The holders tell the
 * factor, 2, where "all but 2 held by the main" would read 3; a main that
 * holds none reads 2 as well. A group that does not know its holders (as
 * loaded from a recording) keeps "all but 2". */
static void test_loader_prefetch_from_holders(void **state)
{
    (void)state;
    for (int main_holds = 4; main_holds >= 0; main_holds -= 4) {
        struct scan *s = loader_scene();
        char path[64];
        for (int i = 0; i < main_holds; i++) {
            pid_t worker = 101 + i % 2;
            snprintf(path, sizeof(path), "/dev/shm/torch_%d_%d", (int)worker, 10 + i);
            fake_add_holder(s, 100, 20 + i, true, 500 + (ino_t)i, path, true, 8 * 4096, 8 * 4096);
        }
        for (int i = 0; i < 4; i++) {
            pid_t worker = 101 + i % 2;
            snprintf(path, sizeof(path), "/dev/shm/torch_%d_%d", (int)worker, 30 + i);
            fake_add_holder(s, worker, 40 + i, false, 600 + (ino_t)i, path, true, 8 * 4096,
                            8 * 4096);
        }
        struct model *m = build(s);
        const struct group *g = model_find_group(m, 100);
        assert_non_null(g);
        assert_int_equal(g->nworkers, 2);
        assert_int_equal(g->batches_in_flight, (size_t)main_holds + 4);
        assert_int_equal(g->worker_prefetched, 2);
        assert_true(g->worker_prefetched_known);
        assert_int_equal(loader_prefetch_of(g), 2);
        assert_int_equal(m->budget.loader_batches, (uint64_t)main_holds + 4);
        assert_int_equal(m->budget.loader_prefetch, 2);
        free_model(m);
    }
    struct group loaded = {.main_pid = 100, .nworkers = 2, .batches_in_flight = 8};
    assert_int_equal(loader_prefetch_of(&loaded), 3); /* (8 - 2 + 1) / 2 */
}

static void test_workers_fit(void **state)
{
    (void)state;
    /* (64 MiB / 1 MiB - 2 held) / 2 = 31 workers at prefetch factor 2 */
    assert_int_equal(loader_workers_fit(64 * MiB, MiB, 2), 31);
    assert_int_equal(loader_workers_fit(64 * MiB, MiB, 4), 15);
    assert_int_equal(loader_workers_fit(3 * MiB, MiB, 2), 0);
    assert_int_equal(loader_workers_fit(64 * MiB, 0, 2), 0);
}

/* Each message of the guide's table is there once, with its limit; the
 * state picks those of the kinds on the mount for the limit reached first. */
static void test_errors_ahead(void **state)
{
    (void)state;
    const struct shm_error *all;
    size_t n = shm_errors_all(&all);
    assert_true(n >= 7);
    struct scan *s = fake_scene_empty();
    fake_add_file(s, "nccl-AbC123", 1, FT_REGULAR, MiB, MiB);
    struct model *m = build(s);
    const struct shm_error *e[8];
    enum shm_limit first;
    size_t k = shm_errors_ahead(m, 0, &first, e, 8);
    assert_int_equal(first, SHM_LIMIT_SHM_SIZE); /* no cgroup: /dev/shm fills first */
    assert_true(k >= 2);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(e[i]->kind, KIND_NCCL);
    assert_non_null(strstr(e[0]->message, "nccl-XXXXXX"));
    free_model(m);
}

/* A file inside a directory of the mount (other than a joblib folder) is
 * never an orphan, whatever its name says: the directory is someone's own,
 * and `clean` without --all-unheld must leave it alone. */
static void test_files_in_a_directory_are_never_orphans(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->holders_scanned = true;
    fake_add_file(s, "myapp", 100, FT_DIR, 0, 0);
    fake_add_file(s, "myapp/torch_999_0", 101, FT_REGULAR, MiB, MiB);
    fake_add_file(s, "myapp/cache", 102, FT_DIR, 0, 0);
    fake_add_file(s, "myapp/cache/__KMP_REGISTERED_LIB_999", 103, FT_REGULAR, 4096, 4096);
    fake_add_file(s, "torch_999_1", 104, FT_REGULAR, MiB, MiB);
    struct model *m = build(s);
    assert_int_equal(seg(m, "myapp/torch_999_0")->kind, KIND_TORCH);
    assert_int_equal(seg(m, "myapp/torch_999_0")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "myapp/cache/__KMP_REGISTERED_LIB_999")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "torch_999_1")->state, SEG_ORPHAN); /* the same creator, at the top */
    assert_int_equal(m->totals.orphans, 1);
    free_model(m);
}

static void test_joblib_folder_is_one_segment(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->holders_scanned = true;
    fake_add_file(s, JOBLIB, 100, FT_DIR, 0, 0);
    fake_add_file(s, JOBLIB "/999-1-a.pkl", 101, FT_REGULAR, 3 * MiB, 3 * MiB);
    fake_add_file(s, JOBLIB "/999-1-b.pkl", 102, FT_REGULAR, 1 * MiB, 1 * MiB);
    fake_add_file(s, "joblib_memmapping_folder_998_aa", 110, FT_DIR, 0, 0);
    fake_add_file(s, "joblib_memmapping_folder_998_aa/f", 111, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, 40, -1, true, 111, "/dev/shm/joblib_memmapping_folder_998_aa/f", false,
                    MiB, MiB);
    fake_add_file(s, "nccl-AbC123", 120, FT_REGULAR, MiB, MiB);
    fake_add_file(s, "psm_0123abcd", 121, FT_REGULAR, MiB, MiB);
    fake_add_proc(s, 40, 1, 40, 'S', "python3", "/usr/bin/python3");
    struct model *m = build(s);
    assert_int_equal(m->nsegs, 4);
    const struct segment *f = seg(m, JOBLIB);
    assert_int_equal(f->kind, KIND_JOBLIB);
    assert_int_equal(f->type, FT_DIR);
    assert_int_equal(f->size, 4 * MiB);
    assert_int_equal(f->alloc, 4 * MiB);
    assert_int_equal(f->state, SEG_ORPHAN);
    assert_int_equal(f->creator_pid, 999);
    f = seg(m, "joblib_memmapping_folder_998_aa");
    assert_int_equal(f->state, SEG_IN_USE);
    assert_int_equal(f->nholders, 1);
    assert_int_equal(f->holders[0].pid, 40);
    assert_int_equal(seg(m, "nccl-AbC123")->state, SEG_UNHELD);
    assert_int_equal(seg(m, "psm_0123abcd")->state, SEG_UNHELD);
    assert_int_equal(m->totals.orphans, 1);
    assert_int_equal(m->totals.orphan_bytes, 4 * MiB);
    free_model(m);
}

static void test_container_main_is_pid_1(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    /* The main is pid 1 in its container; two idle workers hold nothing. */
    fake_add_proc(s, 1, 0, 1, 'S', "python3", PY);
    fake_add_proc(s, 7, 1, 1, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_add_proc(s, 8, 1, 1, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_torch_loaded(s, 1);
    fake_torch_loaded(s, 7);
    fake_torch_loaded(s, 8);
    struct model *m = build(s);
    assert_int_equal(proc(m, 1)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 7)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 8)->role, ROLE_WORKER);
    const struct group *g = model_find_group(m, 1);
    assert_non_null(g);
    assert_int_equal(g->nworkers, 2);
    assert_int_equal(m->totals.orphan_workers, 0);
    free_model(m);
}

static void test_orphans_by_fingerprint(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd");
    /* A stuck worker whose main died, reparented to a subreaper shell whose
     * process group it shares (no job control): still an orphaned worker. */
    fake_add_proc(s, 50, 1, 50, 'S', "bash", "/usr/bin/bash");
    fake_add_proc(s, 60, 50, 50, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    /* A torch >= 2.5 worker reparented to init. */
    fake_add_proc(s, 70, 1, 69, 'S', "pt_data_worker", PY);
    /* Python with faulthandler, parent gone: not a worker. */
    fake_add_proc(s, 80, 1, 79, 'S', "python3", PY)->sigcatch = FAULTHANDLER_SIGS;
    /* The worker fingerprint without libtorch: not a worker either. */
    fake_add_proc(s, 90, 50, 50, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    /* A main holding a segment whose parent shell exited but whose process
     * group leader lives: a holder, not an orphaned worker. */
    fake_add_proc(s, 95, 1, 50, 'S', "python3", PY);
    fake_add_file(s, "torch_95_1", 1, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, 95, 3, true, 1, "/dev/shm/torch_95_1", false, MiB, MiB);
    fake_torch_loaded(s, 60);
    fake_torch_loaded(s, 70);
    fake_torch_loaded(s, 80);
    fake_torch_loaded(s, 95);
    struct model *m = build(s);
    assert_int_equal(proc(m, 60)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(proc(m, 70)->role, ROLE_ORPHAN_WORKER);
    assert_null(model_find_proc(m, 80));
    assert_null(model_find_proc(m, 90));
    assert_null(model_find_proc(m, 50));
    assert_null(model_find_proc(m, 1));
    assert_int_equal(proc(m, 95)->role, ROLE_HOLDER);
    assert_int_equal(m->totals.orphan_workers, 2);
    assert_int_equal(m->ngroups, 0);
    free_model(m);
}

static void test_other_mount_namespaces_are_not_ours(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->self_pid = 2;
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd")->mntns = 100;
    fake_add_proc(s, 2, 1, 2, 'S', "shmwatch", "/usr/bin/shmwatch")->mntns = 100;
    /* Another container (mount namespace 200): a DataLoader with an idle
     * worker, a manager, and an orphaned worker. None of it uses our mount. */
    fake_add_proc(s, 10, 1, 10, 'S', "python3", PY)->mntns = 200;
    fake_add_proc(s, 11, 10, 10, 'S', "python3", PY)->mntns = 200;
    s->procs.items[s->procs.n - 1].sigcatch = WORKER_SIGS;
    fake_add_proc(s, 12, 11, 12, 'S', "torch_shm_manag", "/x/torch_shm_manager")->mntns = 200;
    fake_add_proc(s, 13, 1, 9, 'S', "pt_data_worker", PY)->mntns = 200;
    /* Zombies have no namespaces left to read (mntns 0): each is of the
     * world of its parent, which has to reap it. Ours (parent 2) is ours;
     * the container's (parent 10) is not, nor is its dead worker, which
     * torch named (no orphan of ours by its name). */
    fake_add_proc(s, 20, 2, 2, 'Z', "sh", NULL);
    fake_add_proc(s, 21, 10, 10, 'Z', "python3", NULL);
    fake_add_proc(s, 22, 10, 10, 'Z', "pt_data_worker", NULL);
    fake_torch_loaded(s, 10);
    fake_torch_loaded(s, 11);
    struct model *m = build(s);
    assert_int_equal(m->nprocs, 1);
    assert_int_equal(proc(m, 20)->role, ROLE_ZOMBIE);
    assert_null(model_find_proc(m, 21));
    assert_null(model_find_proc(m, 22));
    assert_int_equal(m->totals.zombies, 1);
    assert_int_equal(m->ngroups, 0);
    free_model(m);

    /* Watched with --pid 10: that world is ours. */
    s = fake_scene_empty();
    s->self_pid = 2;
    s->target_pid = 10;
    fake_add_proc(s, 2, 1, 2, 'S', "shmwatch", "/usr/bin/shmwatch")->mntns = 100;
    fake_add_proc(s, 10, 1, 10, 'S', "python3", PY)->mntns = 200;
    fake_add_proc(s, 11, 10, 10, 'S', "python3", PY)->mntns = 200;
    s->procs.items[s->procs.n - 1].sigcatch = WORKER_SIGS;
    fake_add_proc(s, 20, 2, 2, 'Z', "sh", NULL);
    fake_add_proc(s, 21, 10, 10, 'Z', "python3", NULL);
    fake_torch_loaded(s, 11);
    m = build(s);
    assert_int_equal(proc(m, 11)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 10)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 21)->role, ROLE_ZOMBIE);
    assert_null(model_find_proc(m, 20));
    free_model(m);
}

/* A process caught as it dies has released its memory (no start_code) and
 * then its namespaces: like a zombie it is of its parent's world. Another
 * container's worker dying under its own init is no orphaned worker of
 * ours; ours, reparented to our init, is. One whose namespaces cannot be
 * read while it still has its memory (another user's, without root) is
 * taken for ours as before. */
static void test_dying_process_is_its_parents_worlds(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->self_pid = 2;
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd")->mntns = 100;
    fake_add_proc(s, 2, 1, 2, 'S', "shmwatch", "/usr/bin/shmwatch")->mntns = 100;
    struct proc *p = fake_add_proc(s, 14, 1, 14, 'S', "tini", "/tini");
    p->mntns = 200;
    p->start_code = 0x400000;
    fake_add_proc(s, 15, 14, 9, 'R', "pt_data_worker", NULL); /* the container's, dying */
    fake_add_proc(s, 16, 1, 8, 'R', "pt_data_worker", NULL);  /* ours, dying */
    fake_add_proc(s, 17, 1, 7, 'S', "pt_data_worker", NULL)->start_code = 1; /* unreadable */
    struct model *m = build(s);
    assert_null(model_find_proc(m, 15));
    assert_int_equal(proc(m, 16)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(proc(m, 17)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(m->totals.orphan_workers, 2);
    free_model(m);
}

/* Another user's job, seen without root: no exe can be read. A worker torch
 * named is still its parent's worker when its parent forked it (the same
 * process group); one reparented to init is an orphaned worker. */
static void test_named_workers_without_exe(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->holders_scanned = true;
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", NULL);
    fake_add_proc(s, 70, 1, 70, 'S', "python3", NULL);
    fake_add_proc(s, 71, 70, 70, 'S', "pt_data_worker", NULL);
    fake_add_proc(s, 81, 1, 80, 'S', "pt_data_worker", NULL); /* its main (80) is gone */
    struct model *m = build(s);
    assert_int_equal(proc(m, 71)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 70)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 81)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(m->totals.orphan_workers, 1);
    free_model(m);
}

/* A job started by a program of the same name in a session of its own (a
 * Jupyter kernel under its server): between epochs the kernel has no
 * workers, only the shm manager its last ones started. It is the server's
 * child, not its worker. In the server's own process group it would be. */
static void test_own_group_is_not_a_worker(void **state)
{
    (void)state;
    for (int same_group = 0; same_group < 2; same_group++) {
        struct scan *s = fake_scene_empty();
        s->holders_scanned = true;
        fake_add_proc(s, 50, 1, 50, 'S', "python3", PY);
        fake_add_proc(s, 60, 50, same_group ? 50 : 60, 'S', "python3", PY);
        fake_add_proc(s, 61, 60, same_group ? 50 : 60, 'S', "torch_shm_manag",
                      "/x/torch_shm_manager");
        struct model *m = build(s);
        if (same_group) {
            assert_int_equal(proc(m, 60)->role, ROLE_WORKER);
            assert_int_equal(proc(m, 50)->role, ROLE_MAIN);
        } else {
            assert_null(model_find_group(m, 50));
            assert_true(!model_find_proc(m, 60) || proc(m, 60)->role != ROLE_WORKER);
            assert_true(!model_find_proc(m, 50) || proc(m, 50)->role != ROLE_MAIN);
        }
        free_model(m);
    }
}

/* PyTorch 2.x as the NAME-2.x integration tests run it, in a chroot: the
 * workers are named pt_data_worker, the segment names carry three fields,
 * and the holders' paths carry the root the job runs under. */
static void test_torch2_in_a_chroot(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    const char *py = "/var/cache/t/usr/bin/python3.13";
    fake_add_proc(s, 100, 1, 100, 'S', "python3", py);
    fake_add_proc(s, 101, 100, 100, 'S', "pt_data_worker", py);
    fake_add_proc(s, 102, 100, 100, 'S', "pt_data_worker", py); /* idle: named, nothing else */
    fake_add_holder(s, 100, 7, true, 5, "/var/cache/t/dev/shm/torch_101_2457419449_3", true,
                    MiB, MiB);
    fake_add_holder(s, 101, 9, false, 6, "/var/cache/t/dev/shm/torch_101_995_4", true, MiB,
                    MiB);
    struct model *m = build(s);
    assert_int_equal(proc(m, 100)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 101)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 102)->role, ROLE_WORKER);
    const struct group *g = model_find_group(m, 100);
    assert_non_null(g);
    assert_int_equal(g->nworkers, 2);
    const struct segment *a = seg(m, "torch_101_2457419449_3");
    const struct segment *b = seg(m, "torch_101_995_4");
    assert_int_equal(a->state, SEG_HIDDEN);
    assert_int_equal(b->state, SEG_HIDDEN);
    assert_int_equal(a->kind, KIND_TORCH);
    assert_int_equal(a->creator_pid, 101);
    assert_true(a->creator_alive);
    assert_int_equal(a->group, 100);
    assert_int_equal(b->group, 100);
    assert_int_equal(g->nsegments, 2);
    assert_int_equal(m->totals.orphan_workers, 0);
    free_model(m);
}

/* torchrun's elastic agent (named pt_elastic by torch 2.x) runs the ranks
 * with the same interpreter: a rank holding segments is not its worker, and
 * the agent is no DataLoader main; a rank's own workers are. */
static void test_torchrun_agent_is_no_main(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 200, 1, 200, 'S', "pt_elastic", PY);
    fake_add_proc(s, 201, 200, 200, 'S', "python3", PY);
    fake_add_proc(s, 202, 200, 200, 'S', "python3", PY);
    fake_add_proc(s, 203, 202, 200, 'S', "pt_data_worker", PY);
    fake_add_file(s, "torch_201_5_0", 1, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, 201, 3, true, 1, "/dev/shm/torch_201_5_0", false, MiB, MiB);
    struct model *m = build(s);
    assert_null(model_find_proc(m, 200));
    assert_int_equal(proc(m, 201)->role, ROLE_HOLDER);
    assert_int_equal(proc(m, 202)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 203)->role, ROLE_WORKER);
    assert_int_equal(m->ngroups, 1);
    assert_non_null(model_find_group(m, 202));
    assert_int_equal(seg(m, "torch_201_5_0")->group, 0);
    free_model(m);
}

/* Python's multiprocessing as it starts its helpers (the forkserver's
 * workers keep its command line) and spawned workers. */
#define FORKSERVER                                                                            \
    PY " -B -c from multiprocessing.forkserver import main; main(8, 9, ['__main__'], "         \
       "**{'sys_path': ['/srv/job']})"
#define TRACKER PY " -B -c from multiprocessing.resource_tracker import main;main(5)"
#define SPAWNED                                                                               \
    PY " -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, "           \
       "pipe_handle=7) --multiprocessing-fork"

static struct proc *add_cmd(struct scan *s, pid_t pid, pid_t ppid, pid_t pgid, const char *comm,
                            const char *exe, const char *cmdline)
{
    struct proc *p = fake_add_proc(s, pid, ppid, pgid, 'S', comm, exe);
    free(p->cmdline);
    p->cmdline = xstrdup(cmdline);
    return p;
}

/* A worker's batch: made by the worker, received (held) by the main. */
static void add_batch(struct scan *s, pid_t worker, pid_t holder, ino_t ino)
{
    char name[64], path[80];
    snprintf(name, sizeof(name), "torch_%d_%lu", (int)worker, (unsigned long)ino);
    snprintf(path, sizeof(path), "/dev/shm/%s", name);
    fake_add_file(s, name, ino, FT_REGULAR, MiB, MiB);
    fake_add_holder(s, holder, (int)ino + 10, true, ino, path, false, MiB, MiB);
}

/* multiprocessing_context='forkserver': the training process (6) starts a
 * resource tracker (40) and the forkserver (41), which forks the workers
 * (44, 45; 45 idle). The forkserver is passed through: the training process
 * is the main, the workers and the batches are its group's; the forkserver
 * and the tracker have no role, or hold. So with workers torch >= 2.5
 * names, even with no exe shown (another user's, without root): named and
 * in the forkserver's process group (300). Beside them, the same job forked
 * (100) and spawned (200) still shows as it does. */
static void test_forkserver_is_passed_through(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd");
    fake_add_proc(s, 5, 1, 5, 'S', "bash", "/usr/bin/bash");
    add_cmd(s, 6, 5, 6, "python3", PY, PY " train.py");
    add_cmd(s, 40, 6, 6, "python3", PY, TRACKER);
    add_cmd(s, 41, 6, 6, "python3", PY, FORKSERVER)->sigcatch = TORCHPRINT_SIG(SIGCHLD);
    add_cmd(s, 44, 41, 6, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    add_cmd(s, 45, 41, 6, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    add_cmd(s, 100, 5, 100, "python3", PY, PY " train.py");
    add_cmd(s, 101, 100, 100, "python3", PY, PY " train.py")->sigcatch = WORKER_SIGS;
    add_cmd(s, 200, 5, 200, "python3", PY, PY " train.py");
    add_cmd(s, 201, 200, 200, "python3", PY, TRACKER);
    add_cmd(s, 202, 200, 200, "python3", PY, SPAWNED)->sigcatch = WORKER_SIGS;
    add_cmd(s, 300, 5, 300, "python3", NULL, PY " train.py");
    add_cmd(s, 341, 300, 300, "python3", NULL, FORKSERVER);
    add_cmd(s, 344, 341, 300, "pt_data_worker", NULL, FORKSERVER);
    add_cmd(s, 345, 341, 300, "pt_data_worker", PY, FORKSERVER);
    const pid_t torch[] = {6, 41, 44, 45, 100, 101, 200, 202};
    for (size_t i = 0; i < sizeof(torch) / sizeof(torch[0]); i++)
        fake_torch_loaded(s, torch[i]); /* the forkserver preloads __main__ */
    add_batch(s, 44, 6, 1);
    add_batch(s, 44, 44, 2);
    add_batch(s, 101, 100, 3);
    add_batch(s, 202, 200, 4);
    /* A segment the forkserver holds makes it a holder, of no group. */
    fake_add_file(s, "sem.mp-fs", 5, FT_REGULAR, 32, 4096);
    fake_add_holder(s, 41, 20, true, 5, "/dev/shm/sem.mp-fs", false, 32, 4096);
    struct model *m = build(s);
    assert_int_equal(m->totals.orphan_workers, 0);
    assert_int_equal(proc(m, 6)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 6)->group, 6);
    assert_int_equal(proc(m, 41)->role, ROLE_HOLDER);
    assert_int_equal(proc(m, 41)->group, 0);
    assert_null(model_find_proc(m, 40));
    for (pid_t w = 44; w <= 45; w++) {
        assert_int_equal(proc(m, w)->role, ROLE_WORKER);
        assert_int_equal(proc(m, w)->group, 6);
    }
    const struct group *g = model_find_group(m, 6);
    assert_true(g && g->nworkers == 2 && g->workers[0] == 44 && g->workers[1] == 45);
    assert_int_equal(g->nsegments, 2);
    assert_null(model_find_group(m, 41));
    assert_int_equal(seg(m, "torch_44_1")->group, 6);
    assert_int_equal(seg(m, "torch_44_2")->group, 6);
    assert_int_equal(seg(m, "sem.mp-fs")->group, 0);
    /* Forked and spawned: the parent is the main. */
    assert_int_equal(proc(m, 100)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 101)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 101)->group, 100);
    assert_int_equal(seg(m, "torch_101_3")->group, 100);
    assert_int_equal(proc(m, 200)->role, ROLE_MAIN);
    assert_int_equal(proc(m, 202)->role, ROLE_WORKER);
    assert_int_equal(proc(m, 202)->group, 200);
    assert_null(model_find_proc(m, 201));
    assert_int_equal(seg(m, "torch_202_4")->group, 200);
    assert_int_equal(proc(m, 300)->role, ROLE_MAIN);
    assert_null(model_find_proc(m, 341));
    for (pid_t w = 344; w <= 345; w++) {
        assert_int_equal(proc(m, w)->role, ROLE_WORKER);
        assert_int_equal(proc(m, w)->group, 300);
    }
    assert_int_equal(m->ngroups, 4);
    free_model(m);
}

/* When the main dies the forkserver lives on while its workers do (they
 * hold its pipe), reparented to init: a session not its own. Its workers
 * are orphaned workers, and so are workers reparented once the forkserver
 * has exited, though they keep its command line. A forkserver whose parent
 * runs another program in its own session (Python embedded in another
 * executable, or a subreaper of the main's session) stands as any process:
 * its workers are its own, never orphans; so is one whose command line was
 * not read: its workers, which show theirs, are its own. */
static void test_forkserver_orphans(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    /* Main 6 and forkserver 41 are gone: init took the workers in. */
    add_cmd(s, 44, 1, 6, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    add_cmd(s, 45, 1, 6, "pt_data_worker", PY, FORKSERVER);
    fake_add_proc(s, 1, 0, 1, 'S', "systemd", "/usr/lib/systemd/systemd");
    /* Main 60 is gone, forkserver 61 lives on with its workers 62, 63. */
    add_cmd(s, 61, 1, 60, "python3", PY, FORKSERVER);
    add_cmd(s, 62, 61, 60, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    add_cmd(s, 63, 61, 60, "pt_data_worker", PY, FORKSERVER);
    /* Main 65 is gone; forkserver 66 was taken in by a subreaper of its
     * session. */
    add_cmd(s, 64, 1, 64, "tini", "/usr/bin/tini", "/usr/bin/tini -s -- python3 train.py");
    add_cmd(s, 66, 64, 64, "python3", PY, FORKSERVER);
    add_cmd(s, 67, 66, 64, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    /* An embedded interpreter's forkserver. */
    add_cmd(s, 70, 1, 70, "uwsgi", "/usr/bin/uwsgi", "uwsgi --ini job.ini");
    add_cmd(s, 71, 70, 70, "python3", PY, FORKSERVER);
    add_cmd(s, 72, 71, 70, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    /* A forkserver whose command line is unknown. */
    add_cmd(s, 80, 1, 80, "python3", PY, PY " train.py");
    struct proc *unread = add_cmd(s, 81, 80, 80, "python3", PY, "");
    free(unread->cmdline);
    unread->cmdline = NULL;
    add_cmd(s, 82, 81, 80, "python3", PY, FORKSERVER)->sigcatch = WORKER_SIGS;
    const pid_t torch[] = {44, 61, 62, 66, 67, 70, 71, 72, 80, 81, 82};
    for (size_t i = 0; i < sizeof(torch) / sizeof(torch[0]); i++)
        fake_torch_loaded(s, torch[i]);
    add_batch(s, 44, 44, 1);
    struct model *m = build(s);
    const struct {
        pid_t pid;
        unsigned proof;
    } orphans[] = {{44, ORPHAN_BY_SIGNALS}, {45, ORPHAN_BY_NAME},
                   {62, ORPHAN_BY_SIGNALS}, {63, ORPHAN_BY_NAME}};
    for (size_t i = 0; i < sizeof(orphans) / sizeof(orphans[0]); i++) {
        assert_int_equal(proc(m, orphans[i].pid)->role, ROLE_ORPHAN_WORKER);
        assert_int_equal(proc(m, orphans[i].pid)->orphan_proof, orphans[i].proof);
    }
    assert_int_equal(seg(m, "torch_44_1")->group, 0);
    assert_null(model_find_proc(m, 61));
    assert_null(model_find_group(m, 61));
    /* The forkservers that stand as any process: their workers' main. */
    const pid_t own[][3] = {{64, 66, 67}, {70, 71, 72}, {80, 81, 82}}; /* parent, it, worker */
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        assert_null(model_find_proc(m, own[i][0]));
        assert_int_equal(proc(m, own[i][1])->role, ROLE_MAIN);
        assert_int_equal(proc(m, own[i][2])->role, ROLE_WORKER);
        assert_int_equal(proc(m, own[i][2])->group, own[i][1]);
    }
    assert_null(model_find_proc(m, 1));
    assert_int_equal(m->totals.orphan_workers, 4);
    assert_int_equal(m->ngroups, 3);
    free_model(m);
}

static void test_zombie_is_never_a_main(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    /* A main just SIGKILLed: a zombie whose workers still name it parent. */
    fake_add_proc(s, 10, 1, 10, 'Z', "python3", NULL);
    fake_add_proc(s, 11, 10, 10, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_torch_loaded(s, 11);
    struct model *m = build(s);
    assert_int_equal(proc(m, 10)->role, ROLE_ZOMBIE);
    assert_int_equal(proc(m, 11)->role, ROLE_ORPHAN_WORKER);
    assert_int_equal(m->ngroups, 0);
    free_model(m);
}

static void test_remembered_workers_keep_their_orphans(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 10, 1, 10, 'S', "python3", PY);
    fake_add_proc(s, 11, 10, 10, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_torch_loaded(s, 11);
    /* Worker 12 of main 10 crashed and left a file; worker 13 served a main
     * (99) that is gone too. */
    fake_add_file(s, "torch_12_1", 1, FT_REGULAR, MiB, MiB);
    fake_add_file(s, "torch_13_1", 2, FT_REGULAR, MiB, MiB);
    struct worker_memory mem = {0};
    struct worker_seen seen[] = {{12, 10}, {13, 99}};
    mem.items = seen;
    mem.n = 2;
    procs_sort(&s->procs);
    struct model *m = calloc(1, sizeof(*m));
    struct model_opts o;
    model_opts_default(&o);
    o.memory = &mem;
    model_build(s, &o, m);
    const struct segment *a = seg(m, "torch_12_1"), *b = seg(m, "torch_13_1");
    assert_int_equal(a->state, SEG_ORPHAN);
    assert_int_equal(a->group, 10);
    assert_int_equal(b->state, SEG_ORPHAN);
    assert_int_equal(b->group, 0);
    assert_int_equal(model_find_group(m, 10)->nsegments, 1);

    /* Learning from this model adds worker 11 of main 10. */
    struct worker_memory learned = {0};
    worker_memory_learn(&learned, m);
    assert_int_equal(learned.n, 1);
    assert_int_equal(learned.items[0].worker, 11);
    assert_int_equal(learned.items[0].main, 10);
    free_model(m);

    /* A later scan where pid 11 is a worker of main 20 replaces the entry. */
    s = fake_scene_empty();
    fake_add_proc(s, 5, 1, 5, 'S', "python3", PY);
    fake_add_proc(s, 7, 5, 5, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_add_proc(s, 20, 1, 20, 'S', "python3", PY);
    fake_add_proc(s, 11, 20, 20, 'S', "python3", PY)->sigcatch = WORKER_SIGS;
    fake_torch_loaded(s, 7);
    fake_torch_loaded(s, 11);
    m = build(s);
    worker_memory_learn(&learned, m);
    assert_int_equal(learned.n, 2);
    assert_int_equal(learned.items[0].worker, 7);
    assert_int_equal(learned.items[0].main, 5);
    assert_int_equal(learned.items[1].worker, 11);
    assert_int_equal(learned.items[1].main, 20);
    worker_memory_free(&learned);
    free_model(m);
}

static void test_kernel_thread_is_no_creator(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    fake_add_proc(s, 4, 2, 0, 'I', "kworker/0:0", NULL)->kernel_thread = true;
    fake_add_file(s, "torch_4_0", 1, FT_REGULAR, MiB, MiB);
    struct model *m = build(s);
    assert_false(m->segs[0].creator_alive);
    assert_int_equal(m->segs[0].state, SEG_ORPHAN);
    free_model(m);
}

/* A mount whose statfs failed has no figures: the budget must not read its
 * zeros as "full" (a segment still to be written would then look like a
 * coming SIGBUS and make the verdict critical). */
static void test_unreadable_mount_is_no_full_mount(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    s->mounts.items[0].used = s->mounts.items[0].size;
    s->mounts.items[0].avail = 0;
    fake_add_file(s, "half_written", 1, FT_REGULAR, 4 * MiB, MiB); /* 3 MiB pending */
    fake_add_proc(s, 100, 1, 100, 'S', "writer", NULL);
    fake_add_holder(s, 100, 5, true, 1, "/dev/shm/half_written", false, 4 * MiB, MiB);
    struct model *m = build(s);
    assert_int_equal(m->budget.verdict, VERDICT_CRITICAL); /* known full: critical */
    free_model(m);

    s = fake_scene_empty();
    s->mounts.items[0].stat_ok = false;
    s->mounts.items[0].size = s->mounts.items[0].used = s->mounts.items[0].avail = 0;
    fake_add_file(s, "half_written", 1, FT_REGULAR, 4 * MiB, MiB);
    fake_add_proc(s, 100, 1, 100, 'S', "writer", NULL);
    fake_add_holder(s, 100, 5, true, 1, "/dev/shm/half_written", false, 4 * MiB, MiB);
    m = build(s);
    assert_int_not_equal(m->budget.verdict, VERDICT_CRITICAL);
    assert_int_equal(m->budget.shm_size, 0);
    free_model(m);
}

/* --all with two containers, each its own mount, cgroup and DataLoader: the
 * host's /dev/shm (0:45, no group), container 0's 128 MiB mount (0:46,
 * limit 1 GiB; main 100, workers 101 and 102, three batches of 8 pages) and
 * container 1's 32 MiB mount (0:47, limit 512 MiB; main 200, worker 201,
 * two batches of 4 pages). */
static void ctr_batches(struct scan *s, pid_t main, pid_t worker, unsigned minor, int n,
                        uint64_t pages, ino_t ino)
{
    char path[64];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/dev/shm/torch_%d_%d", (int)worker, 10 + i);
        fake_add_holder(s, main, 20 + i, true, ino + (ino_t)i, path, true, pages * 4096,
                        pages * 4096);
        s->holders.items[s->holders.n - 1].dev = makedev(0, minor);
    }
}

static struct scan *two_ctr_scene(void)
{
    struct scan *s = fake_scene_empty();
    fake_add_mount(s, 46, 128 * MiB, 100 * MiB);
    fake_add_mount(s, 47, 32 * MiB, 10 * MiB);
    fake_add_proc(s, 100, 1, 100, 'S', "python3", PY);
    fake_add_proc(s, 101, 100, 100, 'S', "pt_data_worker", PY);
    fake_add_proc(s, 102, 100, 100, 'S', "pt_data_worker", PY);
    fake_add_proc(s, 200, 1, 200, 'S', "python3", PY);
    fake_add_proc(s, 201, 200, 200, 'S', "pt_data_worker", PY);
    ctr_batches(s, 100, 101, 46, 3, 8, 500);
    ctr_batches(s, 200, 201, 47, 2, 4, 600);
    procs_sort(&s->procs);
    struct scan_node *n = &s->node;
    n->nctrs = n->ctrs_cap = 2;
    n->ctrs = xcalloc(2, sizeof(*n->ctrs));
    n->ctrs[0].info.runtime = n->ctrs[1].info.runtime = RUNTIME_DOCKER;
    n->ctrs[0].info.id = xstrdup("aaaa");
    n->ctrs[1].info.id = xstrdup("bbbb");
    n->ctrs[0].pid = 100;
    n->ctrs[1].pid = 200;
    fake_cgroup(&n->ctrs[0].cgroup, "/docker/aaaa", 1024 * MiB, 20 * MiB);
    fake_cgroup(&n->ctrs[1].cgroup, "/docker/bbbb", 512 * MiB, 20 * MiB);
    node_single(n, &s->mounts);
    n->all = true;
    for (size_t i = 1; i <= 2; i++) {
        n->mounts[i].host_sees = false;
        n->mounts[i].owner = i - 1;
        n->mounts[i].ctrs = xcalloc(1, sizeof(size_t));
        n->mounts[i].ctrs[0] = i - 1;
        n->mounts[i].nctrs = 1;
    }
    n->nprocs = s->procs.n;
    n->proc_ctr = xcalloc(s->procs.n, sizeof(size_t));
    for (size_t i = 0; i < s->procs.n; i++) {
        pid_t pid = s->procs.items[i].pid;
        n->proc_ctr[i] = pid >= 200 ? 1 : pid >= 100 ? 0 : NODE_HOST;
    }
    return s;
}

/* The model of two_ctr_scene with the default options; two_ctr_free
 * frees both. */
static struct model *two_ctr_model(struct scan *s)
{
    struct model *m = calloc(1, sizeof(*m));
    struct model_opts o;
    model_opts_default(&o);
    model_build(s, &o, m);
    return m;
}

static void two_ctr_free(struct scan *s, struct model *m)
{
    model_free(m);
    free(m);
    scan_free(s);
    free(s);
}

/* Each container's budget names its own loader, measured against its own
 * mount and limit; the host's mount, with no group of its own, none. */
static void test_loader_per_container(void **state)
{
    (void)state;
    struct scan *s = two_ctr_scene();
    struct model *m = two_ctr_model(s);
    assert_int_equal(m->nmount_budgets, 3);
    const struct group *a = model_find_group(m, 100), *b = model_find_group(m, 200);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->ctr, 0);
    assert_int_equal(b->ctr, 1);
    assert_int_equal(m->mount_budgets[0].loader_main, 0);
    const struct budget *ba = model_mount_budget(m, 1), *bb = model_mount_budget(m, 2);
    assert_int_equal(ba->loader_main, 100);
    assert_int_equal(ba->loader_batch, 8 * 4096);
    assert_int_equal(ba->loader_batches, 3);
    assert_int_equal(ba->loader_workers, 2);
    assert_int_equal(bb->loader_main, 200);
    assert_int_equal(bb->loader_batch, 4 * 4096);
    assert_int_equal(bb->loader_batches, 2);
    assert_int_equal(bb->loader_workers, 1);
    /* Each against its own mount and limit: B's room is its 32 MiB less
     * the 10 MiB used minus its own 8 pages. */
    uint64_t room_b = 32 * MiB - (10 * MiB - b->shm_bytes);
    assert_int_equal(bb->fit_workers_shm,
                     loader_workers_fit(room_b, 4 * 4096, bb->loader_prefetch));
    assert_int_equal(bb->limit, 512 * MiB);
    assert_true(bb->fit_workers_limit != UINT64_MAX);
    assert_int_equal(ba->limit, 1024 * MiB);
    assert_true(ba->fit_workers_shm != bb->fit_workers_shm);
    two_ctr_free(s, m);
}

/* The text report's BUDGET of each container says its own DataLoader's
 * batch and how many workers fit in its own mount and limit; the host's
 * budget, with no DataLoader on its mount, has no loader line. */
static void test_text_loader_per_container(void **state)
{
    (void)state;
    struct scan *s = two_ctr_scene();
    struct model *m = two_ctr_model(s);
    struct buf out;
    buf_init(&out);
    report_text(&out, m, true);
    const char *t = out.data;
    const char *host = strstr(t, "BUDGET of /dev/shm\n");
    const char *ba = strstr(t, "BUDGET of /dev/shm, cgroup /docker/aaaa\n");
    const char *bb = strstr(t, "BUDGET of /dev/shm, cgroup /docker/bbbb\n");
    if (!host || !ba || !bb)
        fail_msg("BUDGET blocks missing in %s", t);
    assert_true(host < ba && ba < bb);
    const char *la = strstr(t, "  loader: main 100, one batch 32.0 KiB in shm, "
                               "3 batches in flight with 2 workers");
    const char *lb = strstr(t, "  loader: main 200, one batch 16.0 KiB in shm, "
                               "2 batches in flight with 1 worker (prefetch");
    if (!la || !lb)
        fail_msg("loader lines missing in %s", t);
    assert_true(ba < la && la < bb && bb < lb);
    assert_ptr_equal(strstr(t, "  loader:"), la); /* none in the host's block */
    char want[160];
    const struct budget *b = model_mount_budget(m, 2);
    snprintf(want, sizeof(want),
             "  workers that fit at that factor: %llu in this mount (32.0 MiB), %llu under the "
             "memory limit (512 MiB)\n",
             (unsigned long long)b->fit_workers_shm, (unsigned long long)b->fit_workers_limit);
    const char *fb = strstr(t, want);
    if (!fb)
        { fputs(t, stderr); fail_msg("no \"%s\" in the report above", want); }
    assert_true(lb < fb);
    buf_free(&out);
    two_ctr_free(s, m);
}

/* The OOM kills and peaks of each mount's owner, scan to scan: a rise in
 * container 1's cgroup makes its budget critical and no other; container
 * 0's mount keeps its own peak; a container gone is forgotten. */
static void test_mount_memory_per_container(void **state)
{
    (void)state;
    struct scan *s = two_ctr_scene();
    struct mount_memory mm = {0};
    struct model_opts o;
    model_opts_default(&o);
    o.mount_memory = &mm;
    struct model m;
    mount_memory_observe(&mm, s, 100.0); /* the baseline: no kill is new */
    model_build(s, &o, &m);
    mount_memory_learn(&mm, &m);
    assert_int_equal(mm.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(m.mount_budgets[i].oom_recent, 0);
        assert_true(m.mount_budgets[i].verdict != VERDICT_CRITICAL);
    }
    model_free(&m);
    char key[96];
    assert_string_equal(mount_memory_key(s, 2, key, sizeof(key)), "bbbb 0:47");
    assert_string_equal(mount_memory_key(s, 0, key, sizeof(key)), "0:45");

    /* Container 1's cgroup: two more kills; container 0's mount emptier. */
    s->node.ctrs[1].cgroup.oom_kills = 5;
    s->mounts.items[1].used = 50 * MiB;
    s->mounts.items[1].avail = 78 * MiB;
    mount_memory_observe(&mm, s, 101.0);
    model_build(s, &o, &m);
    mount_memory_learn(&mm, &m);
    assert_int_equal(m.mount_budgets[2].oom_recent, 2);
    assert_int_equal(m.mount_budgets[2].verdict, VERDICT_CRITICAL);
    assert_int_equal(m.mount_budgets[1].oom_recent, 0);
    assert_true(m.mount_budgets[1].verdict != VERDICT_CRITICAL);
    assert_int_equal(m.mount_budgets[0].oom_recent, 0);
    assert_int_equal(m.budget.oom_recent, 0); /* the host's own: no kill */
    assert_int_equal(m.mount_budgets[1].peak_shm, 100 * MiB); /* remembered */
    assert_int_equal(m.mount_budgets[2].peak_shm, 10 * MiB);
    model_free(&m);

    /* Long after: no longer new. */
    mount_memory_observe(&mm, s, 101.0 + OOM_RECENT_S + 1);
    model_build(s, &o, &m);
    assert_int_equal(m.mount_budgets[2].oom_recent, 0);
    model_free(&m);

    /* Container 1 gone (its mount no longer in the scan): forgotten. */
    s->mounts.n = 2;
    s->node.nmounts = 2;
    mount_memory_observe(&mm, s, 200.0);
    assert_int_equal(mm.n, 2);
    assert_null(mount_memory_find(&mm, "bbbb 0:47"));
    assert_non_null(mount_memory_find(&mm, "aaaa 0:46"));
    s->mounts.n = 3;
    s->node.nmounts = 3;
    mount_memory_free(&mm);
    scan_free(s);
    free(s);
}

/* A container no runtime names is remembered by its mount namespace with
 * the device: when it exits and a new namespace is given its freed device
 * number, the newcomer starts with a history of its own. */
static void test_mount_memory_unnamed_reuse(void **state)
{
    (void)state;
    struct scan *s = two_ctr_scene();
    struct node_ctr *c = &s->node.ctrs[1];
    free(c->info.id);
    c->info.id = NULL;
    c->info.runtime = RUNTIME_NONE;
    c->mntns = 4026532001;
    char key[96], old[96];
    assert_string_equal(mount_memory_key(s, 2, old, sizeof(old)), "mntns 4026532001 0:47");
    struct mount_memory mm = {0};
    mount_memory_observe(&mm, s, 100.0);
    const struct mount_mem *e = mount_memory_find(&mm, old);
    assert_non_null(e);
    assert_int_equal(e->peak_shm, 10 * MiB);

    c->mntns = 4026532002; /* another namespace, the same device number */
    s->mounts.items[2].used = MiB;
    mount_memory_observe(&mm, s, 102.0);
    assert_null(mount_memory_find(&mm, old));
    e = mount_memory_find(&mm, mount_memory_key(s, 2, key, sizeof(key)));
    assert_non_null(e);
    assert_int_equal(e->peak_shm, MiB); /* its own peak, not the one before */
    mount_memory_free(&mm);
    scan_free(s);
    free(s);
}

/* A tmpfs page is charged to the cgroup that first wrote it, whichever
 * mount it is on: container 0 of a --all scan with two shm mounts of its
 * own, /dev/shm (0:46, 128 MiB, 100 MiB used) and a --tmpfs /run/shm (0:47,
 * 512 MiB, 200 MiB used), under a 360 MiB limit with 20 MiB of app. Each
 * mount's budget counts both: 360 - 20 - 100 - 200 = 40 MiB of headroom,
 * while shm_used stays the mount's own; the host's /dev/shm (0:45), of
 * another cgroup, counts neither. */
static struct scan *two_mount_scene(void)
{
    struct scan *s = fake_scene_empty();
    fake_add_mount(s, 46, 128 * MiB, 100 * MiB);
    struct shm_mount *run = fake_add_mount(s, 47, 512 * MiB, 200 * MiB);
    free(run->path);
    run->path = xstrdup("/run/shm");
    struct scan_node *n = &s->node;
    n->nctrs = n->ctrs_cap = 1;
    n->ctrs = xcalloc(1, sizeof(*n->ctrs));
    n->ctrs[0].info.runtime = RUNTIME_DOCKER;
    n->ctrs[0].info.id = xstrdup("aaaa");
    n->ctrs[0].pid = 100;
    fake_cgroup(&n->ctrs[0].cgroup, "/docker/aaaa", 360 * MiB, 20 * MiB);
    node_single(n, &s->mounts);
    n->all = true;
    for (size_t i = 1; i <= 2; i++) {
        n->mounts[i].host_sees = false;
        n->mounts[i].owner = 0;
        n->mounts[i].ctrs = xcalloc(1, sizeof(size_t));
        n->mounts[i].nctrs = 1;
    }
    return s;
}

static void assert_advice(const struct budget *b, const char *want)
{
    for (size_t i = 0; i < b->nadvice; i++)
        if (strstr(b->advice[i], want))
            return;
    for (size_t i = 0; i < b->nadvice; i++)
        fprintf(stderr, "# advice: %s\n", b->advice[i]);
    fail_msg("no advice with \"%s\"", want);
}

static void test_budget_counts_the_cgroups_other_mounts(void **state)
{
    (void)state;
    struct scan *s = two_mount_scene();
    struct model *m = two_ctr_model(s);
    const struct budget *host = model_mount_budget(m, 0), *dev = model_mount_budget(m, 1),
                        *run = model_mount_budget(m, 2);
    assert_int_equal(dev->shm_used, 100 * MiB); /* each its own mount's */
    assert_int_equal(run->shm_used, 200 * MiB);
    assert_int_equal(dev->shm_other, 200 * MiB);
    assert_int_equal(run->shm_other, 100 * MiB);
    assert_int_equal(dev->headroom, 40 * MiB);
    assert_int_equal(run->headroom, 40 * MiB);
    assert_int_equal(dev->shm_effective, 28 * MiB); /* /dev/shm's 28 MiB free come first */
    assert_int_equal(run->shm_effective, 40 * MiB); /* not its 312 MiB free, nor 140 */
    size_t n, first;
    assert_int_equal(model_budget_other_shm(m, run, &n, &first), 100 * MiB);
    assert_int_equal(n, 1);
    assert_int_equal(first, 1);
    assert_int_equal(host->shm_other, 0);
    assert_int_equal(model_budget_other_shm(m, host, &n, &first), 0);
    assert_int_equal(n, 0);
    assert_int_equal(host->headroom, 8192 * MiB - 40 * MiB);
    /* The sentences name the other mount's bytes, and their figures add up. */
    assert_advice(run, "The application, /run/shm and /dev/shm, the shm mounts of one cgroup, "
                       "together use 88.9% of the memory limit (20.0 MiB + 200 MiB + 100 MiB of "
                       "360 MiB; warning at 80%).");
    assert_advice(run, "/run/shm (512 MiB) is larger than the memory left for it under the memory "
                       "limit (360 MiB - 20.0 MiB of app - 100 MiB on /dev/shm, charged to the "
                       "same cgroup, = 240 MiB): the OOM killer fires while 272 MiB of /run/shm "
                       "are still free");
    /* -m counts the other mount at its own recommended size (peak 200 MiB x
     * 1.5): both mounts of the cgroup recommend one -m. */
    assert_int_equal(run->rec_shm_size, 300 * MiB);
    assert_advice(dev, "-m 564m ((app peak 20.0 MiB + shm 150.0 MiB + 300.0 MiB recommended for "
                       "/run/shm) x 1.2 = 564.0 MiB, rounded up to a whole MiB; the current 360 "
                       "MiB is too small)");
    assert_advice(run, "-m 564m ((app peak 20.0 MiB + shm 300.0 MiB + 150.0 MiB recommended for "
                       "/dev/shm) x 1.2 = 564.0 MiB");
    assert_int_equal(dev->rec_memory, 564 * MiB);
    assert_int_equal(run->rec_memory, 564 * MiB);
    /* The JSON says those bytes beside the headroom that subtracts them. */
    struct buf j;
    buf_init(&j);
    report_json(&j, m);
    assert_non_null(strstr(j.data, "\"headroom_bytes\":41943040,"));
    assert_non_null(strstr(j.data, "\"shm_other_bytes\":209715200}"));
    assert_non_null(strstr(j.data, "\"shm_other_bytes\":104857600}"));
    buf_free(&j);
    /* The errors ahead are each mount's own: /run/shm's 40 MiB of headroom
     * run out before its 312 MiB free, the host's /dev/shm has no limit. */
    const struct shm_error *e[8];
    enum shm_limit lim;
    assert_true(shm_errors_ahead(m, 2, &lim, e, 8) > 0);
    assert_int_equal(lim, SHM_LIMIT_MEMORY);
    assert_true(shm_errors_ahead(m, 0, &lim, e, 8) > 0);
    assert_int_equal(lim, SHM_LIMIT_SHM_SIZE);
    two_ctr_free(s, m);
}

/* Without --all every mount is the host's, in one cgroup: its /dev/shm
 * (64 MiB, 40 MiB used) and /run/shm (32 MiB, 10 MiB used) under a 1 GiB
 * limit with 100 MiB of app leave 874 MiB, in the top-level budget and
 * each mount's; the text report names the other mount's bytes. */
static void test_budget_counts_the_hosts_other_mounts(void **state)
{
    (void)state;
    struct scan *s = fake_scene_empty();
    struct shm_mount *run = fake_add_mount(s, 46, 32 * MiB, 10 * MiB);
    free(run->path);
    run->path = xstrdup("/run/shm");
    fake_cgroup(&s->cgroup, "/user.slice", 1024 * MiB, 100 * MiB);
    node_single(&s->node, &s->mounts);
    struct model *m = two_ctr_model(s);
    assert_int_equal(m->budget.shm_used, 40 * MiB);
    assert_int_equal(m->budget.headroom, 874 * MiB);
    assert_int_equal(model_mount_budget(m, 0)->headroom, 874 * MiB);
    assert_int_equal(model_mount_budget(m, 1)->headroom, 874 * MiB);
    assert_int_equal(model_mount_budget(m, 1)->shm_used, 10 * MiB);
    struct buf out;
    buf_init(&out);
    report_text(&out, m, true);
    if (!strstr(out.data, "  limit 1.0 GiB (cgroup), app 100 MiB, shm 40.0 MiB of 64.0 MiB, "
                          "other shm 10.0 MiB on /run/shm, headroom 874 MiB, shm still writable "
                          "24.0 MiB\n"))
        fail_msg("no budget line with the other mount in %s", out.data);
    buf_free(&out);
    two_ctr_free(s, m);
}

/* A scan keeps a holder record per fd and mapping on a watched device and
 * the model a segment per inode, thousands of each: their pages are a good
 * part of what a snapshot costs (doc/performance.md), so neither grows
 * unseen. On LP64, where the sizes were measured. */
static void test_record_sizes(void **state)
{
    (void)state;
    if (sizeof(void *) != 8 || sizeof(long) != 8) {
        fprintf(stderr, "# SKIP: the record sizes are those of LP64\n");
        skip();
    }
    assert_int_equal(sizeof(struct shm_holder), 72);
    assert_int_equal(sizeof(struct segment), 112);
    assert_int_equal(sizeof(struct seg_holder), 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_states, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kinds_and_creators, setup, teardown),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_record_sizes),
        cmocka_unit_test(test_kinds_table),
        cmocka_unit_test(test_joblib_folder_is_one_segment),
        cmocka_unit_test(test_files_in_a_directory_are_never_orphans),
        cmocka_unit_test(test_loader_batch),
        cmocka_unit_test(test_loader_prefetch_from_holders),
        cmocka_unit_test(test_workers_fit),
        cmocka_unit_test(test_errors_ahead),
        cmocka_unit_test_setup_teardown(test_holders_joined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_figures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups, setup, teardown),
        cmocka_unit_test(test_without_holder_scan_nothing_is_orphan),
        cmocka_unit_test(test_container_main_is_pid_1),
        cmocka_unit_test(test_orphans_by_fingerprint),
        cmocka_unit_test(test_kernel_thread_is_no_creator),
        cmocka_unit_test(test_unreadable_mount_is_no_full_mount),
        cmocka_unit_test(test_forkserver_is_passed_through),
        cmocka_unit_test(test_forkserver_orphans),
        cmocka_unit_test(test_zombie_is_never_a_main),
        cmocka_unit_test(test_dying_process_is_its_parents_worlds),
        cmocka_unit_test(test_torch2_in_a_chroot),
        cmocka_unit_test(test_torchrun_agent_is_no_main),
        cmocka_unit_test(test_remembered_workers_keep_their_orphans),
        cmocka_unit_test(test_other_mount_namespaces_are_not_ours),
        cmocka_unit_test(test_own_group_is_not_a_worker),
        cmocka_unit_test(test_named_workers_without_exe),
        cmocka_unit_test(test_loader_per_container),
        cmocka_unit_test(test_text_loader_per_container),
        cmocka_unit_test(test_mount_memory_per_container),
        cmocka_unit_test(test_mount_memory_unnamed_reuse),
        cmocka_unit_test(test_budget_counts_the_cgroups_other_mounts),
        cmocka_unit_test(test_budget_counts_the_hosts_other_mounts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
