/* The dashboard's events (the poller's, ui/poller.h; in a replay the
 * recording's, ui/replay.c): kept newest last, the latest shown under the
 * budget line, a worker's Bus error or an OOM kill standing out in the
 * critical colour (live, said on the status line at once), every kept one
 * listed on the events page (e). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/page.h"
#include "ui/replay.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/xalloc.h"

void evlog_add(struct ui *u, const struct poller_event *e)
{
    if (u->evlog.n == EVLOG_KEPT) {
        memmove(u->evlog.items, u->evlog.items + 1, (u->evlog.n - 1) * sizeof(*u->evlog.items));
        u->evlog.n--;
    }
    *VEC_PUSH(u->evlog.items, u->evlog.n, u->evlog.cap) = *e;
    u->dirty = true;
}

void evlog_take(struct ui *u)
{
    struct poller_event *got;
    size_t n = poller_take_events(u->poller, &got);
    for (size_t i = 0; i < n; i++) {
        evlog_add(u, &got[i]);
        /* A death that matters is said at once, paused or not. */
        if (got[i].announce) {
            ui_message(u, THEME_verdict_critical, "%s", got[i].text);
            beep();
        }
    }
    free(got);
}

int evlog_lines(const struct ui *u, int room)
{
    if (room <= 0)
        return 0;
    int want = LINES >= 30 ? 2 : 1;
    want = (size_t)want > u->evlog.n ? (int)u->evlog.n : want;
    return want < room ? want : room;
}

void evlog_draw(struct ui *u, int y, int lines)
{
    for (int k = 0; k < lines; k++) {
        const struct poller_event *e = &u->evlog.items[u->evlog.n - 1 - (size_t)k];
        char at[16];
        ui_local_time(e->t, "%H:%M:%S ", at, sizeof(at));
        attr_t a = term_attr(e->critical ? THEME_verdict_critical : THEME_muted);
        int x = term_put(y + k, 0, COLS, k ? "       " : "Events ", term_attr(THEME_header), false);
        x += term_put(y + k, x, COLS - x, at, a, false);
        x += term_put_name(y + k, x, COLS - x, e->text, a, true);
        if (!k && x < COLS)
            term_put(y + k, x, COLS - x, "  (e: every event)", term_attr(THEME_muted), true);
    }
}

void evlog_page(struct ui *u, struct page *p)
{
    if (u->replay) {
        char at[32];
        replay_time_text(u->replay, replay_moment(u->replay), at, sizeof(at));
        snprintf(p->title, sizeof(p->title), "Events recorded up to %s: %zu, newest first", at,
                 u->evlog.n);
        if (!u->evlog.n)
            page_add(p, THEME_muted, 0, "Nothing was recorded before this moment.");
        else if (u->evlog.n == EVLOG_KEPT)
            page_add(p, THEME_muted, 0, "The newest %d; [ and { move back to earlier ones.",
                     EVLOG_KEPT);
    } else {
        snprintf(p->title, sizeof(p->title), "Events: %zu, newest first", u->evlog.n);
        if (!u->evlog.n)
            page_add(p, THEME_muted, 0,
                     "No event yet: exits of the processes shown, OOM kills, segments created "
                     "and removed, mounts appearing and going, and fill levels crossed show "
                     "here as they happen.");
    }
    for (size_t i = u->evlog.n; i-- > 0;) {
        const struct poller_event *e = &u->evlog.items[i];
        char at[24];
        ui_local_time(e->t, "%H:%M:%S  ", at, sizeof(at));
        page_add_name(p, e->critical ? THEME_verdict_critical : THEME_normal, 10, at, e->text);
    }
}
