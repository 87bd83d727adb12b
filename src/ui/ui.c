/* The dashboard's main loop: waits on the keyboard, signals and the
 * poller; takes new scans and gauge readings; redraws only when something
 * changed. */
#include "ui/ui.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "demo/demo.h"
#include "live/recwrite.h"
#include "store/store.h"
#include "ui/replay.h"
#include "ui/term.h"
#include "ui/ui_priv.h"
#include "util/clock.h"
#include "util/escape.h"

#define HISTORY_S 600.0 /* fill history kept per mount */
#define MESSAGE_S 4.0   /* how long a status message stays */

void ui_message(struct ui *u, int role, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    utf8_vsnprintf(u->message, sizeof(u->message), fmt, ap);
    va_end(ap);
    u->message_role = role;
    u->message_until = clock_now() + MESSAGE_S;
    u->dirty = true;
}

const struct row *ui_current(const struct ui *u)
{
    return u->cursor < u->nrows ? &u->rows[u->cursor] : NULL;
}

void ui_cursor_to(struct ui *u, size_t index)
{
    if (!u->nrows)
        return;
    u->cursor = index < u->nrows ? index : u->nrows - 1;
    u->cursor_key = u->rows[u->cursor].key;
    u->have_cursor_key = true;
}

void ui_move_cursor(struct ui *u, long delta)
{
    long c = (long)u->cursor + delta;
    ui_cursor_to(u, c < 0 ? 0 : (size_t)c);
}

bool ui_too_small(void)
{
    return LINES < 5 || COLS < 20;
}

void ui_draw(struct ui *u)
{
    erase();
    if (ui_too_small()) {
        term_put(0, 0, COLS, "too small", term_attr(THEME_warning), true);
        if (LINES > 1) {
            char size[32];
            snprintf(size, sizeof(size), "%dx%d < 20x5", COLS, LINES);
            term_put(1, 0, COLS, size, term_attr(THEME_muted), true);
        }
    } else if (u->page) {
        page_draw(u);
    } else {
        /* Two status lines from 12 lines up; from 10 (where the key line
         * is promised) also while a message shows, which then takes a
         * line from the list rather than the key line's place. */
        int status = LINES >= 12 || (LINES >= 10 && dash_message_shown(u)) ? 2 : 1;
        int top = dash_draw_top(u, LINES - status - 3);
        list_draw(u, top, LINES - status - top);
        dash_draw_status(u, LINES - status, status);
    }
    refresh();
}

/* --- Data from the poller -------------------------------------------------------- */

void ui_add_history(struct ui *u, const struct gauges *g)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->items[i].ok)
            history_add(&u->hist, g->items[i].key, g->t, g->items[i].used, g->items[i].size);
}

void ui_show_snap(struct ui *u, struct snap *s)
{
    snap_free(u->snap);
    u->snap = s;
    rows_prune_marks(u);
    rows_rebuild(u);
    u->dirty = true;
}

static bool gauges_differ(const struct gauges *a, const struct gauges *b)
{
    if (a->n != b->n)
        return true;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].used != b->items[i].used || a->items[i].size != b->items[i].size ||
            a->items[i].ok != b->items[i].ok || strcmp(a->items[i].key, b->items[i].key))
            return true;
    return false;
}

static void intake(struct ui *u)
{
    struct gauges g = {0};
    if (poller_take_gauges(u->poller, &g)) {
        ui_add_history(u, &g);
        double tick = floor(g.t / SPARK_CELL_S);
        if (!u->paused && (gauges_differ(&g, &u->gauges) || tick != u->spark_tick)) {
            u->spark_tick = tick;
            gauges_free(&u->gauges);
            u->gauges = g;
            u->dirty = true;
        } else {
            gauges_free(&g);
        }
    }
    if (!u->target_gone)
        u->target_gone = poller_target_gone(u->poller, &u->target_gone_at);
    if (u->target_gone)
        u->dirty = true;
    struct snap *s = poller_take_snap(u->poller);
    if (s && s->oom_new) {
        /* Said at once, paused or not: the OOM killer has just ended a process. */
        const struct cgroup_info *cg = model_cgroup(&s->model);
        char path[160];
        term_escape(path, sizeof(path), cg->path ? cg->path : "?");
        ui_message(u, THEME_verdict_critical,
                   "OOM KILL: %llu new in cgroup %s (%llu in all): the memory limit was hit",
                   (unsigned long long)s->oom_new, path, (unsigned long long)cg->oom_kills);
        beep();
    } else if (s && s->oom_mount_new) {
        /* The node view: a container's cgroup, whichever row is selected. */
        const struct scan_node *node = model_node(&s->model);
        const struct node_ctr *c = node_owner(node, s->oom_mount);
        char who[128], path[160];
        ui_ctr_label(&s->model, node_owner_index(node, s->oom_mount), who, sizeof(who));
        term_escape(path, sizeof(path), c->cgroup.path ? c->cgroup.path : "?");
        ui_message(u, THEME_verdict_critical,
                   "OOM KILL: %llu new in container %s (cgroup %s, %llu in all): its memory "
                   "limit was hit",
                   (unsigned long long)s->oom_mount_new, who, path,
                   (unsigned long long)c->cgroup.oom_kills);
        beep();
    }
    if (s && (!u->paused || u->step)) {
        u->step = false;
        ui_show_snap(u, s);
    } else {
        snap_free(s);
    }
}

/* --- Input ------------------------------------------------------------------------- */

static int on_signals(struct ui *u)
{
    int bits = term_signals();
    if (bits & TERM_SIG_QUIT)
        u->quit = true;
    if (bits & TERM_SIG_RESIZE) {
        term_resize();
        u->dirty = true;
    }
    return bits;
}

/* Reads every pending key; a code, or -1 when there is none. */
static int read_key(void)
{
    wint_t wc;
    int r = get_wch(&wc);
    if (r == ERR)
        return -1;
    if (r == KEY_CODE_YES)
        return wc == KEY_RESIZE ? 0 : FKEY((int)wc);
    return (int)wc;
}

int ui_wait_key(struct ui *u)
{
    for (;;) {
        int k = read_key();
        if (k > 0)
            return k;
        struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {term_signal_fd(), POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            return -1;
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            u->quit = true;
        int bits = fds[1].revents ? on_signals(u) : 0;
        if (u->quit)
            return -1;
        if (bits & TERM_SIG_RESIZE)
            return 0; /* the dialog redraws */
    }
}

/* The watchdog's look at the scan under way, once a second: a stalled
 * scan is said, with its running time, until it ends. */
#define WATCH_MS 1000

static void watch_scan(struct ui *u)
{
    if (!u->poller)
        return; /* a replay: no scan */
    /* Not stalled: 0 and "", as the ended stall leaves them. */
    double run = 0;
    char where[sizeof(u->stalled_where)] = "";
    bool stalled = poller_stalled(u->poller, &run, where, sizeof(where));
    if (stalled != u->stalled || (long)run != u->stalled_s ||
        strcmp(where, u->stalled_where) != 0) {
        u->stalled = stalled;
        u->stalled_s = (long)run;
        memcpy(u->stalled_where, where, sizeof(where));
        u->dirty = true;
    }
}

static int timeout_ms(const struct ui *u)
{
    if (!u->message[0])
        return WATCH_MS;
    double left = u->message_until - clock_now();
    int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
    return ms < WATCH_MS ? ms : WATCH_MS;
}

static void loop(struct ui *u)
{
    while (!u->quit) {
        if (u->message[0] && clock_now() >= u->message_until) {
            u->message[0] = '\0';
            u->dirty = true;
        }
        watch_scan(u);
        if (u->dirty) {
            ui_draw(u);
            u->dirty = false;
        }
        struct pollfd fds[3] = {
            {STDIN_FILENO, POLLIN, 0},
            {term_signal_fd(), POLLIN, 0},
            {u->poller ? poller_fd(u->poller) : -1, POLLIN, 0},
        };
        if (poll(fds, u->poller ? 3 : 2, timeout_ms(u)) < 0 && errno != EINTR)
            break;
        if (fds[1].revents)
            on_signals(u);
        if (u->poller && fds[2].revents) {
            poller_drain(u->poller);
            intake(u);
            evlog_take(u);
        }
        if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            break; /* the terminal is gone */
        for (int k; !u->quit && (k = read_key()) >= 0;) {
            if (k == 0)
                u->dirty = true;
            else
                keys_handle(u, k);
        }
    }
}

/* The dashboard on the terminal until it quits; 0, or -1 with the reason
 * the terminal cannot be used on stderr after prog. */
static int on_terminal(struct ui *u, const char *prog)
{
    char err[256];
    if (term_start(&u->set->theme, u->set->cfg.color, u->set->cfg.ascii, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    loop(u);
    term_stop();
    return 0;
}

/* --record's store, opened with its header (the scans' interval, what is
 * watched) and the limits of the settings record_max_size and
 * record_max_age; 0, or 1 with the store's one line on stderr. */
static int open_store(const struct ui_settings *set, struct store **out)
{
    char dflt[4096];
    const char *dir =
        set->flags.record_dir ? set->flags.record_dir : store_default_dir(dflt, sizeof(dflt));
    if (!dir) {
        fputs("shmwatch: no directory for the store: HOME is not set; give --record DIR\n",
              stderr);
        return 1;
    }
    char *header = recwrite_header(set->cfg.scan_interval_s, set->flags.pid, set->flags.all);
    char msg[512];
    const struct store_limits lim = {
        .max_size = set->cfg.record_max_size,
        .max_age_s = set->cfg.record_max_age_s,
    };
    int rc = store_open(dir, &lim, header, out, msg, sizeof(msg));
    free(header);
    if (rc < 0) {
        fprintf(stderr, "shmwatch: --record: %s\n", msg); /* its names escaped already */
        return 1;
    }
    return 0;
}

/* A dashboard's state at its start, as the settings say. */
static void ui_init(struct ui *u, const struct ui_settings *set)
{
    memset(u, 0, sizeof(*u));
    u->set = set;
    u->view = set->cfg.view;
    u->sort = set->cfg.sort;
    u->reverse = set->cfg.sort_reverse;
    u->dirty = true;
    u->node = set->flags.all; /* --all starts in the node view; n switches */
    u->spark_tick = -1;
    history_init(&u->hist, (size_t)(HISTORY_S / set->cfg.gauge_interval_s) + 1);
}

/* What a dashboard's run holds in u, freed at its end. */
static void ui_release(struct ui *u)
{
    snap_free(u->snap);
    gauges_free(&u->gauges);
    history_free(&u->hist);
    free(u->rows);
    keyset_clear(&u->collapsed);
    keyset_clear(&u->marked);
    free(u->evlog.items);
}

/* A replay: the recording r from its first snapshot, no scan, no system
 * (nothing of the running machine is read or acted on). */
static int run_replay(const struct ui_settings *set, struct replay *r, struct snap *first)
{
    struct ui u;
    ui_init(&u, set);
    u.sys.proc = u.sys.host = u.sys.root = -1;
    u.replay = r;
    replay_show(&u, first, r->shown, false);
    replay_events(&u);
    if (r->ix.nwarnings)
        ui_message(&u, THEME_warning, "%s%s", r->ix.warnings[0],
                   r->ix.nwarnings > 1 ? " (and more damage)" : "");
    int rc = on_terminal(&u, "shmwatch replay");
    ui_release(&u);
    return rc != 0;
}

static int run(const struct ui_settings *set)
{
    struct ui u;
    ui_init(&u, set);
    struct store *store = NULL;
    int rc = 1;
    /* --pid: pinned to the process as it is now (pid and start time). */
    int e = sysroot_open_system(&u.sys, set->flags.pid);
    if (e < 0) {
        if (set->flags.pid)
            fprintf(stderr, "shmwatch: cannot watch pid %d: %s\n", (int)set->flags.pid,
                    sysroot_pid_why(set->flags.pid, e, strerror(-e)));
        else
            fprintf(stderr, "shmwatch: cannot open the system's proc: %s\n", strerror(-e));
        goto out;
    }
    /* --record: the store is taken (one recorder per directory) before the
     * terminal is, so that a refusal is one line on a plain screen. */
    if (set->flags.record && open_store(set, &store) != 0)
        goto out;
    struct poller_cfg pc = {
        .store = store,
        .scan = {.sys = &u.sys,
                 .mounts = set->mounts,
                 .nmounts = set->nmounts,
                 .all = set->flags.all},
        .set = &set->cfg,
    };
    u.poller = poller_start(&pc);
    if (!u.poller) {
        fprintf(stderr, "shmwatch: cannot start the scanner: %s\n", strerror(errno));
        goto out;
    }
    if (on_terminal(&u, "shmwatch") == 0)
        rc = 0;
    if (!poller_stop(u.poller)) {
        /* A scan still hangs (the terminal's refusal said, or the run
         * over) and uses u.sys: leave it to the exit. Every record written
         * is whole. */
        store_close(store);
        fflush(NULL);
        _exit(rc);
    }
out:
    store_close(store);
    sysroot_close(&u.sys);
    ui_release(&u);
    return rc;
}

int ui_main(const struct ui_flags *f, const struct config *cfg)
{
    setlocale(LC_CTYPE, ""); /* wide characters; numbers stay in the C locale */
    struct ui_settings set = {0};
    char *err = NULL;
    struct replay *r = NULL;
    struct snap *first = NULL; /* until run_replay takes it */
    struct demo demo;
    int rc = 2;
    if (f->replay_dir) {
        char why[512];
        if (replay_open(f->replay_dir, f->replay_at_set, f->replay_at, &r, &first, why,
                        sizeof(why)) != 0) {
            fprintf(stderr, "shmwatch replay: %s\n", why); /* names escaped in it */
            return 1;
        }
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
            fputs("shmwatch replay: the dashboard needs a terminal\n", stderr);
            goto out;
        }
    }
    if (ui_settings_load(f, cfg, &set, &err) != 0) {
        fprintf(stderr, "shmwatch: %s\n", err);
        free(err);
        goto out;
    }
    if (r) {
        /* A recording of the node view replays as one (n switches). */
        set.flags.all = model_node(&first->model)->all;
        rc = run_replay(&set, r, first);
        first = NULL;
        goto out;
    }
    if (set.flags.demo) {
        rc = demo_start(&demo, &err);
        if (rc != 0) {
            fprintf(stderr, "shmwatch: --demo: %s\n", err);
            free(err);
            rc = rc == -EPERM ? 2 : 1;
            goto out;
        }
    }
    rc = run(&set);
    if (set.flags.demo)
        demo_stop(&demo);
out:
    ui_settings_free(&set);
    snap_free(first);
    replay_close(r);
    return rc;
}
