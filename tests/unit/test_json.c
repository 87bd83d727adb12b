/* The JSON and text reports of the shared scene: every schema field is
 * there, hostile names are escaped, the text carries no raw control byte.
 * The segments and processes of the snapshot are checked as text on made
 * ones: every state, kind, type and note, with and without creator, no,
 * one and many holders, numbers at their extremes, two mounts (one of them
 * with a hostile path), and names that hold quotes, backslashes, control
 * bytes, invalid UTF-8 and 255 bytes that each grow six times. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "testutil.h"
#include "fake_scene.h"
#include "model/model.h"
#include "report/jsonw.h"
#include "report/report.h"
#include "util/xalloc.h"

static int setup(void **state)
{
    return fake_fixture_setup(state, fake_scene());
}
static void test_schema_fields(void **state)
{
    struct fake_fixture *f = *state;
    report_json(&f->out, &f->m);
    const char *j = f->out.data;
    static const char *const keys[] = {
        "\"schema\":1,", "\"time\":\"1970-01-01T00:26:40Z\"", "\"mounts\":[",
        "\"path\":\"/dev/shm\"", "\"size_bytes\":67108864", "\"used_bytes\":41943040",
        "\"avail_bytes\":", "\"used_pct\":62.5", "\"named_bytes\":", "\"hidden_bytes\":8388608",
        "\"orphan_bytes\":2101248", "\"unattributed_bytes\":", "\"pending_bytes\":2097152",
        "\"segments\":[", "\"inode\":", "\"alloc_bytes\":", "\"uid\":1000", "\"age_s\":600",
        "\"state\":\"hidden\"", "\"kind\":\"omp\"", "\"creator_pid\":null",
        "\"creator_alive\":false", "\"holders\":[{\"pid\":10,\"fd\":5,\"mapped\":true}]",
        "{\"pid\":40,\"fd\":null,\"mapped\":true}", "\"group\":10", "\"processes\":[",
        "\"role\":\"orphan_worker\"", "\"role\":\"shm_manager\"", "\"comm\":\"torch_shm_manag\"",
        "\"rss_anon_bytes\":10485760", "\"groups\":[{\"main_pid\":10,",
        "\"workers\":[11,12]", "\"shm_managers\":[13]", "\"cgroup\":null", "\"budget\":{",
        "\"limit_source\":\"memtotal\"", "\"verdict\":", "\"advice\":[", "\"totals\":{",
        "\"orphans\":2", "\"zombies\":1", "\"orphan_workers\":1", "\"warnings\":[]",
        "\"shm_effective_bytes\":", "\"headroom_bytes\":", "\"app_bytes\":",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(j, keys[i]))
            fail_msg("JSON lacks %s in %s", keys[i], j);
    assert_null(strchr(j, '\n'));
}

static void test_hostile_name_escaped(void **state)
{
    struct fake_fixture *f = *state;
    /* Rebuild with a name full of control bytes and invalid UTF-8. */
    model_free(&f->m);
    for (size_t i = 0; i < f->s->files.n; i++) {
        if (f->s->files.items[i].ino == 9)
            f->s->files.items[i].name = files_name(&f->s->files, "evil\x1b[31m\xff\t\"x\"");
    }
    fake_fixture_build(f);
    report_json(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "\"name\":\"evil\\u001b[31m\\ufffd\\t\\\"x\\\"\""));
    for (const char *p = f->out.data; *p; p++)
        assert_true((unsigned char)*p >= 0x20);

    buf_reset(&f->out);
    report_text(&f->out, &f->m, false);
    assert_non_null(strstr(f->out.data, "evil\\e[31m\\xff\\t\"x\""));
    for (const char *p = f->out.data; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
}

static void test_text_sections(void **state)
{
    struct fake_fixture *f = *state;
    report_text(&f->out, &f->m, true);
    const char *t = f->out.data;
    assert_non_null(strstr(t, "/dev/shm  [#############.......]  62.5%  40.0 MiB of 64.0 MiB"));
    assert_non_null(strstr(t, "main 10  " "/usr/bin/python3.11"));
    assert_non_null(strstr(t, "2 workers, 1 shm managers, 3 segments, 11.0 MiB"));
    assert_non_null(strstr(t, "ORPHANS"));
    assert_non_null(strstr(t, "torch_999_1  orphan torch"));
    assert_non_null(strstr(t, "orphan_worker 20"));
    assert_non_null(strstr(t, "zombie        30"));
    assert_non_null(strstr(t, "my segment\\n1"));
}

/* A mount whose size could not be read is said to be unknown, not shown as
 * an empty 0 B gauge. */
static void test_text_mount_unreadable(void **state)
{
    struct fake_fixture *f = *state;
    f->s->mounts.items[0].stat_ok = false;
    report_text(&f->out, &f->m, true);
    const char *t = f->out.data;
    assert_non_null(strstr(t, "/dev/shm  size and use unknown: statfs failed (see WARNINGS)"));
    assert_null(strstr(t, "of 64.0 MiB used"));
    assert_non_null(strstr(t, ", unattributed unknown, "));
}

/* The same mount in JSON: the schema's integers stay integers, 0 and never
 * a stale figure, with size_known false; in Prometheus its statfs figures
 * (size, used, avail, unattributed) have no sample rather than a false 0,
 * and the scan's figures remain. A readable mount has size_known true. */
static void test_export_mount_unreadable(void **state)
{
    struct fake_fixture *f = *state;
    report_json(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "\"size_bytes\":67108864,"));
    assert_non_null(strstr(f->out.data, ",\"size_known\":true,\"listed\":true}"));
    buf_reset(&f->out);

    model_free(&f->m);
    f->s->mounts.items[0].stat_ok = false; /* as statfs_mount leaves it */
    f->s->mounts.items[0].stat_err = EACCES;
    f->s->mounts.items[0].size = f->s->mounts.items[0].used = f->s->mounts.items[0].avail = 0;
    fake_fixture_build(f);
    report_json(&f->out, &f->m);
    const char *j = strstr(f->out.data, "\"mounts\":[{");
    assert_non_null(j);
    static const char *const keys[] = {
        "\"size_bytes\":0,", "\"used_bytes\":0,", "\"avail_bytes\":0,", "\"used_pct\":0,",
        "\"unattributed_bytes\":0,", "\"hidden_bytes\":8388608,", "\"size_known\":false,",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(j, keys[i]))
            fail_msg("the mount lacks %s in %s", keys[i], j);
    /* An unreadable mount is left out of the budget. */
    assert_int_equal(f->m.budget.shm_size, 0);
    assert_int_equal(f->m.budget.shm_used, 0);

    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    const char *p = f->out.data;
    assert_null(strstr(p, "shmwatch_mount_size_bytes{"));
    assert_null(strstr(p, "shmwatch_mount_used_bytes{"));
    assert_null(strstr(p, "shmwatch_mount_avail_bytes{"));
    assert_null(strstr(p, "shmwatch_mount_unattributed_bytes{"));
    assert_non_null(strstr(p, "# TYPE shmwatch_mount_size_bytes gauge\n"));
    assert_non_null(strstr(p, "shmwatch_mount_hidden_bytes{mount=\"/dev/shm\"} 8388608\n"));
    assert_non_null(strstr(p, "shmwatch_mount_named_bytes{mount=\"/dev/shm\"} "));
    assert_non_null(strstr(p, "shmwatch_mount_pending_bytes{mount=\"/dev/shm\"} 2097152\n"));
}

/* A mount whose directory could not be listed: its named and orphan bytes
 * are unknown, and so its unattributed bytes and its segment counts. JSON
 * keeps integers (0) with listed false; Prometheus has no sample of them;
 * the text says unknown. */
static void test_mount_unlisted(void **state)
{
    struct fake_fixture *f = *state;
    model_free(&f->m);
    f->s->mounts.items[0].listed = false;
    fake_fixture_build(f);
    report_json(&f->out, &f->m);
    const char *j = strstr(f->out.data, "\"mounts\":[{");
    assert_non_null(j);
    static const char *const keys[] = {
        "\"size_bytes\":67108864,", "\"unattributed_bytes\":0,", "\"hidden_bytes\":8388608,",
        "\"size_known\":true,\"listed\":false}",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(j, keys[i]))
            fail_msg("the mount lacks %s in %s", keys[i], j);

    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    const char *p = f->out.data;
    assert_null(strstr(p, "shmwatch_mount_named_bytes{"));
    assert_null(strstr(p, "shmwatch_mount_orphan_bytes{"));
    assert_null(strstr(p, "shmwatch_mount_unattributed_bytes{"));
    assert_null(strstr(p, "shmwatch_segments{")); /* counts of unknown named ones: no false 0s */
    assert_non_null(strstr(p, "# TYPE shmwatch_segments gauge\n"));
    assert_non_null(strstr(p, "shmwatch_mount_size_bytes{mount=\"/dev/shm\"} 67108864\n"));
    assert_non_null(strstr(p, "shmwatch_mount_hidden_bytes{mount=\"/dev/shm\"} 8388608\n"));

    buf_reset(&f->out);
    report_text(&f->out, &f->m, true);
    assert_non_null(strstr(f->out.data, "named unknown, hidden 8.0 MiB, orphan unknown, unattributed unknown,"));
    assert_non_null(strstr(f->out.data, "its directory could not be listed (see WARNINGS)"));
}

/* A main whose command line could not be read (it is exiting, or the walk
 * skipped it) is shown by its comm, in both reports. */
static void test_main_without_cmdline(void **state)
{
    struct fake_fixture *f = *state;
    struct proc *p = (struct proc *)procs_find(&f->s->procs, 10);
    free(p->cmdline);
    p->cmdline = NULL;
    report_text(&f->out, &f->m, true);
    assert_non_null(strstr(f->out.data, "main 10  [python3]\n"));
    buf_reset(&f->out);
    report_json(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "\"main_pid\":10,\"cmdline\":null"));
}

/* The cgroup's OOM kills in every report: a count, or null / no sample when
 * the kernel does not say; new ones make the verdict critical. */
static void test_cgroup_oom_kills(void **state)
{
    struct fake_fixture *f = *state;
    model_free(&f->m);
    struct cgroup_info *cg = &f->s->cgroup;
    cg->present = true;
    cg->version = 2;
    cg->path = strdup("/job");
    cg->has_limit = true;
    cg->limit = 1ULL << 33;
    fake_fixture_build(f);
    report_json(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "\"file_bytes\":0,\"oom_kills\":null}"));
    assert_non_null(strstr(f->out.data, "\"oom_kills_recent\":0"));
    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    assert_null(strstr(f->out.data, "oom_kills"));
    buf_reset(&f->out);
    report_text(&f->out, &f->m, false);
    assert_non_null(strstr(f->out.data, "  oom kills unknown"));

    model_free(&f->m);
    cg->has_oom_kills = true;
    cg->oom_kills = 4;
    struct model_opts o;
    model_opts_default(&o);
    o.oom_recent = 1;
    model_build(f->s, &o, &f->m);
    buf_reset(&f->out);
    report_json(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "\"oom_kills\":4}"));
    assert_non_null(strstr(f->out.data, "\"verdict\":\"critical\""));
    assert_non_null(strstr(f->out.data, "\"oom_kills_recent\":1"));
    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    assert_non_null(strstr(f->out.data, "# TYPE shmwatch_cgroup_oom_kills_total counter\n"
                                        "shmwatch_cgroup_oom_kills_total 4\n"));
    buf_reset(&f->out);
    report_text(&f->out, &f->m, false);
    assert_non_null(strstr(f->out.data, "  oom kills 4 (new ones just now: the memory limit was hit)"));
    assert_non_null(strstr(f->out.data, "verdict: critical"));
}

/* plan --observe's object: a group's batch figures under plan's names,
 * the prefetch factor the one that explains its batches in flight. */
static void test_observed(void **state)
{
    struct fake_fixture *f = *state;
    struct group g = {.main_pid = 100, .nworkers = 2, .batch_segments = 6,
                      .batch_segments_bytes = 27 * 4096, .batch_segment_bytes = 8 * 4096,
                      .batch_shm_bytes = 9 * 4096, .batches_in_flight = 3};
    struct jsonw w;
    jw_init(&w, &f->out);
    jw_obj(&w, NULL);
    report_json_observed(&w, &g);
    jw_obj_end(&w);
    assert_string_equal(f->out.data,
                        "{\"observed\":{\"main_pid\":100,\"workers\":2,\"segments\":6,"
                        "\"shm_bytes\":110592,\"largest_segment_bytes\":32768,"
                        "\"batches_in_flight\":3,\"prefetch_factor\":1,\"method\":\"shm_bytes / "
                        "batches_in_flight; one largest segment per batch\"}}");
}

/* Streamed output is the same bytes as output made whole, in pieces no
 * larger than the flush size plus one value; the rest stays in the buffer. */
static void test_stream_same_bytes(void **state)
{
    (void)state;
    struct buf whole, part;
    buf_init(&whole);
    buf_init(&part);
    FILE *sink = tmpfile();
    assert_non_null(sink);
    for (int streamed = 0; streamed < 2; streamed++) {
        struct jsonw w;
        jw_init(&w, streamed ? &part : &whole);
        if (streamed)
            w.sink = sink;
        jw_obj(&w, NULL);
        jw_arr(&w, "segments");
        for (int i = 0; i < 20000; i++) {
            jw_obj(&w, NULL);
            jw_str(&w, "name", "torch_1_\"x\"");
            jw_i64(&w, "pid", -i);
            jw_u64(&w, "size_bytes", (uint64_t)i << 20);
            jw_bool(&w, "mapped", i & 1);
            jw_null(&w, "group");
            jw_obj_end(&w);
            assert_true(!streamed || part.len < JSONW_FLUSH_AT + 256);
        }
        jw_arr_end(&w);
        jw_obj_end(&w);
    }
    assert_true(whole.len > 4 * JSONW_FLUSH_AT);
    long n = ftell(sink);
    assert_true(n > 0 && (size_t)n + part.len == whole.len);
    char *got = malloc(whole.len);
    rewind(sink);
    assert_int_equal(fread(got, 1, (size_t)n, sink), (size_t)n);
    memcpy(got + n, part.data, part.len);
    assert_memory_equal(got, whole.data, whole.len);
    free(got);
    fclose(sink);
    buf_free(&whole);
    buf_free(&part);
}

/* Numbers as printf writes them: every digit count, the edges of each
 * (9, 10, 99, 100, ...), the extremes of both types, and a spread of others. */
static void check_number(uint64_t u, int64_t i)
{
    struct buf out;
    buf_init(&out);
    struct jsonw w;
    jw_init(&w, &out);
    jw_obj(&w, NULL);
    jw_u64(&w, "u", u);
    jw_i64(&w, "i", i);
    jw_obj_end(&w);
    char want[96];
    snprintf(want, sizeof(want), "{\"u\":%llu,\"i\":%lld}", (unsigned long long)u, (long long)i);
    assert_string_equal(out.data, want);
    buf_free(&out);
}

static void test_numbers(void **state)
{
    (void)state;
    uint64_t p = 1;
    for (int k = 0; k < 20; k++, p *= 10) {
        check_number(p, (int64_t)p);
        check_number(p - 1, -(int64_t)(p - 1));
        check_number(p + 1, -(int64_t)p);
        check_number(p * 5 + 7, (int64_t)(p * 3));
    }
    check_number(0, 0);
    check_number(UINT64_MAX, INT64_MIN);
    check_number(UINT64_MAX - 1, INT64_MAX);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 2000; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        check_number(x >> (k % 64), (int64_t)(x >> (k % 63 + 1)) * (k & 1 ? -1 : 1));
    }
}

/* Hostile names and their JSON text, written by hand: the snapshot's
 * escaping as the schema has it. */
static const struct {
    const char *name, *json;
} names[] = {
    {"torch_123_4", "\"torch_123_4\""},
    {"", "\"\""},
    {"q\"b\\s/", "\"q\\\"b\\\\s/\""},
    {"nl\ntab\tcr\resc\x1b[31mdel\x7f\x01\x1f",
     "\"nl\\ntab\\tcr\\resc\\u001b[31mdel\\u007f\\u0001\\u001f\""},
    {"bad\xff\xfe lone\xc3( cut\xe2\x82", "\"bad\\ufffd\\ufffd lone\\ufffd( cut\\ufffd\\ufffd\""},
    {"over\xc0\xaf sur\xed\xa0\x80 big\xf4\x90\x80\x80",
     "\"over\\ufffd\\ufffd sur\\ufffd\\ufffd\\ufffd big\\ufffd\\ufffd\\ufffd\\ufffd\""},
    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\x85",
     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \\u0085\""},
    /* Invisible and reordering characters: escaped, the same string to a
     * parser (a surrogate pair past U+FFFF). */
    {"rtl_\xe2\x80\xaegpj zw\xe2\x80\x8b tag\xf3\xa0\x81\x81",
     "\"rtl_\\u202egpj zw\\u200b tag\\udb40\\udc41\""},
    {"sp ace", "\"sp ace\""},
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

/* Two more names of 255 bytes (a file name's most): every byte escaped to
 * six, and every byte plain. */
static char long_ctl[256], long_plain[256];

static int setup_two_mounts(void **state)
{
    memset(long_ctl, 0x01, 255);
    memset(long_plain, 'a', 255);
    int r = fake_fixture_setup(state, fake_scene());
    struct fake_fixture *f = *state;
    /* A second mount whose path must be escaped too, in each segment's
     * "mount" and in the note that names it. */
    model_free(&f->m);
    struct shm_mount *mt = fake_add_mount(f->s, 46, 64 * MiB, 1 * MiB);
    free(mt->path);
    mt->path = xstrdup("/run/\"shm\"\n\xff");
    fake_fixture_build(f);
    return r;
}

static struct seg_holder holders[40];

/* Replaces the model's segments by n made ones, going through every
 * combination of the fields' cases. */
static void make_segments(struct model *m, size_t n)
{
    for (size_t h = 0; h < 40; h++)
        holders[h] = (struct seg_holder){
            .pid = h == 0 ? INT_MAX : (pid_t)(h * 977),
            .fd = h % 3 == 0 ? -1 : (h == 1 ? INT_MAX : (int)h),
            .mapped = h % 2,
            .proc = -1,
        };
    static const uint64_t big[] = {0, 1, 9, 10, 4096, 99999, 1ull << 32, UINT64_MAX};
    free(m->segs);
    m->segs = xcalloc(n, sizeof(*m->segs));
    m->nsegs = m->segs_cap = n;
    for (size_t i = 0; i < n; i++) {
        struct segment *sg = &m->segs[i];
        size_t nm = i % (NNAMES + 2);
        sg->mount = i % 2;
        sg->name = nm < NNAMES ? names[nm].name : nm == NNAMES ? long_ctl : long_plain;
        sg->ino = (ino_t)big[i % 8] + i;
        sg->size = big[(i + 3) % 8];
        sg->alloc = big[(i + 5) % 8];
        sg->uid = i % 5 == 0 ? UINT32_MAX : (uid_t)i;
        /* Ages of 0 (in the future, or no time) up to years. */
        sg->mtime = i % 6 == 0 ? 0 : m->now - (int64_t)((i * 7919) % 100000000) + 5;
        /* Every value, and one beyond (named as the name functions name it). */
        sg->state = (enum seg_state)(i % (SEG_UNHELD + 2));
        sg->kind = (enum seg_kind)(i % (KIND_COUNT + 1));
        sg->type = (enum file_type)(i % (FT_OTHER + 2));
        sg->note = (enum seg_note)(i % (NOTE_UNPROVEN + 1));
        sg->has_creator = i % 3 != 0;
        sg->creator_pid = i % 11 == 0 ? INT_MAX : (pid_t)(i + 1);
        sg->creator_unknown = i % 5 == 1;
        sg->creator_alive = i % 2;
        sg->creator_proc = -1;
        sg->nholders = i % 7 == 0 ? 0 : i % 7 == 1 ? 40 : i % 3;
        sg->holders = holders;
        sg->group = i % 4 == 0 ? 0 : i % 4 == 1 ? INT_MAX : (pid_t)(i + 2);
        sg->alloc_known = i % 2;
    }
}

/* The "segments" array of the snapshot in j. */
static const char *segments_of(const char *j)
{
    const char *s = strstr(j, ",\"segments\":[");
    assert_non_null(s);
    return s + 1;
}

/* Each name's text is as the schema escapes it, the 255-byte ones too; the
 * second mount's path likewise, in "mount" and in the note that names it. */
static void test_hostile_text(void **state)
{
    struct fake_fixture *f = *state;
    make_segments(&f->m, NNAMES + 2);
    for (size_t i = 0; i < f->m.nsegs; i++)
        f->m.segs[i].note = NOTE_NONE;
    f->m.segs[1].note = NOTE_SHARED;
    report_json(&f->out, &f->m);
    const char *j = segments_of(f->out.data);
    char want[2048];
    for (size_t i = 0; i < NNAMES; i++) {
        snprintf(want, sizeof(want), ",\"name\":%s,\"inode\":", names[i].json);
        if (!strstr(j, want))
            fail_msg("no %s in %s", want, j);
    }
    char *p = want + snprintf(want, sizeof(want), ",\"name\":\"");
    for (int i = 0; i < 255; i++)
        p += sprintf(p, "\\u0001");
    strcpy(p, "\",\"inode\":");
    assert_non_null(strstr(j, want));
    snprintf(want, sizeof(want), ",\"name\":\"%s\",\"inode\":", long_plain);
    assert_non_null(strstr(j, want));
    assert_non_null(strstr(j, "{\"mount\":\"/run/\\\"shm\\\"\\n\\ufffd\",\"mount_id\":\"0:46\","
                              "\"name\":\"\",\"inode\":2,"));
    assert_non_null(strstr(j, "reach /run/\\\"shm\\\"\\n\\ufffd, but which one"));
    for (const char *q = f->out.data; *q; q++)
        assert_true((unsigned char)*q >= 0x20 && (unsigned char)*q != 0x7f);
}

/* Two whole segments as text, written by hand: the first of mount 0 (no
 * creator, no holder, no group, no note) and one with a creator whose life
 * is unknown, many holders and a note. */
static void test_segment_text(void **state)
{
    struct fake_fixture *f = *state;
    make_segments(&f->m, 2);
    struct segment *a = &f->m.segs[0], *b = &f->m.segs[1];
    a->ino = 0;
    a->size = UINT64_MAX;
    a->alloc = 0;
    a->uid = 0;
    a->mtime = 0;
    b->mount = 0;
    b->ino = 1234567;
    b->size = 10;
    b->alloc = 4096;
    b->uid = 1000;
    b->mtime = f->m.now - 90061;
    b->state = SEG_UNHELD;
    b->kind = KIND_CHROMIUM;
    b->type = FT_SOCKET;
    b->note = NOTE_UNPROVEN;
    b->has_creator = true;
    b->creator_pid = 4242;
    b->creator_unknown = true;
    b->nholders = 3;
    b->group = 77;
    b->alloc_known = false;
    report_json(&f->out, &f->m);
    assert_non_null(strstr(
        f->out.data,
        "\"segments\":[{\"mount\":\"/dev/shm\",\"mount_id\":\"0:45\",\"name\":\"torch_123_4\","
        "\"inode\":0,\"size_bytes\":18446744073709551615,\"alloc_bytes\":0,\"uid\":0,"
        "\"age_s\":0,\"state\":\"in_use\",\"kind\":\"torch\",\"creator_pid\":null,"
        "\"creator_alive\":null,\"holders\":[],\"group\":null,\"type\":\"file\","
        "\"alloc_exact\":false,\"note\":null},"
        "{\"mount\":\"/dev/shm\",\"mount_id\":\"0:45\",\"name\":\"\",\"inode\":1234567,"
        "\"size_bytes\":10,\"alloc_bytes\":4096,\"uid\":1000,\"age_s\":90061,"
        "\"state\":\"unheld\",\"kind\":\"chromium\",\"creator_pid\":4242,"
        "\"creator_alive\":null,\"holders\":[{\"pid\":2147483647,\"fd\":null,\"mapped\":false},"
        "{\"pid\":977,\"fd\":2147483647,\"mapped\":true},{\"pid\":1954,\"fd\":2,"
        "\"mapped\":false}],\"group\":77,\"type\":\"socket\",\"alloc_exact\":false,"
        "\"note\":\"pid 4242 is not alive here, but processes outside this pid namespace may "
        "write to /dev/shm (--trust-pids if they cannot)\"}],\"processes\":["));
}

/* Streamed, the snapshot is the same bytes as made whole, and the segments
 * are written out as they go: they cross the flush size many times. */
static void test_segments_streamed(void **state)
{
    struct fake_fixture *f = *state;
    make_segments(&f->m, 3000);
    report_json(&f->out, &f->m);
    assert_true(f->out.len > 10 * JSONW_FLUSH_AT);
    FILE *sink = tmpfile();
    assert_non_null(sink);
    struct buf rest;
    buf_init(&rest);
    report_json_stream(&rest, &f->m, sink);
    long n = ftell(sink);
    assert_true(n > 0 && (size_t)n + rest.len == f->out.len);
    /* Never more than a flush's worth and a segment held: the buffer did
     * not grow to the segments' whole (ten times that), nor past 64 KiB
     * (48 KiB and the segment that crosses it, in a buffer that doubles). */
    assert_true(rest.cap <= (64u << 10));
    char *got = xmalloc(f->out.len);
    rewind(sink);
    assert_int_equal(fread(got, 1, (size_t)n, sink), (size_t)n);
    memcpy(got + n, rest.data, rest.len);
    assert_memory_equal(got, f->out.data, f->out.len);
    free(got);
    fclose(sink);
    buf_free(&rest);
}

/* The processes: hostile command names and lines (none, long, every byte
 * escaped), odd states, every role and one beyond, in a container with a
 * hostile id or in none, numbers at their extremes. */
static void test_process_text(void **state)
{
    struct fake_fixture *f = *state;
    struct scan *s = f->s;
    static const char *const lines[] = {NULL, "python3 -c \"x\\y\"\n\x1b]0;t\x07", "bad\xff\xc3(",
                                        "caf\xc3\xa9"};
    static const char states[] = {'S', 'Z', '"', '\\', '\x01', '\0', (char)0xff, 0x7f};
    static char long_line[5000];
    memset(long_line, 0x1f, sizeof(long_line) - 1);
    for (size_t k = 0; k < s->procs.n; k++) {
        struct proc *p = &s->procs.items[k];
        free(p->cmdline);
        p->cmdline = k == 1 ? xstrdup(long_line) : lines[k % 4] ? xstrdup(lines[k % 4]) : NULL;
        p->state = states[k % 8];
        snprintf(p->comm, sizeof(p->comm), k % 2 ? "w\"\\\n\xff%u" : "python3",
                 (unsigned)(k % 100));
        p->uid = k % 3 ? (uid_t)k : UINT32_MAX;
        p->rss_anon = k % 2 ? UINT64_MAX : k;
        p->start_ticks = (uint64_t)k << 40;
        p->pid = k % 5 ? (pid_t)k : INT_MAX;
        p->nspid = k % 4 ? 1 : INT_MAX;
    }
    struct node_ctr ctr = {.info = {.id = "c\"1\n"}};
    s->node.ctrs = &ctr;
    s->node.nctrs = 1;
    size_t n = (ROLE_HOLDER + 2) * s->procs.n * 3;
    free(f->m.procs);
    f->m.procs = xcalloc(n, sizeof(*f->m.procs));
    f->m.nprocs = n;
    for (size_t i = 0; i < n; i++)
        f->m.procs[i] = (struct mproc){
            .proc = i % s->procs.n,
            .role = (enum proc_role)(i % (ROLE_HOLDER + 2)),
            .group = i % 3 ? 0 : (pid_t)i,
            .shm_bytes = i % 2 ? (uint64_t)i << 33 : 0,
            .nsegments = i,
            .ctr = i % 3 == 1 ? 0 : NODE_HOST,
        };
    report_json(&f->out, &f->m);

    s->node.ctrs = NULL;
    s->node.nctrs = 0;

    const char *got = strstr(f->out.data, ",\"processes\":[");
    assert_non_null(got);
    assert_non_null(strstr(got, "\"state\":\"\\\\\",\"comm\":\"w\\\"\\\\\\n\\ufffd3\""));
    assert_non_null(strstr(got, "\"state\":\"\\\"\",\"comm\":\"python3\""));
    assert_non_null(strstr(got, "\"state\":\"\",\"comm\":\"w\\\"\\\\\\n\\ufffd5\""));
    assert_non_null(strstr(got, "\"cmdline\":null,"));
    assert_non_null(strstr(got, ",\"container\":\"c\\\"1\\n\",\"containerd_namespace\":null}"));
    assert_non_null(strstr(got, ",\"role\":\"none\","));
    assert_non_null(strstr(got, ",\"group\":null,"));
    assert_non_null(strstr(got, ",\"uid\":4294967295,"));
    assert_non_null(strstr(got, ",\"rss_anon_bytes\":18446744073709551615,"));
    assert_non_null(strstr(got, "{\"pid\":2147483647,"));
    for (const char *q = f->out.data; *q; q++)
        assert_true((unsigned char)*q >= 0x20 && (unsigned char)*q != 0x7f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schema_fields, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hostile_name_escaped, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_sections, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_main_without_cmdline, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_mount_unreadable, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_export_mount_unreadable, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_mount_unlisted, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cgroup_oom_kills, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_observed, setup, fake_fixture_teardown),
        cmocka_unit_test(test_stream_same_bytes),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test_setup_teardown(test_hostile_text, setup_two_mounts, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_segment_text, setup_two_mounts, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_segments_streamed, setup_two_mounts,
                                        fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_process_text, setup_two_mounts, fake_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
