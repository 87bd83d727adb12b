/* The JSON and text reports of the shared scene: every schema field is
 * there, hostile names are escaped, the text carries no raw control byte. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "testutil.h"
#include "fake_scene.h"
#include "model/model.h"
#include "report/jsonw.h"
#include "report/report.h"

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
    struct text_opts to = {.ascii = false};
    report_text(&f->out, &f->m, &to);
    assert_non_null(strstr(f->out.data, "evil\\e[31m\\xff\\t\"x\""));
    for (const char *p = f->out.data; *p; p++)
        assert_true((unsigned char)*p >= 0x20 || *p == '\n');
}

static void test_text_sections(void **state)
{
    struct fake_fixture *f = *state;
    struct text_opts to = {.ascii = true};
    report_text(&f->out, &f->m, &to);
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
    struct text_opts to = {.ascii = true};
    report_text(&f->out, &f->m, &to);
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
    struct text_opts to = {.ascii = true};
    report_text(&f->out, &f->m, &to);
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
    struct text_opts to = {.ascii = true};
    report_text(&f->out, &f->m, &to);
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
    struct text_opts to = {0};
    report_text(&f->out, &f->m, &to);
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
    report_text(&f->out, &f->m, &to);
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
            jw_stream(&w, sink);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
