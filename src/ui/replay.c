/* The dashboard on a recording (ui/replay.h): the store's index, one
 * snapshot read back at a time, and the replay's keys. */
#include "ui/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/events.h"
#include "model/evline.h"
#include "model/evload.h"
#include "model/snapload.h"
#include "store/when.h"
#include "ui/commands.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/jsondoc.h"
#include "util/xalloc.h"

static bool entry_is(const struct replay *r, size_t i, enum store_rec_kind kind)
{
    return r->ix.items[i].kind == kind;
}

/* The nearest entry of kind after entry i (dir 1) or before it (dir -1),
 * SIZE_MAX when there is none that way. Stepping back from 0 wraps k to
 * SIZE_MAX, past the end as stepping on from the last entry is. */
static size_t nearest(const struct replay *r, size_t i, int dir, enum store_rec_kind kind)
{
    for (size_t k = i + (size_t)dir; k < r->ix.n; k += (size_t)dir)
        if (entry_is(r, k, kind))
            return k;
    return SIZE_MAX;
}

/* The last snapshot at or before t, the first one when t is earlier. */
static size_t snapshot_at(const struct replay *r, double t)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < r->ix.n; i++) {
        if (!entry_is(r, i, STORE_SNAPSHOT))
            continue;
        if (best == SIZE_MAX || r->ix.items[i].t <= t)
            best = i;
        if (r->ix.items[i].t > t)
            break;
    }
    return best;
}

size_t replay_ordinal(const struct replay *r)
{
    size_t k = 0;
    for (size_t i = 0; i <= r->shown; i++)
        k += entry_is(r, i, STORE_SNAPSHOT);
    return k;
}

/* Time t as the title and the messages show it, the year in four digits
 * (strftime's %Y writes the year 5 as "5"). */
static void date_time_text(double t, char *dst, size_t n)
{
    ui_local_time(t, "%04Y-%m-%d %H:%M:%S", dst, n);
}

void replay_time_text(const struct replay *r, size_t i, char *dst, size_t n)
{
    date_time_text(r->ix.items[i].t, dst, n);
}

/* Why entry i cannot be read, after where it lies ("DIR/FILE: offset N";
 * escaped for the terminal when escaped is set), into err. */
static void say_where(const struct replay *r, size_t i, bool escaped, const char *why, char *err,
                      size_t n)
{
    const struct store_entry *e = &r->ix.items[i];
    char *place = str_printf("%s/%s: offset %llu", r->ix.dir, r->ix.files[e->file],
                             (unsigned long long)e->offset);
    char *shown = escaped ? esc_term_dup(place) : NULL;
    snprintf(err, n, "%s: %s", shown ? shown : place, why);
    free(shown);
    free(place);
}

/* Snapshot entry i read into a new snap (its scan and model), NULL with
 * the reason in err (escaped). */
static struct snap *replay_read(const struct replay *r, size_t i, char *err, size_t n)
{
    char why[256];
    char *line = store_index_read(&r->ix, i, why, sizeof(why));
    struct jd *doc = line ? jd_parse(line, r->ix.items[i].len, why, sizeof(why)) : NULL;
    free(line);
    struct snap *s = doc ? xcalloc(1, sizeof(*s)) : NULL;
    if (s && snapload_build(doc, &s->scan, &s->model, why, sizeof(why)) != 0) {
        snap_free(s);
        s = NULL;
    }
    jd_free(doc);
    if (!s)
        say_where(r, i, true, why, err, n);
    return s;
}

/* Event entry i read back into e (model/evload.h); false with the reason
 * in err (raw). */
static bool read_event(const struct replay *r, size_t i, struct event *e, char *err, size_t n)
{
    char why[256];
    char *line = store_index_read(&r->ix, i, why, sizeof(why));
    struct jd *doc = line ? jd_parse(line, r->ix.items[i].len, why, sizeof(why)) : NULL;
    free(line);
    int rc = doc ? evload_build(doc, r->ix.items[i].t, e, why, sizeof(why)) : -EINVAL;
    jd_free(doc);
    if (rc != 0)
        say_where(r, i, false, why, err, n);
    return rc == 0;
}

static const char *or_q(const char *s)
{
    return s ? s : "?";
}

/* " in CONTAINER" for an event of a container (evline_where), else nothing. */
static void in_ctr(struct buf *b, const char *ctr)
{
    if (ctr)
        buf_printf(b, " in %s", ctr);
}

/* Event e in words, without its time ("exit of pid 42 (pt_data_worker,
 * worker of 40): SIGBUS"), naming its container as the live event line
 * does ("segments on /dev/shm in trainer: 3 created, 1 removed"). */
static void event_words(struct buf *b, const struct event *e)
{
    char *ctr = evline_where(e);
    switch (e->kind) {
    case EV_EXIT: {
        buf_printf(b, "exit of pid %d (%s", (int)e->pid, e->comm);
        if (e->role != ROLE_NONE)
            buf_printf(b, ", %s", proc_role_name(e->role));
        if (e->group)
            buf_printf(b, " of %d", (int)e->group);
        buf_printf(b, ")");
        in_ctr(b, ctr);
        const char *sig = exit_signal_name(e->signal);
        if (sig)
            buf_printf(b, ": %s%s", sig, e->cause == CAUSE_OOM_KILL ? " (OOM kill)" : "");
        else if (e->cause == CAUSE_EXIT)
            buf_printf(b, ": exit code %d", e->exit_code);
        else
            buf_printf(b, ": cause %s", exit_cause_name(e->cause));
        break;
    }
    case EV_OOM_KILL:
        buf_printf(b, "OOM kill in cgroup %s: %llu", or_q(e->cgroup), (unsigned long long)e->kills);
        if (e->victim)
            buf_printf(b, ", pid %d (%s)", (int)e->victim,
                       e->victim_comm[0] ? e->victim_comm : "?");
        in_ctr(b, ctr);
        break;
    case EV_SEGMENTS:
        buf_printf(b, "segments on %s", or_q(e->mount));
        in_ctr(b, ctr);
        buf_printf(b, ": %llu created, %llu removed", (unsigned long long)e->created,
                   (unsigned long long)e->removed);
        break;
    case EV_MOUNT:
        buf_printf(b, "mount %s %s", or_q(e->mount), e->appeared ? "appeared" : "gone");
        in_ctr(b, ctr);
        break;
    case EV_FILL:
        buf_adds(b, or_q(e->mount));
        in_ctr(b, ctr);
        buf_printf(b, " at %.1f%%: %s", e->used_pct, fill_level_name(e->level));
        break;
    case EV_RECORDER:
        buf_printf(b, "recorder %s: %s", or_q(e->what), e->detail ? e->detail : "");
        break;
    }
    free(ctr);
}

/* One line about event entry i for the status line ("exit of pid 42
 * (pt_data_worker, worker of 40): SIGBUS at 03:12:07"), raw text that may
 * quote names: escape it before it reaches the terminal. True for a death:
 * an exit by a signal, or an OOM kill. */
static bool event_line(const struct replay *r, size_t i, char *dst, size_t n)
{
    bool death = false;
    const struct store_entry *se = &r->ix.items[i];
    char at[16], why[400];
    ui_local_time(se->t, "%H:%M:%S", at, sizeof(at));
    struct buf b;
    buf_init(&b);
    struct event e;
    if (read_event(r, i, &e, why, sizeof(why))) {
        event_words(&b, &e);
        buf_printf(&b, " at %s", at);
        death = (e.kind == EV_EXIT && exit_signal_name(e.signal)) || e.kind == EV_OOM_KILL;
        event_clear(&e);
    } else {
        buf_printf(&b, "%s event at %s (unreadable: %s)", se->event, at, why);
    }
    snprintf(dst, n, "%s", b.data);
    buf_free(&b);
    return death;
}

size_t replay_moment(const struct replay *r)
{
    if (entry_is(r, r->pos, STORE_EVENT))
        return r->pos;
    /* The events a scan tells follow its snapshot, with its time (to the
     * millisecond the records are written to). */
    size_t m = r->shown;
    double t = r->ix.items[m].t;
    while (m + 1 < r->ix.n && entry_is(r, m + 1, STORE_EVENT) &&
           r->ix.items[m + 1].t <= t + 0.001)
        m++;
    return m;
}

/* Event entry i into pe in the live dashboard's words. A Bus error is
 * told with the fill of its /dev/shm, as the live dashboard tells it:
 * here the snapshot before it, the last look the recorder had. */
static void tell(struct ui *u, size_t i, struct poller_event *pe)
{
    struct replay *r = u->replay;
    pe->t = r->ix.items[i].t;
    struct event e;
    char why[400];
    if (!read_event(r, i, &e, why, sizeof(why))) {
        /* Raw: the page escapes what it shows; a long path is cut. */
        snprintf(pe->text, sizeof(pe->text), "a %s event that cannot be read: %.260s",
                 r->ix.items[i].event, why);
        return;
    }
    struct snap *before = NULL;
    struct ev_state st = {0};
    const struct ev_mount *mt = NULL;
    size_t b =
        e.kind == EV_EXIT && e.cause == CAUSE_SIGBUS ? nearest(r, i, -1, STORE_SNAPSHOT) : SIZE_MAX;
    if (b != SIZE_MAX && (before = replay_read(r, b, why, sizeof(why)))) {
        ev_state_from_model(&st, &before->model, u->set->cfg.warn_pct, u->set->cfg.crit_pct);
        mt = evline_mount(&st, &e);
    }
    evline_text(&e, mt, pe->text, sizeof(pe->text));
    pe->critical = evline_critical(&e);
    ev_state_free(&st);
    snap_free(before);
    event_clear(&e);
}

/* Event entry i as the events page shows it (made once, kept in r->told). */
static const struct poller_event *told(struct ui *u, size_t i)
{
    struct replay *r = u->replay;
    if (!r->told)
        r->told = xcalloc(r->ix.n, sizeof(*r->told));
    if (!r->told[i]) {
        r->told[i] = xcalloc(1, sizeof(*r->told[i]));
        tell(u, i, r->told[i]);
    }
    return r->told[i];
}

void replay_events(struct ui *u)
{
    struct replay *r = u->replay;
    size_t m = replay_moment(r);
    /* The newest EVLOG_KEPT events up to the moment, read back from it. */
    size_t k = 0, first = m + 1;
    while (first > 0 && k < EVLOG_KEPT) {
        first--;
        k += entry_is(r, first, STORE_EVENT);
    }
    u->evlog.n = 0;
    u->dirty = true;
    for (size_t i = first; i <= m; i++)
        if (entry_is(r, i, STORE_EVENT))
            evlog_add(u, told(u, i));
}

/* The time after which the recording had ended: a snapshot stands until
 * the next one, the last one (entry last) for two of the recording's
 * intervals (the gap before it; a minute when it is the only one), or
 * until the last record when that is later. */
static double recording_end(const struct replay *r, size_t last)
{
    size_t before = nearest(r, last, -1, STORE_SNAPSHOT);
    double gap = before == SIZE_MAX ? 30 : r->ix.items[last].t - r->ix.items[before].t;
    double end = r->ix.items[last].t + 2 * (gap > 1 ? gap : 1);
    double newest = r->ix.items[r->ix.n - 1].t;
    return newest > end ? newest : end;
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
    size_t firsti = SIZE_MAX, lasti = SIZE_MAX;
    for (size_t i = 0; i < r->ix.n; i++) {
        if (!entry_is(r, i, STORE_SNAPSHOT))
            continue;
        if (firsti == SIZE_MAX)
            firsti = i;
        lasti = i;
        r->nsnaps++;
    }
    char *shown = esc_term_dup(dir);
    size_t i = at_set ? snapshot_at(r, at) : lasti;
    /* The range is said in whole seconds: a time within the second the first
     * snapshot is named by opens it (snapshot_at). */
    double from_s = r->nsnaps ? (double)(time_t)r->ix.items[firsti].t : 0;
    if (!r->nsnaps) {
        snprintf(err, n, "%s: no snapshot recorded", shown);
    } else if (at_set && (at < from_s || at > recording_end(r, lasti))) {
        char want[32], from[32], to[32];
        date_time_text(at, want, sizeof(want));
        replay_time_text(r, firsti, from, sizeof(from));
        replay_time_text(r, lasti, to, sizeof(to));
        snprintf(err, n, "%s: no snapshot at %s: the recording has %s to %s", shown, want, from,
                 to);
    } else if ((*first = replay_read(r, i, err, n))) {
        r->shown = r->pos = i;
        *out = r;
    }
    free(shown);
    if (!*out)
        replay_close(r);
    return *out ? 0 : 1;
}

void replay_close(struct replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->told && i < r->ix.n; i++)
        free(r->told[i]);
    free(r->told);
    store_index_free(&r->ix);
    free(r);
}

/* --- On the dashboard ------------------------------------------------------------ */

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
    gauges_read(&u->gauges, &s->scan.mounts, t); /* as the poller reads a scan's */
    ui_add_history(u, &u->gauges);
    r->shown = entry;
    ui_show_snap(u, s);
}

/* Shows snapshot entry i (read unless it is the one shown) with the
 * events up to entry pos; false (said) when it cannot be read. */
static bool go(struct ui *u, size_t i, size_t pos, bool onward)
{
    struct replay *r = u->replay;
    if (i != r->shown) {
        char err[512];
        struct snap *s = replay_read(r, i, err, sizeof(err));
        if (!s) {
            ui_message(u, THEME_error, "%s", err);
            return false;
        }
        replay_show(u, s, i, onward);
    }
    r->pos = pos;
    replay_events(u);
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
    size_t i = nearest(r, r->shown, dir, STORE_SNAPSHOT);
    if (i == SIZE_MAX) {
        ui_message(u, THEME_muted, "%s snapshot of the recording",
                   dir > 0 ? "the last" : "the first");
        return;
    }
    /* A snapshot that cannot be read is stepped over: go says it in the
     * status line, which keeps it while the next one that way is shown. */
    bool onward = dir > 0 && r->pos == r->shown;
    while (i != SIZE_MAX && !go(u, i, i, onward))
        i = nearest(r, i, dir, STORE_SNAPSHOT);
}

void cmd_replay_event(struct ui *u, int code)
{
    if (!replaying(u))
        return;
    struct replay *r = u->replay;
    int dir = code == '}' ? 1 : -1;
    size_t ev = nearest(r, r->pos, dir, STORE_EVENT);
    if (ev == SIZE_MAX) {
        ui_message(u, THEME_muted, "no %s event in the recording", dir > 0 ? "later" : "earlier");
        return;
    }
    /* The snapshot shown: the first one after it (the moment after), else
     * the last one before it. */
    size_t snap = nearest(r, ev, 1, STORE_SNAPSHOT);
    if (!go(u, snap != SIZE_MAX ? snap : nearest(r, ev, -1, STORE_SNAPSHOT), ev, false)) {
        /* Its snapshot cannot be read (said): the event is reached all
         * the same, beside the snapshot shown, so the next key goes on. */
        r->pos = ev;
        replay_events(u);
        return;
    }
    char line[400];
    bool death = event_line(r, ev, line, sizeof(line));
    /* Raw: the status line escapes what it shows. */
    ui_message(u, death ? THEME_verdict_critical : THEME_warning, "%s", line);
}

/* The go-to prompt on the last line: typed text until Enter (true) or Esc
 * (false). */
static bool prompt(struct ui *u, const char *label, char *text, size_t n)
{
    size_t len = 0;
    text[0] = '\0';
    for (;;) {
        ui_draw(u);
        term_fill(LINES - 1, 0, COLS, term_attr(THEME_filter));
        term_prompt(LINES - 1, label, text, term_attr(THEME_filter));
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
    bool ok =
        prompt(u, "Go to (2026-12-05T03:12:07Z, 03:12[:07] today, -10m ago): ", text, sizeof(text));
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
    size_t i = snapshot_at(r, t);
    if (!go(u, i, i, false))
        return;
    char at[32];
    replay_time_text(r, i, at, sizeof(at));
    bool after = nearest(r, i, 1, STORE_SNAPSHOT) == SIZE_MAX && t > recording_end(r, i);
    ui_message(u, THEME_muted, "%s: the snapshot of %s",
               r->ix.items[i].t > t ? "before the recording"
               : after              ? "after the recording"
                                    : "at that time",
               at);
}
