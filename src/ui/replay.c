/* The dashboard on a recording (ui/replay.h): the store's index, one
 * snapshot read back at a time, and the replay's keys. */
#include "ui/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <wctype.h>

#include "model/snapload.h"
#include "store/when.h"
#include "ui/commands.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/jsondoc.h"
#include "util/rfc3339.h"
#include "util/xalloc.h"

static bool is_snap(const struct replay *r, size_t i)
{
    return r->ix.items[i].kind == STORE_SNAPSHOT;
}

static bool is_event(const struct replay *r, size_t i)
{
    return r->ix.items[i].kind == STORE_EVENT;
}

struct snap *replay_read(const struct replay *r, size_t i, char *err, size_t n)
{
    char why[256];
    char *line = store_index_read(&r->ix, i, why, sizeof(why));
    if (!line) {
        snprintf(err, n, "%s", why);
        return NULL;
    }
    const struct store_entry *e = &r->ix.items[i];
    struct jd *doc = jd_parse(line, e->len, why, sizeof(why));
    free(line);
    char *path = str_printf("%s/%s", r->ix.dir, r->ix.files[e->file]);
    char *shown = esc_term_dup(path);
    free(path);
    if (!doc) {
        snprintf(err, n, "%s: offset %llu: %s", shown, (unsigned long long)e->offset, why);
        free(shown);
        return NULL;
    }
    struct snap *s = xcalloc(1, sizeof(*s));
    int rc = snapload_build(doc, &s->scan, &s->model, why, sizeof(why));
    jd_free(doc);
    if (rc != 0) {
        snprintf(err, n, "%s: offset %llu: %s", shown, (unsigned long long)e->offset, why);
        free(shown);
        snap_free(s);
        return NULL;
    }
    free(shown);
    return s;
}

size_t replay_next_snapshot(const struct replay *r, int dir)
{
    if (dir > 0) {
        for (size_t i = r->shown + 1; i < r->ix.n; i++)
            if (is_snap(r, i))
                return i;
    } else {
        for (size_t i = r->shown; i-- > 0;)
            if (is_snap(r, i))
                return i;
    }
    return SIZE_MAX;
}

size_t replay_next_event(const struct replay *r, int dir)
{
    if (dir > 0) {
        for (size_t i = r->pos + 1; i < r->ix.n; i++)
            if (is_event(r, i))
                return i;
    } else {
        for (size_t i = r->pos; i-- > 0;)
            if (is_event(r, i))
                return i;
    }
    return SIZE_MAX;
}

size_t replay_snapshot_for(const struct replay *r, size_t event)
{
    for (size_t i = event + 1; i < r->ix.n; i++)
        if (is_snap(r, i))
            return i;
    for (size_t i = event; i-- > 0;)
        if (is_snap(r, i))
            return i;
    return SIZE_MAX;
}

size_t replay_snapshot_at(const struct replay *r, double t)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < r->ix.n; i++) {
        if (!is_snap(r, i))
            continue;
        if (best == SIZE_MAX || r->ix.items[i].t <= t)
            best = i;
        if (r->ix.items[i].t > t)
            break;
    }
    return best;
}

static size_t ordinal_of(const struct replay *r, size_t entry)
{
    size_t k = 0;
    for (size_t i = 0; i <= entry && i < r->ix.n; i++)
        k += is_snap(r, i);
    return k;
}

void replay_time_text(const struct replay *r, size_t i, char *dst, size_t n)
{
    time_t t = whole_seconds(r->ix.items[i].t);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(dst, n, "%Y-%m-%d %H:%M:%S", &tm);
}

static void clock_text(double t, char *dst, size_t n)
{
    time_t s = whole_seconds(t);
    struct tm tm;
    localtime_r(&s, &tm);
    strftime(dst, n, "%H:%M:%S", &tm);
}

void replay_event_line(const struct replay *r, size_t i, char *dst, size_t n)
{
    const struct store_entry *e = &r->ix.items[i];
    char at[16], why[128];
    clock_text(e->t, at, sizeof(at));
    char *line = store_index_read(&r->ix, i, why, sizeof(why));
    struct jd *ev = line ? jd_parse(line, e->len, why, sizeof(why)) : NULL;
    free(line);
    if (!ev) {
        snprintf(dst, n, "%s event at %s (unreadable: %s)", e->event, at, why);
        return;
    }
    struct buf b;
    buf_init(&b);
    const char *kind = e->event;
    const char *ctr = jd_getstr(ev, "container_name", jd_getstr(ev, "container", NULL));
    if (strcmp(kind, "exit") == 0) {
        buf_printf(&b, "exit of pid %lld (%s", (long long)jd_getint(ev, "pid", 0),
                   jd_getstr(ev, "comm", "?"));
        const char *role = jd_getstr(ev, "role", NULL);
        if (role && strcmp(role, "none") != 0)
            buf_printf(&b, ", %s", role);
        if (!jd_isnull(jd_get(ev, "group")) && jd_get(ev, "group"))
            buf_printf(&b, " of %lld", (long long)jd_getint(ev, "group", 0));
        buf_printf(&b, ")");
        if (ctr)
            buf_printf(&b, " in %s", ctr);
        const char *sig = jd_getstr(ev, "signal", NULL);
        const char *cause = jd_getstr(ev, "cause", "unknown");
        if (sig)
            buf_printf(&b, ": %s%s", sig,
                       strcmp(cause, "oom_kill") == 0 ? " (OOM kill)" : "");
        else if (strcmp(cause, "exit") == 0)
            buf_printf(&b, ": exit code %lld", (long long)jd_getint(ev, "exit_code", 0));
        else
            buf_printf(&b, ": cause %s", cause);
    } else if (strcmp(kind, "oom_kill") == 0) {
        buf_printf(&b, "OOM kill in cgroup %s: %lld", jd_getstr(ev, "cgroup", "?"),
                   (long long)jd_getint(ev, "kills", 1));
        if (!jd_isnull(jd_get(ev, "victim")) && jd_get(ev, "victim"))
            buf_printf(&b, ", pid %lld (%s)", (long long)jd_getint(ev, "victim", 0),
                       jd_getstr(ev, "victim_comm", "?"));
        if (ctr)
            buf_printf(&b, " in %s", ctr);
    } else if (strcmp(kind, "segments") == 0) {
        buf_printf(&b, "segments on %s: %lld created, %lld removed", jd_getstr(ev, "mount", "?"),
                   (long long)jd_getint(ev, "created", 0), (long long)jd_getint(ev, "removed", 0));
    } else if (strcmp(kind, "mount") == 0) {
        buf_printf(&b, "mount %s %s", jd_getstr(ev, "mount", "?"), jd_getstr(ev, "change", "?"));
    } else if (strcmp(kind, "fill") == 0) {
        buf_printf(&b, "%s at %.1f%%: %s", jd_getstr(ev, "mount", "?"),
                   jd_getnum(ev, "used_pct", 0), jd_getstr(ev, "level", "?"));
    } else if (strcmp(kind, "recorder") == 0) {
        buf_printf(&b, "recorder %s: %s", jd_getstr(ev, "what", "?"), jd_getstr(ev, "detail", ""));
    } else {
        buf_printf(&b, "%s", kind);
    }
    snprintf(dst, n, "%s at %s", b.data ? b.data : kind, at);
    buf_free(&b);
    jd_free(ev);
}

int replay_open(const char *dir, bool at_set, double at, struct replay **out, struct snap **first,
                char *err, size_t n)
{
    struct replay *r = xcalloc(1, sizeof(*r));
    *out = NULL;
    *first = NULL;
    if (store_index_load(dir, 0, 0, &r->ix, err, n) != 0) {
        free(r);
        return 1;
    }
    for (size_t i = 0; i < r->ix.n; i++)
        r->nsnaps += is_snap(r, i);
    char *shown = esc_term_dup(dir);
    if (!r->nsnaps) {
        snprintf(err, n, "%s: no snapshot recorded", shown);
        free(shown);
        replay_close(r);
        return 1;
    }
    size_t firsti = SIZE_MAX, lasti = SIZE_MAX;
    for (size_t i = 0; i < r->ix.n; i++)
        if (is_snap(r, i)) {
            if (firsti == SIZE_MAX)
                firsti = i;
            lasti = i;
        }
    size_t i = lasti;
    if (at_set) {
        char from[32], to[32], want[32];
        replay_time_text(r, firsti, from, sizeof(from));
        replay_time_text(r, lasti, to, sizeof(to));
        time_t w = whole_seconds(at);
        struct tm tm;
        localtime_r(&w, &tm);
        strftime(want, sizeof(want), "%Y-%m-%d %H:%M:%S", &tm);
        /* A snapshot stands until the next one; the last one for two of
         * the recording's intervals (the gap before it; a minute when it
         * is the only one): later than that, the recording had ended. */
        size_t before = SIZE_MAX;
        for (size_t k = lasti; k-- > 0;)
            if (is_snap(r, k)) {
                before = k;
                break;
            }
        double gap = before == SIZE_MAX ? 30 : r->ix.items[lasti].t - r->ix.items[before].t;
        double end = r->ix.items[lasti].t + 2 * (gap > 1 ? gap : 1);
        if (r->ix.items[r->ix.n - 1].t > end)
            end = r->ix.items[r->ix.n - 1].t;
        if (at < r->ix.items[firsti].t || at > end) {
            snprintf(err, n, "%s: no snapshot at %s: the recording has %s to %s", shown, want,
                     from, to);
            free(shown);
            replay_close(r);
            return 1;
        }
        i = replay_snapshot_at(r, at);
    }
    free(shown);
    *first = replay_read(r, i, err, n);
    if (!*first) {
        replay_close(r);
        return 1;
    }
    r->shown = r->pos = i;
    r->ordinal = ordinal_of(r, i);
    *out = r;
    return 0;
}

void replay_close(struct replay *r)
{
    if (!r)
        return;
    store_index_free(&r->ix);
    free(r);
}

/* --- On the dashboard ------------------------------------------------------------ */

/* The gauges of s's mounts, as the poller gives them from a scan, at the
 * recorded time t. */
static void gauges_of(struct gauges *g, const struct snap *s, double t)
{
    const struct model *m = &s->model;
    gauges_free(g);
    g->t = t;
    g->n = model_nmounts(m);
    g->items = xcalloc(g->n ? g->n : 1, sizeof(*g->items));
    for (size_t i = 0; i < g->n; i++) {
        const struct shm_mount *mt = model_mount(m, i);
        struct gauge *gg = &g->items[i];
        gg->path = xstrdup(mt->path);
        gg->dev = mt->dev;
        gg->key = mt->dev ? str_printf("%u:%u", major(mt->dev), minor(mt->dev)) : xstrdup(mt->path);
        gg->ok = mt->stat_ok;
        gg->size = mt->size;
        gg->used = mt->used;
    }
}

void replay_show(struct ui *u, struct snap *s, size_t entry, bool onward)
{
    struct replay *r = u->replay;
    double t = r->ix.items[entry].t;
    /* The fill history: kept while the steps go forward one at a time (the
     * trend and sparkline then say what led here), begun again after any
     * other move. */
    if (!onward) {
        size_t cap = u->hist.capacity;
        history_free(&u->hist);
        history_init(&u->hist, cap);
    }
    gauges_of(&u->gauges, s, t);
    for (size_t i = 0; i < u->gauges.n; i++)
        if (u->gauges.items[i].ok)
            history_add(&u->hist, u->gauges.items[i].key, t, u->gauges.items[i].used,
                        u->gauges.items[i].size);
    snap_free(u->snap);
    u->snap = s;
    r->shown = entry;
    r->ordinal = ordinal_of(r, entry);
    rows_prune_marks(u);
    rows_rebuild(u);
    u->dirty = true;
}

/* Shows snapshot entry i; false (said) when it cannot be read. */
static bool go(struct ui *u, size_t i, bool onward)
{
    char err[512];
    struct snap *s = replay_read(u->replay, i, err, sizeof(err));
    if (!s) {
        ui_message(u, THEME_error, "%s", err);
        return false;
    }
    replay_show(u, s, i, onward);
    return true;
}

static bool replaying(struct ui *u)
{
    if (u->replay)
        return true;
    ui_message(u, THEME_muted, "[ ] { } g move through a recording: shmwatch replay");
    return false;
}

void cmd_replay_step(struct ui *u, int code)
{
    if (!replaying(u))
        return;
    struct replay *r = u->replay;
    int dir = code == ']' ? 1 : -1;
    size_t i = replay_next_snapshot(r, dir);
    if (i == SIZE_MAX) {
        ui_message(u, THEME_muted, "%s snapshot of the recording",
                   dir > 0 ? "the last" : "the first");
        return;
    }
    if (go(u, i, dir > 0 && r->pos == r->shown))
        r->pos = i;
}

void cmd_replay_event(struct ui *u, int code)
{
    if (!replaying(u))
        return;
    struct replay *r = u->replay;
    int dir = code == '}' ? 1 : -1;
    size_t ev = replay_next_event(r, dir);
    if (ev == SIZE_MAX) {
        ui_message(u, THEME_muted, "no %s event in the recording", dir > 0 ? "later" : "earlier");
        return;
    }
    size_t i = replay_snapshot_for(r, ev);
    if (i != r->shown && !go(u, i, false))
        return;
    r->pos = ev;
    char line[400];
    replay_event_line(r, ev, line, sizeof(line));
    bool bad = strstr(line, ": SIG") || strncmp(line, "OOM", 3) == 0;
    /* Raw: the status line escapes what it shows. */
    ui_message(u, bad ? THEME_verdict_critical : THEME_warning, "%s", line);
}

/* The go-to prompt on the last line: typed text until Enter (true) or Esc
 * (false). */
static bool prompt(struct ui *u, const char *label, char *text, size_t n)
{
    size_t len = 0;
    text[0] = '\0';
    for (;;) {
        ui_draw(u);
        char esc[160];
        term_escape(esc, sizeof(esc), text);
        int y = LINES - 1;
        term_fill(y, 0, COLS, term_attr(THEME_filter));
        int x = term_put(y, 0, COLS, label, term_attr(THEME_filter), false);
        x += term_put(y, x, COLS - x, esc, term_attr(THEME_filter), false);
        term_put(y, x, COLS - x, "_", term_attr(THEME_filter), false);
        refresh();
        int k = ui_wait_key(u);
        if (k < 0 || k == 27)
            return false;
        if (k == '\r' || k == '\n' || k == FKEY(KEY_ENTER))
            return true;
        if (k == FKEY(KEY_BACKSPACE) || k == 127 || k == 8) {
            if (len)
                text[--len] = '\0';
        } else if (k > ' ' && k < 127 && len + 1 < n) {
            text[len++] = (char)k;
            text[len] = '\0';
        }
    }
}

void cmd_replay_goto(struct ui *u, int code)
{
    (void)code;
    if (!replaying(u))
        return;
    char text[64];
    bool ok = prompt(u, "Go to (2026-12-05T03:12:07Z, 03:12[:07] today, -10m ago): ", text,
                     sizeof(text));
    u->dirty = true;
    if (!ok || !text[0])
        return;
    double t;
    if (!when_parse(text, (double)time(NULL), &t)) {
        ui_message(u, THEME_warning, "not a time: %s (RFC 3339, HH:MM[:SS] today, or -DUR ago)",
                   text);
        return;
    }
    struct replay *r = u->replay;
    size_t i = replay_snapshot_at(r, t);
    if (i != r->shown && !go(u, i, false))
        return;
    r->pos = i;
    char at[32];
    replay_time_text(r, i, at, sizeof(at));
    ui_message(u, THEME_muted, "%s: the snapshot of %s", r->ix.items[i].t > t ? "before the "
                                                                               "recording"
                                                                             : "at that time",
               at);
}
