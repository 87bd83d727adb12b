/* A JSON snapshot read back into a scan and a model (model/snapload.c):
 * real snapshots of `shmwatch --json` (tests/fixtures/replay: a scene of
 * shmscene, a DataLoader of three workers with hidden, orphaned, unheld and
 * hostile segments and a zombie, in a private 64 MiB tmpfs; the second
 * taken with the default orphan_min_age, so that its orphans carry the
 * "younger than" note) and the golden snapshots of the scan's scenes
 * (tests/fixtures/scan) are loaded, checked field by field through the
 * model's accessors, and written again with the JSON writer: the text must
 * be the snapshot's, byte for byte. Bad input gives a reason. */
#include <sys/sysmacros.h>

#include "testutil.h"
#include "model/model.h"
#include "model/snapload.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/jsondoc.h"

static char *read_fixture(const char *rel, size_t *len)
{
    const char *base = getenv("FIXTURES");
    assert_non_null(base);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    struct buf b;
    buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_add(&b, chunk, n);
    fclose(f);
    while (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    *len = b.len;
    return b.data;
}

/* The text without whitespace outside strings: a pretty-printed golden
 * file as the writer writes it, on one line. */
static char *compact(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    bool in = false;
    for (; *s; s++) {
        if (in) {
            *o++ = *s;
            if (*s == '\\' && s[1])
                *o++ = *++s;
            else if (*s == '"')
                in = false;
        } else if (*s == '"') {
            in = true;
            *o++ = *s;
        } else if (*s != ' ' && *s != '\n' && *s != '\t' && *s != '\r') {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

/* The snapshot with each \ufffd as the character itself: the writer
 * writes a name's bytes that are not UTF-8 as U+FFFD escaped, and that
 * character read back is valid UTF-8, which it writes as it is. The one
 * difference a round trip may make. */
static char *fffd_raw(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    while (*s) {
        if (strncmp(s, "\\ufffd", 6) == 0 && (o == out || o[-1] != '\\')) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            s += 6;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

struct loaded {
    struct jd *doc;
    struct scan s;
    struct model m;
    char *text; /* the snapshot, compact */
};

/* The snapshot text (compact JSON) read back into l; name says which in
 * a failure. */
static void load_text(const char *name, char *text, struct loaded *l)
{
    l->text = text;
    char err[256];
    l->doc = jd_parse(l->text, strlen(l->text), err, sizeof(err));
    if (!l->doc)
        fail_msg("%s: %s", name, err);
    int rc = snapload_build(l->doc, &l->s, &l->m, err, sizeof(err));
    if (rc != 0)
        fail_msg("%s: %s", name, err);
}

static void load(const char *rel, struct loaded *l)
{
    size_t len;
    char *raw = read_fixture(rel, &len);
    load_text(rel, compact(raw), l);
    free(raw);
}

static void unload(struct loaded *l)
{
    model_free(&l->m);
    scan_free(&l->s);
    jd_free(l->doc);
    free(l->text);
}

/* The writer's text of the loaded model against the snapshot; on a
 * difference, where it begins. */
static void assert_round_trip(const char *rel)
{
    struct loaded l;
    load(rel, &l);
    struct buf out;
    buf_init(&out);
    report_json(&out, &l.m);
    char *want = fffd_raw(l.text);
    if (strcmp(out.data, want) != 0) {
        size_t i = 0;
        while (out.data[i] && out.data[i] == want[i])
            i++;
        size_t from = i > 80 ? i - 80 : 0;
        fail_msg("%s: written again, it differs at byte %zu:\n  snapshot: %.160s\n  written:  %.160s",
                 rel, i, want + from, out.data + from);
    }
    free(want);
    buf_free(&out);
    unload(&l);
}

static void test_round_trip_real(void **state)
{
    (void)state;
    assert_round_trip("replay/scene.json");
    assert_round_trip("replay/scene_young.json");
}

static void test_round_trip_golden(void **state)
{
    (void)state;
    static const char *const scenes[] = {
        "container_nspid", "fd_only", "ipc_host", "mapping_only", "named", "orphans", "zombie_main",
    };
    for (size_t i = 0; i < sizeof(scenes) / sizeof(scenes[0]); i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), "scan/%s.json", scenes[i]);
        assert_round_trip(rel);
    }
}

static const struct segment *seg_named(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (strcmp(m->segs[i].name, name) == 0)
            return &m->segs[i];
    fail_msg("no segment %s", name);
    return NULL;
}

/* The real scene, field by field, as the screens read it. */
static void test_fields(void **state)
{
    (void)state;
    struct loaded l;
    load("replay/scene.json", &l);
    const struct model *m = &l.m;
    /* The scan's account. */
    assert_int_equal(model_scan_time(m).tv_sec, 1796515000); /* 2026-12-05T23:56:40Z */
    assert_true(model_holders_scanned(m));
    assert_int_equal(model_target_pid(m), 0);
    assert_null(model_target_host(m));
    assert_int_equal(model_warnings(m)->n, 1);
    assert_int_equal(model_warnings(m)->denied, 1);
    assert_false(model_node(m)->all);
    bool initial;
    assert_true(model_view_pidns(m, &initial) != 0);
    assert_true(initial);
    /* The mount, its figures, its cgroup and budget. */
    assert_int_equal(model_nmounts(m), 1);
    const struct shm_mount *mt = model_mount(m, 0);
    assert_string_equal(mt->path, "/dev/shm");
    assert_string_equal(mt->fstype, "tmpfs");
    assert_true(mt->stat_ok && mt->listed);
    assert_int_equal(mt->size, 67108864);
    assert_int_equal(mt->used, 13139968);
    assert_int_equal(major(mt->dev), 0);
    assert_int_equal(minor(mt->dev), 39);
    assert_int_equal(m->mounts[0].hidden, 9437184);
    assert_int_equal(m->mounts[0].orphan, 524288);
    assert_int_equal(m->mounts[0].nsegments, 24);
    assert_true(model_mount_seen_by(m, 0, NODE_HOST));
    const struct cgroup_info *cg = model_mount_cgroup(m, 0);
    assert_true(cg->present);
    assert_int_equal(cg->version, 1);
    assert_false(cg->has_limit);
    assert_true(cg->has_oom_kills);
    assert_ptr_equal(cg, model_cgroup(m));
    const struct budget *b = model_mount_budget(m, 0);
    assert_int_equal(b->verdict, VERDICT_WARN);
    assert_int_equal(b->limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(b->nadvice, 3);
    assert_int_equal(b->loader_main, 14508);
    assert_int_equal(b->loader_workers, 3);
    assert_int_equal(m->budget.shm_size, 67108864);
    /* The group: its main, workers and batch. */
    assert_int_equal(m->ngroups, 1);
    const struct group *g = model_find_group(m, 14508);
    assert_non_null(g);
    assert_int_equal(g->nworkers, 3);
    assert_int_equal(g->workers[0], 14512);
    assert_int_equal(g->workers[2], 14514);
    assert_int_equal(g->nmanagers, 0);
    assert_int_equal(g->batch_shm_bytes, 1048576);
    assert_int_equal(g->batches_in_flight, 12);
    assert_int_equal(model_group_main(m, g)->pid, 14508);
    assert_int_equal(g->ctr, NODE_HOST);
    /* The processes and their roles. */
    assert_int_equal(m->nprocs, 5);
    const struct mproc *w = model_find_proc(m, 14513);
    assert_non_null(w);
    assert_int_equal(w->role, ROLE_WORKER);
    assert_int_equal(w->group, 14508);
    assert_string_equal(model_proc(m, w)->comm, "pt_data_worker");
    assert_int_equal(model_proc(m, w)->ppid, 14508);
    const struct mproc *z = model_find_proc(m, 14522);
    assert_non_null(z);
    assert_int_equal(z->role, ROLE_ZOMBIE);
    assert_int_equal(model_proc(m, z)->state, 'Z');
    assert_int_equal(model_proc_ctr(m, model_proc(m, z)), NODE_HOST);
    assert_non_null(model_scan_proc(m, 14512));
    assert_null(model_scan_proc(m, 1));
    /* Segments: a hidden one held through an fd or a mapping of a worker,
     * an orphan of an exited creator, a hostile name kept as bytes. */
    const struct segment *h = seg_named(m, "torch_14513_1");
    assert_int_equal(h->state, SEG_HIDDEN);
    assert_int_equal(h->kind, KIND_TORCH);
    assert_int_equal(h->ino, 22);
    assert_ptr_equal(model_segment_mount(m, h), mt);
    assert_int_equal(h->dev, mt->dev);
    assert_true(h->has_creator && h->creator_alive && !h->creator_unknown);
    assert_int_equal(h->creator_pid, 14513);
    assert_int_equal(model_proc(m, model_find_proc(m, 14513)), &l.s.procs.items[h->creator_proc]);
    assert_int_equal(h->nholders, 1);
    assert_non_null(model_holder_proc(m, &h->holders[0]));
    assert_int_equal(h->group, 14508);
    const struct segment *o = seg_named(m, "torch_14515_0");
    assert_int_equal(o->state, SEG_ORPHAN);
    assert_false(o->creator_alive);
    assert_int_equal(o->creator_proc, -1);
    assert_int_equal(o->nholders, 0);
    assert_int_equal(o->alloc, 262144);
    const struct segment *e = seg_named(m, "\x1b[31mRED\x1b[0m");
    assert_int_equal(e->state, SEG_UNHELD);
    assert_false(e->has_creator);
    assert_int_equal(seg_named(m, "torch_fifo_2")->type, FT_FIFO);
    assert_int_equal(seg_named(m, "torch_1_2_3")->type, FT_SYMLINK);
    /* The totals. */
    assert_int_equal(m->totals.segments, 24);
    assert_int_equal(m->totals.hidden, 9);
    assert_int_equal(m->totals.orphans, 2);
    assert_int_equal(m->totals.zombies, 1);
    assert_int_equal(m->totals.unheld, 10);
    assert_int_equal(model_sysv(m)->n, 0);
    unload(&l);
}

/* The note of a segment younger than orphan_min_age is read back as that
 * note, and its sentence made again from the figures. */
static void test_young_note(void **state)
{
    (void)state;
    struct loaded l;
    load("replay/scene_young.json", &l);
    const struct segment *sg = seg_named(&l.m, "torch_14515_0");
    (void)sg;
    size_t young = 0;
    for (size_t i = 0; i < l.m.nsegs; i++)
        young += l.m.segs[i].note == NOTE_YOUNG;
    assert_int_equal(young, 2);
    assert_true(l.m.orphan_min_age_s == 60);
    unload(&l);
}

static void assert_refused(const char *text, const char *why)
{
    char err[256];
    struct jd *doc = jd_parse(text, strlen(text), err, sizeof(err));
    assert_non_null(doc);
    struct scan s;
    struct model m;
    assert_int_equal(snapload_build(doc, &s, &m, err, sizeof(err)), -EINVAL);
    if (!strstr(err, why))
        fail_msg("%s: the reason \"%s\" does not say \"%s\"", text, err, why);
    model_free(&m);
    scan_free(&s);
    jd_free(doc);
}

static void test_refused(void **state)
{
    (void)state;
    assert_refused("[1,2]", "not a JSON object");
    assert_refused("{\"event\":\"exit\",\"time\":\"2026-12-05T03:12:07Z\"}", "schema-1");
    assert_refused("{\"schema\":2,\"time\":\"2026-12-05T03:12:07Z\"}", "schema-1");
    assert_refused("{\"schema\":1,\"time\":\"yesterday\"}", "time");
    assert_refused("{\"schema\":1}", "time");
}

/* The least a snapshot may be: no mounts, no members beyond its time. */
static void test_minimal(void **state)
{
    (void)state;
    struct loaded l;
    load_text("minimal",
              strdup("{\"schema\":1,\"time\":\"2026-12-05T03:12:07.25Z\",\"mounts\":[{}],"
                     "\"segments\":[{\"mount_id\":\"9:9\",\"name\":\"x\"},{}],"
                     "\"processes\":[{}],\"groups\":[{\"main_pid\":77,\"cmdline\":\"m\"}]}"),
              &l);
    assert_int_equal(model_nmounts(&l.m), 1);
    assert_int_equal(l.m.nsegs, 0); /* of no mount: dropped */
    assert_int_equal(l.m.ngroups, 1);
    assert_string_equal(model_group_main(&l.m, &l.m.groups[0])->cmdline, "m");
    struct buf out;
    buf_init(&out);
    report_json(&out, &l.m); /* writes, whatever is missing */
    assert_non_null(strstr(out.data, "\"time\":\"2026-12-05T03:12:07Z\""));
    buf_free(&out);
    unload(&l);
}

/* A recorded snapshot read back is written back with its milliseconds and
 * its reason; the plain snapshot has whole seconds (test_minimal). */
static void test_recorded_time(void **state)
{
    (void)state;
    struct loaded l;
    load_text("recorded",
              strdup("{\"schema\":1,\"time\":\"2026-12-05T03:12:07.123Z\",\"mounts\":[],"
                     "\"reason\":\"event\"}"),
              &l);
    struct buf out;
    buf_init(&out);
    report_json_record(&out, &l.m, "event");
    const char *head = "{\"schema\":1,\"time\":\"2026-12-05T03:12:07.123Z\",";
    assert_true(strncmp(out.data, head, strlen(head)) == 0);
    assert_non_null(strstr(out.data, ",\"reason\":\"event\"}"));
    assert_int_equal(out.data[out.len - 1], '}');
    buf_reset(&out);
    report_json(&out, &l.m);
    assert_non_null(strstr(out.data, "\"time\":\"2026-12-05T03:12:07Z\""));
    assert_null(strstr(out.data, "reason"));
    buf_free(&out);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_real), cmocka_unit_test(test_round_trip_golden),
        cmocka_unit_test(test_fields),          cmocka_unit_test(test_young_note),
        cmocka_unit_test(test_refused),         cmocka_unit_test(test_minimal),
        cmocka_unit_test(test_recorded_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
