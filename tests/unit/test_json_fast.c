/* The JSON snapshot's segments and processes, written in one piece each
 * (json.c), are the bytes the generic writer makes of them, value by value
 * (the processes: below). The segments are checked on every state, kind,
 * type and note, with and without creator,
 * with no, one and many holders, numbers at their extremes, two mounts (one
 * of them with a hostile path), and names that hold quotes, backslashes,
 * control bytes, invalid UTF-8 and 255 bytes that each grow six times. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "testutil.h"
#include "fake_scene.h"
#include "model/model.h"
#include "report/jsonw.h"
#include "report/report.h"
#include "util/xalloc.h"

/* The hostile names and their JSON text, written by hand: the reference
 * writer below escapes with the same esc_json, so these hold it to the
 * schema's escaping. */
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

static int setup(void **state)
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

/* A segment as the generic writer writes it, value by value: the writer
 * json.c had before it wrote a segment in one piece. */
static void ref_segment(struct jsonw *w, const struct model *m, const struct segment *sg)
{
    char id[32];
    jw_obj(w, NULL);
    jw_str(w, "mount", model_mount(m, sg->mount)->path);
    jw_str(w, "mount_id", report_mount_id(m, sg->mount, id, sizeof(id)));
    jw_str(w, "name", sg->name);
    jw_u64(w, "inode", (uint64_t)sg->ino);
    jw_u64(w, "size_bytes", sg->size);
    jw_u64(w, "alloc_bytes", sg->alloc);
    jw_u64(w, "uid", sg->uid);
    jw_i64(w, "age_s", segment_age_s(m, sg));
    jw_name(w, "state", seg_state_name(sg->state));
    jw_name(w, "kind", seg_kind_name(sg->kind));
    if (sg->has_creator) {
        jw_i64(w, "creator_pid", sg->creator_pid);
        if (sg->creator_unknown)
            jw_null(w, "creator_alive");
        else
            jw_bool(w, "creator_alive", sg->creator_alive);
    } else {
        jw_null(w, "creator_pid");
        jw_null(w, "creator_alive");
    }
    jw_arr(w, "holders");
    for (size_t h = 0; h < sg->nholders; h++) {
        jw_obj(w, NULL);
        jw_i64(w, "pid", sg->holders[h].pid);
        jw_i64_or_null(w, "fd", sg->holders[h].fd >= 0, sg->holders[h].fd);
        jw_bool(w, "mapped", sg->holders[h].mapped);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_i64_or_null(w, "group", sg->group != 0, sg->group);
    jw_name(w, "type", file_type_name(sg->type));
    jw_bool(w, "alloc_exact", sg->alloc_known);
    if (sg->note != NOTE_NONE) {
        char note[256];
        jw_str(w, "note", segment_note(m, sg, note, sizeof(note)));
    } else {
        jw_null(w, "note");
    }
    jw_obj_end(w);
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

static void test_segments_as_generic(void **state)
{
    struct fake_fixture *f = *state;
    assert_int_equal(model_nmounts(&f->m), 2);
    make_segments(&f->m, 2 * 3 * 4 * 5 * 7 * 11 * 3);
    report_json(&f->out, &f->m);

    struct buf ref;
    buf_init(&ref);
    struct jsonw w;
    jw_init(&w, &ref);
    jw_obj(&w, NULL);
    jw_arr(&w, "segments");
    for (size_t i = 0; i < f->m.nsegs; i++)
        ref_segment(&w, &f->m, &f->m.segs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    /* {"segments":[...]} without its braces, then the next key. */
    const char *got = segments_of(f->out.data);
    size_t n = ref.len - 2;
    assert_true(strlen(got) > n);
    if (memcmp(got, ref.data + 1, n) != 0) {
        size_t k = 0;
        while (got[k] == ref.data[1 + k])
            k++;
        fail_msg("segments differ at byte %zu: got ...%.120s... want ...%.120s...", k,
                 got + (k > 60 ? k - 60 : 0), ref.data + 1 + (k > 60 ? k - 60 : 0));
    }
    assert_memory_equal(got + n, ",\"processes\":[", 14);
    buf_free(&ref);
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
     * (a block of the heap, jsonw.h). */
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

/* A process as the generic writer writes it (json.c's before). */
static void ref_process(struct jsonw *w, const struct model *m, const struct mproc *mp)
{
    const struct proc *p = model_proc(m, mp);
    const struct scan_node *n = &m->scan->node;
    char state[2] = {p->state, '\0'};
    jw_obj(w, NULL);
    jw_i64(w, "pid", p->pid);
    jw_i64(w, "ppid", p->ppid);
    jw_str(w, "state", state);
    jw_str(w, "comm", p->comm);
    jw_str(w, "cmdline", p->cmdline);
    jw_u64(w, "uid", p->uid);
    jw_name(w, "role", proc_role_name(mp->role));
    jw_i64_or_null(w, "group", mp->group != 0, mp->group);
    jw_u64(w, "rss_anon_bytes", p->rss_anon);
    jw_u64(w, "shm_bytes", mp->shm_bytes);
    jw_u64(w, "segments", mp->nsegments);
    jw_i64(w, "pgid", p->pgid);
    jw_i64(w, "nspid", p->nspid);
    jw_u64(w, "start_ticks", p->start_ticks);
    jw_str(w, "container", mp->ctr < n->nctrs ? n->ctrs[mp->ctr].info.id : NULL);
    jw_obj_end(w);
}

/* The processes likewise: hostile command names and lines (none, long,
 * every byte escaped), odd states, every role and one beyond, in a
 * container with a hostile id or in none, numbers at their extremes. */
static void test_processes_as_generic(void **state)
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

    struct buf ref;
    buf_init(&ref);
    struct jsonw w;
    jw_init(&w, &ref);
    jw_obj(&w, NULL);
    jw_arr(&w, "processes");
    for (size_t i = 0; i < f->m.nprocs; i++)
        ref_process(&w, &f->m, &f->m.procs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    s->node.ctrs = NULL;
    s->node.nctrs = 0;

    const char *got = strstr(f->out.data, ",\"processes\":[");
    assert_non_null(got);
    got++;
    size_t len = ref.len - 2;
    assert_true(strlen(got) > len);
    if (memcmp(got, ref.data + 1, len) != 0) {
        size_t k = 0;
        while (got[k] == ref.data[1 + k])
            k++;
        fail_msg("processes differ at byte %zu: got ...%.120s... want ...%.120s...", k,
                 got + (k > 60 ? k - 60 : 0), ref.data + 1 + (k > 60 ? k - 60 : 0));
    }
    assert_memory_equal(got + len, ",\"groups\":[", 11);
    assert_non_null(strstr(got, "\"state\":\"\\\\\",\"comm\":\"w\\\"\\\\\\n\\ufffd3\""));
    assert_non_null(strstr(got, "\"state\":\"\\\"\",\"comm\":\"python3\""));
    assert_non_null(strstr(got, "\"state\":\"\",\"comm\":\"w\\\"\\\\\\n\\ufffd5\""));
    assert_non_null(strstr(got, "\"cmdline\":null,"));
    assert_non_null(strstr(got, ",\"container\":\"c\\\"1\\n\"}"));
    buf_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_segments_as_generic, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hostile_text, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_segment_text, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_segments_streamed, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_processes_as_generic, setup, fake_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
