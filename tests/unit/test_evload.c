/* Event lines read back (model/evload.c): every kind, as report_event_json
 * writes it (a stalled scan's recorder line too), reads back into the event
 * that wrote the line, byte for byte, and into the same words on the
 * dashboard; hostile names stay raw for the caller to escape; a line of no
 * known kind is refused with its reason, and missing or mistyped members
 * are "not known". */
#include <signal.h>

#include "testutil.h"
#include "model/evload.h"
#include "model/evline.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/jsondoc.h"
#include "util/xalloc.h"

/* The line of e, read back and written again: the same line. */
static void round_trip(const struct event *e)
{
    struct buf a, b;
    buf_init(&a);
    buf_init(&b);
    report_event_json(&a, e);
    char err[200];
    struct jd *doc = jd_parse(a.data, a.len, err, sizeof(err));
    assert_non_null(doc);
    struct event back;
    assert_int_equal(evload_build(doc, e->t, &back, err, sizeof(err)), 0);
    report_event_json(&b, &back);
    assert_string_equal(b.data, a.data);
    /* The words too: what the dashboard shows of it. */
    char t1[320], t2[320];
    assert_string_equal(evline_text(&back, NULL, t2, sizeof(t2)),
                        evline_text(e, NULL, t1, sizeof(t1)));
    assert_int_equal(evline_critical(&back), evline_critical(e));
    event_clear(&back);
    jd_free(doc);
    buf_free(&a);
    buf_free(&b);
}

static void test_every_kind(void **state)
{
    (void)state;
    struct event e;
    memset(&e, 0, sizeof(e));
    e.kind = EV_EXIT;
    e.t = 1780000000.25;
    e.pid = 4242;
    snprintf(e.comm, sizeof(e.comm), "pt_data_worker");
    e.role = ROLE_WORKER;
    e.group = 4240;
    e.signal = SIGBUS;
    e.cause = CAUSE_SIGBUS;
    e.container = xstrdup("0123456789abcdef");
    e.container_name = xstrdup("trainer");
    round_trip(&e);
    e.role = ROLE_MAIN;
    e.group = 0;
    e.signal = 0;
    e.has_exit_code = true;
    e.exit_code = 3;
    e.cause = CAUSE_EXIT;
    round_trip(&e);
    e.has_exit_code = false;
    e.signal = SIGKILL;
    e.core = true;
    e.cause = CAUSE_OOM_KILL;
    e.role = ROLE_SHM_MANAGER;
    round_trip(&e);
    e.signal = 0;
    e.core = false;
    e.cause = CAUSE_UNKNOWN;
    e.role = ROLE_ORPHAN_WORKER;
    round_trip(&e);
    event_clear(&e);

    e.kind = EV_OOM_KILL;
    e.t = 1780000001;
    e.cgroup = xstrdup("/docker/abc");
    e.kills = 2;
    round_trip(&e);
    e.victim = 77;
    snprintf(e.victim_comm, sizeof(e.victim_comm), "python3");
    round_trip(&e);
    event_clear(&e);

    e.kind = EV_SEGMENTS;
    e.t = 1780000002.5;
    snprintf(e.mount_id, sizeof(e.mount_id), "0:41");
    e.mount = xstrdup("/dev/shm");
    e.created = 12;
    e.removed = 9;
    e.interval_s = 10;
    round_trip(&e);
    e.kind = EV_MOUNT;
    e.appeared = true;
    round_trip(&e);
    e.appeared = false;
    round_trip(&e);
    e.kind = EV_FILL;
    e.used = 63ull << 20;
    e.size = 64ull << 20;
    e.used_pct = 98.4375;
    e.level = FILL_CRITICAL;
    round_trip(&e);
    e.level = FILL_WARN;
    round_trip(&e);
    e.level = FILL_OK;
    round_trip(&e);
    event_clear(&e);

    static const char *const whats[] = {"start", "stop", "disk_full", "events_off"};
    for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++) {
        struct event_list l = {0};
        events_recorder(&l, 1780000003, whats[i], "a sentence");
        round_trip(&l.items[0]);
        event_list_free(&l);
    }
    /* A stalled scan, with the process and fd it reads, and without. */
    struct event_list l = {0};
    events_stalled(&l, 1780000004.125, "the scan has not finished after 30 s, reading fd 4 of "
                   "pid 1234 (python3)", 30.5, 1234, 4);
    events_stalled(&l, 1780000005, "the scan has not finished after 31 s", 31, 0, -1);
    for (size_t i = 0; i < l.n; i++)
        round_trip(&l.items[i]);
    struct buf b;
    buf_init(&b);
    report_event_json(&b, &l.items[1]);
    assert_non_null(strstr(b.data, "\"what\":\"stalled\",\"detail\":\"the scan has not finished "
                                   "after 31 s\",\"stalled_s\":31,\"stalled_pid\":null,"
                                   "\"stalled_fd\":null}"));
    buf_free(&b);
    event_list_free(&l);
}

/* Names as they were: control characters, quotes (the JSON writer's escapes
 * undone), a comm cut to the kernel's 15 bytes. */
static void test_hostile_names(void **state)
{
    (void)state;
    const char *line = "{\"event\":\"exit\",\"time\":\"2026-12-05T03:12:07.250Z\",\"pid\":9,"
                       "\"comm\":\"\\u001b[31mred\\nand a long tail\",\"role\":\"holder\","
                       "\"group\":null,\"container\":\"c\\\"1\",\"container_name\":null,"
                       "\"exit_code\":null,\"signal\":\"SIGSEGV\",\"core\":true,"
                       "\"cause\":\"signal\"}";
    char err[200];
    struct jd *doc = jd_parse(line, strlen(line), err, sizeof(err));
    assert_non_null(doc);
    struct event e;
    assert_int_equal(evload_build(doc, 5, &e, err, sizeof(err)), 0);
    assert_string_equal(e.comm, "\x1b[31mred\nand a ");
    assert_string_equal(e.container, "c\"1");
    assert_null(e.container_name);
    assert_int_equal(e.signal, SIGSEGV);
    assert_true(e.core);
    assert_int_equal(e.cause, CAUSE_SIGNAL);
    assert_int_equal(e.role, ROLE_HOLDER);
    assert_true(e.t == 5);
    event_clear(&e);
    jd_free(doc);
}

/* Not an event, or one of a kind this version does not know: refused with
 * its reason; members missing or of another type are not known. */
static void test_refused_and_unknown(void **state)
{
    (void)state;
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"[1,2]", "not a JSON object"},
        {"{\"schema\":1}", "no \"event\" member: not an event"},
        {"{\"event\":7}", "no \"event\" member: not an event"},
        {"{\"event\":\"quake\",\"time\":\"x\"}", "an event of a kind not known here"},
    };
    char err[200];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct jd *doc = jd_parse(bad[i].line, strlen(bad[i].line), err, sizeof(err));
        assert_non_null(doc);
        struct event e;
        assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, bad[i].why);
        assert_null(e.container);
        jd_free(doc);
    }
    const char *odd = "{\"event\":\"exit\",\"pid\":\"42\",\"comm\":null,\"role\":\"chief\","
                      "\"exit_code\":\"1\",\"signal\":\"SIGNOPE\",\"cause\":\"gremlins\","
                      "\"group\":-3}";
    struct jd *doc = jd_parse(odd, strlen(odd), err, sizeof(err));
    assert_non_null(doc);
    struct event e;
    assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), 0);
    assert_int_equal(e.pid, 0);
    assert_string_equal(e.comm, "");
    assert_int_equal(e.role, ROLE_NONE);
    assert_int_equal(e.signal, 0);
    assert_int_equal(e.cause, CAUSE_UNKNOWN);
    assert_int_equal(e.group, 0);
    assert_false(e.has_exit_code);
    char text[320];
    evline_text(&e, NULL, text, sizeof(text));
    assert_string_equal(text, "process 0 () exited, cause unknown");
    event_clear(&e);
    jd_free(doc);
    const char *rec = "{\"event\":\"recorder\",\"what\":\"reboot\",\"detail\":\"hm\"}";
    doc = jd_parse(rec, strlen(rec), err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), 0);
    assert_null(e.what);
    assert_string_equal(evline_text(&e, NULL, text, sizeof(text)), "hm");
    event_clear(&e);
    jd_free(doc);
    rec = "{\"event\":\"recorder\"}";
    doc = jd_parse(rec, strlen(rec), err, sizeof(err));
    assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), 0);
    assert_string_equal(evline_text(&e, NULL, text, sizeof(text)), "the recorder's news");
    event_clear(&e);
    jd_free(doc);
}

/* Counts read back across the whole unsigned 64-bit range a double holds:
 * 2^63 and above too, up to the largest double below 2^64; from 2^64 on, or
 * negative, a count is not known (0), as a mistyped one is. */
static void test_counts_past_2_63(void **state)
{
    (void)state;
    static const uint64_t big[] = {1ull << 63, (1ull << 63) + (1ull << 62), 0xfffffffffffff800ull};
    struct event e;
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        memset(&e, 0, sizeof(e));
        e.kind = EV_OOM_KILL;
        e.t = 1780000001;
        e.cgroup = xstrdup("/docker/abc");
        e.kills = big[i];
        round_trip(&e);
        event_clear(&e);
        memset(&e, 0, sizeof(e));
        e.kind = EV_FILL;
        e.t = 1780000002.5;
        snprintf(e.mount_id, sizeof(e.mount_id), "0:41");
        e.mount = xstrdup("/dev/shm");
        e.created = big[i];
        e.removed = big[i];
        e.used = big[i];
        e.size = big[i];
        e.used_pct = 100;
        e.level = FILL_CRITICAL;
        round_trip(&e);
        event_clear(&e);
    }
    const char *line = "{\"event\":\"oom_kill\",\"kills\":18446744073709551616}";
    char err[200];
    struct jd *doc = jd_parse(line, strlen(line), err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), 0);
    assert_int_equal(e.kills, 0);
    event_clear(&e);
    jd_free(doc);
    line = "{\"event\":\"oom_kill\",\"kills\":-1}";
    doc = jd_parse(line, strlen(line), err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(evload_build(doc, 0, &e, err, sizeof(err)), 0);
    assert_int_equal(e.kills, 0);
    event_clear(&e);
    jd_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_refused_and_unknown),
        cmocka_unit_test(test_counts_past_2_63),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
