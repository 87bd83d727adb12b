/* The top of the dashboard (title, a fill gauge per mount, the budget
 * panel) and the two status lines at the bottom (messages or the scan's
 * warnings; key hints). Every piece gives way to narrower terminals in a
 * fixed order, so nothing is ever drawn past the edge. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"
#include "report/report.h"
#include "ui/replay.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/clock.h"
#include "util/rfc3339.h"
#include "util/units.h"
#include "util/xalloc.h"

#define RATE_WINDOW_S 10.0  /* fill rate: slope over this many seconds */
#define TTF_WINDOW_S 30.0   /* time-to-full: a steadier, longer window, while the rate rises */
#define TTF_MIN_RATE 4096.0 /* bytes/s below which a window says "not rising" */
#define SPARK_MAX 30
#define WARN_TURN_S 4.0 /* seconds each of several scan warnings is shown */
#define BUDGET_WHO_W 20 /* columns of the budget line's container label at most */

void ui_local_time(double t, const char *fmt, char *dst, size_t n)
{
    time_t secs = whole_seconds(t);
    struct tm tm;
    localtime_r(&secs, &tm);
    strftime(dst, n, fmt, &tm);
}

/* Short sizes for narrow spaces: "64M", "1.5G", "512K". */
static const char *dash_size(char *dst, size_t n, uint64_t bytes)
{
    static const char units[] = "BKMGTPE";
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) - 1) {
        v /= 1024.0;
        u++;
    }
    snprintf(dst, n, v >= 100.0 || v == floor(v) ? "%.0f%c" : "%.1f%c", v, units[u]);
    return dst;
}

/* --- Title --------------------------------------------------------------- */

static void draw_title(struct ui *u)
{
    const struct glyphs *g = term_glyphs();
    char line[1024];
    int len = 0;
#define ADD(...) len += snprintf(line + len, sizeof(line) - (size_t)len, __VA_ARGS__)
    ADD(" shmwatch %s", SHMWATCH_VERSION);
    if (u->set->flags.demo)
        ADD("  DEMO");
    if (u->set->flags.all)
        ADD("  %s", u->node ? "node view" : "own view");
    pid_t watched = u->set->flags.pid;
    if (u->replay && u->snap)
        watched = model_target_pid(&u->snap->model); /* a recording of --pid */
    if (watched) {
        ADD("  pid %d", (int)watched);
        const char *target_host = u->snap ? model_target_host(&u->snap->model) : NULL;
        if (target_host) {
            char host[80];
            term_escape(host, sizeof(host), target_host);
            ADD(" (%s)", host);
        }
        if (u->target_gone)
            ADD(" EXITED");
    }
    ADD("  %s %s  sort %s%s", g->sep, config_view_names[u->view], config_sort_names[u->sort],
        sort_arrow(u));
    if (u->filter[0]) {
        char esc[4 * sizeof(u->filter)]; /* \xNN at most for each byte */
        term_escape(esc, sizeof(esc), u->filter);
        ADD("  filter \"%s\"", esc);
    }
    if (u->marked.n)
        ADD("  %zu marked", u->marked.n);
    if (u->paused)
        ADD("  PAUSED");
    if (u->replay) {
        /* The recorded time, and where it is in the recording. */
        char at[32];
        replay_time_text(u->replay, u->replay->shown, at, sizeof(at));
        ADD("  %s REPLAY %s (%zu/%zu)", g->sep, at, replay_ordinal(u->replay), u->replay->nsnaps);
    } else if (u->snap) {
        char tm[16];
        ui_local_time((double)model_scan_time(&u->snap->model).tv_sec, "%H:%M:%S", tm, sizeof(tm));
        ADD("  %s scan %s (%.0f ms)", g->sep, tm, model_scan_duration(&u->snap->model) * 1000);
    } else {
        ADD("  %s scan --:--:--", g->sep);
    }
    if (u->stalled)
        ADD("  STALE");
#undef ADD
    term_fill(0, 0, COLS, term_attr(THEME_title));
    term_put(0, 0, COLS, line, term_attr(THEME_title), true);
}

/* --- Gauges ---------------------------------------------------------------- */

static void draw_bar(int y, int x, int w, double frac, attr_t fill)
{
    const struct glyphs *g = term_glyphs();
    attr_t empty = term_attr(THEME_gauge_empty);
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    /* Rounded half up by hand (the cells are never negative): lround would
     * be the program's one function from libm, and loading libm at every
     * start costs a few tenths of a millisecond (doc/performance.md). */
    int full, part = 0;
    if (term_ascii()) {
        full = (int)(frac * w + 0.5);
    } else {
        long eighths = (long)(frac * w * 8 + 0.5);
        full = (int)(eighths / 8);
        part = (int)(eighths % 8);
    }
    for (int i = 0; i < w; i++) {
        if (i < full)
            term_put(y, x + i, 1, g->bar_full, fill, false);
        else if (i == full && part)
            term_put(y, x + i, 1, g->bar_part[part], fill, false);
        else
            term_put(y, x + i, 1, g->bar_empty, empty, false);
    }
}

static void draw_spark(struct ui *u, const struct history_series *s, int y, int x, int n)
{
    const struct glyphs *g = term_glyphs();
    double cells[SPARK_MAX];
    history_sparkline(s, u->gauges.t, SPARK_CELL_S * n, cells, (size_t)n);
    for (int i = 0; i < n; i++)
        term_put(y, x + i, 1, cells[i] < 0 ? " " : g->spark[history_level(cells[i], 8)],
                 term_attr(THEME_sparkline), false);
}

/* A gauge's fill in percent, 0 when its size is unknown. */
static double gauge_pct(const struct gauge *g)
{
    struct shm_mount mt = {.size = g->size, .used = g->used};
    return g->ok ? mount_used_pct(&mt) : 0.0; /* and mount_used_pct 0 for a size of 0 */
}

/* One mount's gauge; label: what names it (NULL: its path, escaped). */
static void draw_gauge(struct ui *u, int y, const struct gauge *gg, const char *label)
{
    const struct glyphs *g = term_glyphs();
    char path[160], pct[16], sizes[40], rate[24] = "", ttf[32] = "", a[16], b[16];
    if (label)
        snprintf(path, sizeof(path), "%s", label);
    else
        term_escape(path, sizeof(path), gg->path);
    int label_max = label ? (COLS >= 100 ? 28 : COLS >= 60 ? 20 : 12) : 16;
    int path_w = term_width(path) < label_max ? term_width(path) : label_max;
    if (!gg->ok || !gg->size) {
        term_put(y, 0, COLS, path, term_attr(THEME_normal), true);
        term_put(y, path_w + 1, COLS - path_w - 1, "cannot read the size of this mount",
                 term_attr(THEME_warning), true);
        return;
    }
    double p = gauge_pct(gg);
    snprintf(pct, sizeof(pct), " %5.1f%%", p);
    snprintf(sizes, sizeof(sizes), " %s/%s", dash_size(a, sizeof(a), gg->used),
             dash_size(b, sizeof(b), gg->size));
    const struct history_series *s = history_find(&u->hist, gg->key);
    struct history_trend tr;
    history_trend(s, RATE_WINDOW_S, TTF_WINDOW_S, TTF_MIN_RATE, &tr);
    if (tr.has_rate) {
        if (fabs(tr.rate) < 1024)
            snprintf(rate, sizeof(rate), " steady");
        else
            snprintf(rate, sizeof(rate), " %s%s/s", tr.rate >= 0 ? "+" : "-",
                     dash_size(a, sizeof(a), (uint64_t)fabs(tr.rate)));
    }
    if (tr.has_ttf) {
        if (tr.ttf_s <= 0)
            snprintf(ttf, sizeof(ttf), " %s FULL", g->rising);
        else
            snprintf(ttf, sizeof(ttf), " %s full in %s", g->rising,
                     fmt_duration(a, sizeof(a), tr.ttf_s));
    }

    int avail = COLS - path_w - 1 - 2 - (int)strlen(pct);
    const int min_bar = 10;
    bool show_ttf = ttf[0] && avail - term_width(ttf) >= min_bar;
    if (show_ttf)
        avail -= term_width(ttf);
    bool show_sizes = avail - (int)strlen(sizes) >= min_bar;
    if (show_sizes)
        avail -= (int)strlen(sizes);
    bool show_rate = rate[0] && avail - (int)strlen(rate) >= min_bar;
    if (show_rate)
        avail -= (int)strlen(rate);
    int spark = (avail - 1) / 3;
    spark = spark > SPARK_MAX ? SPARK_MAX : spark;
    if (spark < 8 || !s)
        spark = 0;
    int bar = avail - (spark ? spark + 1 : 0);
    if (bar < 1)
        bar = 1;

    enum theme_role role = p >= u->set->cfg.crit_pct   ? THEME_gauge_crit
                           : p >= u->set->cfg.warn_pct ? THEME_gauge_warn
                                                       : THEME_gauge_ok;
    attr_t n = term_attr(THEME_normal);
    int x = term_put(y, 0, path_w, path, n, true) + 1;
    x += term_put(y, x, 1, g->bar_open, n, false);
    draw_bar(y, x, bar, p / 100.0, term_attr(role));
    x += bar;
    x += term_put(y, x, 1, g->bar_close, n, false);
    x += term_put(y, x, COLS - x, pct, term_attr(role), false);
    if (show_sizes)
        x += term_put(y, x, COLS - x, sizes, n, false);
    if (spark) {
        x++;
        draw_spark(u, s, y, x, spark);
        x += spark;
    }
    if (show_rate)
        x += term_put(y, x, COLS - x, rate, term_attr(THEME_muted), false);
    if (show_ttf)
        term_put(y, x, COLS - x, ttf, term_attr(role), false);
}

/* --- Budget ---------------------------------------------------------------- */

int dash_verdict_role(enum verdict v)
{
    return v == VERDICT_CRITICAL ? THEME_verdict_critical
           : v == VERDICT_WARN   ? THEME_verdict_warn
                                 : THEME_verdict_ok;
}

static void draw_budget(struct ui *u, int y, int lines)
{
    if (!u->snap) {
        term_put(y, 0, COLS,
                 u->target_gone ? "Budget: none, the process exited before the first scan"
                                : "Budget: waiting for the first scan",
                 term_attr(THEME_muted), true);
        return;
    }
    size_t mount;
    const struct budget *b = ui_budget(u, &mount);
    char v[16], line[256], l[16], ap[16], su[16], ss[16], o[16], sh[48], h[16], w[16],
        who[160] = "";
    /* who's columns on the line, cut with an ellipsis, and a space */
    int who_w = 0;
    if (ui_node(u)) { /* whose budget: the selected container's */
        ui_ctr_label(&u->snap->model, ui_selected_ctr(u), who, sizeof(who));
        who_w = term_width(who);
        who_w = (who_w > BUDGET_WHO_W ? BUDGET_WHO_W : who_w) + 1;
    }
    snprintf(v, sizeof(v), " %s ", verdict_name(b->verdict));
    for (char *c = v; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    dash_size(l, sizeof(l), b->limit);
    dash_size(ap, sizeof(ap), b->app);
    dash_size(su, sizeof(su), b->shm_used);
    dash_size(ss, sizeof(ss), b->shm_size);
    dash_size(h, sizeof(h), b->headroom);
    dash_size(w, sizeof(w), b->shm_effective);
    /* shm used/size, and what the cgroup's other shm mounts hold, which
     * the headroom counts too */
    dash_size(o, sizeof(o), b->shm_other);
    snprintf(sh, sizeof(sh), b->shm_other ? "%s/%s +%s other" : "%s/%s", su, ss, o);
    /* OOM kills: a marker while new ones are seen, the count once there are any. */
    const struct cgroup_info *cg = ui_cgroup(u);
    char oom[48] = "";
    bool oom_now = b->oom_recent > 0;
    if (oom_now)
        snprintf(oom, sizeof(oom), " OOM KILL +%llu ", (unsigned long long)b->oom_recent);
    else if (cg->present && cg->has_oom_kills && cg->oom_kills > 0)
        snprintf(oom, sizeof(oom), " oom kills %llu", (unsigned long long)cg->oom_kills);
    /* The longest form that fits: with the limit's source, without it, or
     * with short labels. */
    const char *src = b->limit_source == LIMIT_CGROUP ? "cgroup" : "MemTotal";
    int room = COLS - 7 - (int)strlen(v) - (int)strlen(oom) - who_w;
    snprintf(line, sizeof(line), " limit %s (%s)  app %s  shm %s  headroom %s  writable %s", l,
             src, ap, sh, h, w);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof(line), " limit %s app %s shm %s headroom %s writable %s", l, ap,
                 sh, h, w);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof(line), " lim %s app %s shm %s room %s free %s", l, ap, sh, h, w);
    int x = term_put(y, 0, COLS, "Budget ", term_attr(THEME_header), false);
    if (who[0]) { /* cut by columns, never inside a character */
        x += term_put(y, x, who_w - 1, who, term_attr(THEME_header), true);
        x += term_put(y, x, COLS - x, " ", term_attr(THEME_header), false);
    }
    x += term_put(y, x, COLS - x, v, term_attr(dash_verdict_role(b->verdict)), false);
    if (oom_now)
        x += term_put(y, x, COLS - x, oom, term_attr(THEME_verdict_critical), false);
    x += term_put(y, x, COLS - x, line, term_attr(THEME_normal), true);
    if (!oom_now && oom[0])
        term_put(y, x, COLS - x, oom, term_attr(THEME_warning), true);
    if (lines < 2)
        return;
    /* Advice earns the header only when something is wrong; the rest
     * (the recommendation, notes) waits on the budget page. */
    if (b->nadvice && b->verdict != VERDICT_OK)
        term_put_name(y + 1, 0, COLS, b->advice[0], term_attr(THEME_warning), true);
    else
        term_put(y + 1, 0, COLS, "No advice: the budget fits. Press b for the arithmetic.",
                 term_attr(THEME_muted), true);
}

/* The gauge of the mount whose device is dev, or NULL. */
static const struct gauge *gauge_of(const struct ui *u, dev_t dev)
{
    for (size_t i = 0; i < u->gauges.n; i++)
        if (u->gauges.items[i].dev == dev)
            return &u->gauges.items[i];
    return NULL;
}

int dash_draw_top(struct ui *u, int max_lines)
{
    draw_title(u);
    size_t nm = u->gauges.n ? u->gauges.n : 1;
    int budget = LINES >= 16 ? 2 : LINES >= 9 ? 1 : 0;
    /* The node view: a gauge per mount, as many as leave the list half
     * the screen (the most critical first). */
    size_t most = ui_node(u) ? (size_t)(LINES / 2 - 3 > 4 ? LINES / 2 - 3 : 4) : 4;
    int gauges = (int)(nm < most ? nm : most);
    while (1 + gauges + budget > max_lines && budget > 1)
        budget--;
    while (1 + gauges + budget > max_lines && gauges > 1)
        gauges--;
    while (1 + gauges + budget > max_lines && budget > 0)
        budget--;
    int events = evlog_lines(u, max_lines - 1 - gauges - budget);
    int y = 1;
    if (!u->gauges.n) {
        term_put(y, 0, COLS,
                 u->snap ? "no shm mount found (use --mount PATH)" : "reading the mounts...",
                 term_attr(u->snap ? THEME_warning : THEME_muted), true);
        y++;
    }
    /* The gauges in the order shown; with --all the snapshot's mounts in the
     * view's order, each with its reading (found by its device) and its
     * container's label (order[k] is shown[k]'s mount). */
    size_t n = 0;
    const struct gauge **shown = xmalloc(sizeof(*shown) * u->gauges.n);
    size_t *order = NULL;
    bool node = u->snap && model_node(&u->snap->model)->all && u->gauges.n;
    if (node) {
        const struct model *m = &u->snap->model;
        order = xmalloc(sizeof(*order) * model_nmounts(m));
        size_t nmounts = ui_mount_order(u, order);
        for (size_t k = 0; k < nmounts && n < u->gauges.n; k++) {
            const struct gauge *gg = gauge_of(u, model_mount(m, order[k])->dev);
            if (gg) {
                order[n] = order[k];
                shown[n++] = gg;
            }
        }
    } else {
        for (; n < u->gauges.n; n++)
            shown[n] = &u->gauges.items[n];
    }
    /* More mounts than lines: the last line counts the rest, unless only
     * one line is left (then the first, the most critical, is worth more). */
    size_t fit = n <= (size_t)gauges ? n : gauges > 1 ? (size_t)gauges - 1 : 1;
    for (size_t k = 0; k < fit; k++) {
        char label[160]; /* draw_gauge's room for it */
        if (node)
            ui_mount_label(u, order[k], label, sizeof(label));
        draw_gauge(u, y++, shown[k], node ? label : NULL);
    }
    if (fit < n && gauges > 1) {
        /* The mounts no line is left for: how many, and the fill of the
         * fullest (in the node view the least critical ones, being last in
         * its order). */
        double fullest = 0;
        for (size_t k = fit; k < n; k++)
            if (gauge_pct(shown[k]) > fullest)
                fullest = gauge_pct(shown[k]);
        char line[128];
        snprintf(line, sizeof(line),
                 "+%zu more mount%s, the fullest %.1f%%: the tree lists every one", n - fit,
                 n - fit == 1 ? "" : "s", fullest);
        term_put(y++, 0, COLS, line, term_attr(THEME_muted), true);
    }
    free(order);
    free(shown);
    if (budget)
        draw_budget(u, y, budget);
    if (events)
        evlog_draw(u, y + budget, events);
    return y + budget + events;
}

/* --- Status lines ------------------------------------------------------------ */

static void draw_hints(struct ui *u, int y)
{
    static const char *const live[][2] = {
        {"F1", "Help"}, {"n", "Node"},   {"/", "Filter"}, {"t", "Tree"},     {"p", "Procs"},
        {"s", "Sort"},  {"b", "Budget"}, {"Enter", "Info"}, {"Space", "Mark"},
        {"Z", "Pause"}, {"r", "Rescan"}, {"q", "Quit"},
    };
    static const char *const replay[][2] = {
        {"F1", "Help"}, {"[]", "Step"}, {"{}", "Event"}, {"g", "Go to"}, {"n", "Node"},
        {"/", "Filter"}, {"t", "Tree"}, {"p", "Procs"},  {"b", "Budget"}, {"Enter", "Info"},
        {"s", "Sort"},  {"q", "Quit"},
    };
    _Static_assert(sizeof(live) == sizeof(replay), "one count of hints");
    const char *const(*hints)[2] = u->replay ? replay : live;
    attr_t st = term_attr(THEME_status), key = term_attr(THEME_help_key);
    term_fill(y, 0, COLS, st);
    if (u->filtering) {
        int x = term_prompt(y, "Filter: ", u->filter, term_attr(THEME_filter));
        x += term_put(y, x, COLS - x, "  Enter", key, false);
        x += term_put(y, x, COLS - x, " keep ", st, false);
        x += term_put(y, x, COLS - x, "Esc", key, false);
        term_put(y, x, COLS - x, " clear", st, false);
        return;
    }
    /* The last hint (quit) always shows; the others as long as they fit. */
    size_t n = sizeof(live) / sizeof(live[0]);
    int x = 0, room = COLS - term_width(hints[n - 1][0]) - term_width(hints[n - 1][1]) - 1;
    for (size_t i = 0; i < n; i++) {
        int w = term_width(hints[i][0]) + term_width(hints[i][1]) + 1;
        if ((i + 1 < n && x + w > room) || (hints[i][0][0] == 'n' && !u->set->flags.all))
            continue;
        x += term_put(y, x, COLS - x, hints[i][0], key, false);
        x += term_put(y, x, COLS - x, hints[i][1], st, false);
        x += term_put(y, x, COLS - x, " ", st, false);
    }
}

bool dash_message_shown(const struct ui *u)
{
    return u->message[0] && clock_now() < u->message_until;
}

void dash_draw_status(struct ui *u, int y, int lines)
{
    bool msg = dash_message_shown(u);
    if (lines >= 2 || msg) {
        attr_t a = term_attr(THEME_muted);
        char line[512] = "";
        if (msg) {
            snprintf(line, sizeof(line), "%s", u->message);
            a = term_attr(u->message_role);
        } else if (u->target_gone) {
            /* For good: nothing newer will come. */
            char at[16];
            ui_local_time((double)u->target_gone_at, "%H:%M:%S", at, sizeof(at));
            snprintf(line, sizeof(line), "process %d %s at %s: %s", (int)u->set->flags.pid,
                     u->target_gone == SCAN_TARGET_REPLACED
                         ? "exited (its pid is now another process's)"
                         : "exited",
                     at,
                     u->snap ? "this is its last scan, no longer updated"
                             : "it exited before the first scan");
            a = term_attr(THEME_warning);
        } else if (u->stalled) {
            /* Comes before the last scan's warnings: it says they are old. */
            snprintf(line, sizeof(line),
                     "scan stalled for %ld s, %s: the figures shown are from the last "
                     "complete scan",
                     u->stalled_s, u->stalled_where);
            a = term_attr(THEME_warning);
        } else if (u->snap && model_warnings(&u->snap->model)->n) {
            /* Several warnings take turns. */
            const struct warnings *w = model_warnings(&u->snap->model);
            size_t k = (size_t)(clock_now() / WARN_TURN_S) % w->n;
            if (w->n > 1)
                snprintf(line, sizeof(line), "[%zu/%zu] %s", k + 1, w->n, w->msg[k]);
            else
                snprintf(line, sizeof(line), "%s", w->msg[0]);
            a = term_attr(THEME_warning);
        } else if (u->snap) {
            const struct totals *t = &u->snap->model.totals;
            snprintf(line, sizeof(line),
                     "segments: %zu (%zu hidden, %zu orphan, %zu unheld)  processes: %zu  "
                     "DataLoader groups: %zu",
                     t->segments, t->hidden, t->orphans, t->unheld, u->snap->model.nprocs,
                     u->snap->model.ngroups);
        }
        term_fill(y, 0, COLS, a);
        term_put_name(y, 0, COLS, line, a, true); /* warnings may quote names */
        if (lines < 2)
            return;
        y++;
    }
    draw_hints(u, y);
}
