#include "ui/term.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "ui/terminfo.h"
#include "util/buf.h"
#include "util/escape.h"

#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer build's LeakSanitizer hook: when setupterm or newterm fails
 * (an unknown TERM), ncurses keeps the "prescreen" it made, with no way to
 * free it, and the program exits right after its one-line error. Nothing of
 * shmwatch's own is suppressed. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:new_prescr\n";
}
/* ...and says so only when asked (LSAN_OPTIONS), not under that error. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}
#endif

static const struct glyphs utf8_glyphs = {
    .bar_full = "\u2588",
    .bar_empty = "\u2591",
    .bar_open = "[",
    .bar_close = "]",
    .bar_part = {"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589"},
    .spark = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"},
    .branch = "\u251c\u2500",
    .last = "\u2514\u2500",
    .pipe = "\u2502 ",
    .blank = "  ",
    .open = "\u25be",
    .closed = "\u25b8",
    .mark = "\u25cf",
    .ellipsis = "\u2026",
    .up = "\u2191",
    .down = "\u2193",
    .sep = "\u2502",
    .rising = "\u25b2",
};

static const struct glyphs ascii_glyphs = {
    .bar_full = "#",
    .bar_empty = ".",
    .bar_open = "[",
    .bar_close = "]",
    .bar_part = {"", ".", ".", ".", "#", "#", "#", "#"},
    .spark = {"_", ".", ":", "-", "=", "+", "*", "#"},
    .branch = "|-",
    .last = "`-",
    .pipe = "| ",
    .blank = "  ",
    .open = "-",
    .closed = "+",
    .mark = "*",
    .ellipsis = "~",
    .up = "^",
    .down = "v",
    .sep = "|",
    .rising = "+",
};

static struct {
    bool ascii;
    attr_t attr[THEME_NROLES];
    SCREEN *screen; /* while the terminal is curses' */
    int sigpipe[2];
} T = {.sigpipe = {-1, -1}};

static volatile sig_atomic_t fatal_once;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char)sig;
    if (T.sigpipe[1] >= 0) {
        ssize_t rc = write(T.sigpipe[1], &c, 1);
        (void)rc;
    }
    /* Output stopped with Ctrl-S (XOFF) holds the main loop in a write to
     * the terminal, where it would never see the quit. Flow control off
     * starts the output again (the kernel does so when IXON goes), so the
     * write ends and the loop quits; endwin then restores the terminal's
     * own settings, IXON with them. Both calls are async-signal-safe. */
    struct termios tio;
    if (sig != SIGWINCH && tcgetattr(STDOUT_FILENO, &tio) == 0 && (tio.c_iflag & IXON)) {
        tio.c_iflag &= ~(tcflag_t)IXON;
        tcsetattr(STDOUT_FILENO, TCSANOW, &tio);
    }
    errno = saved;
}

/* A crash still leaves a usable terminal behind. */
static void on_fatal(int sig)
{
    if (!fatal_once) {
        fatal_once = 1;
        if (T.screen)
            endwin();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static attr_t theme_attrs(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & THEME_ATTR_BOLD)
        r |= A_BOLD;
    if (a & THEME_ATTR_DIM)
        r |= A_DIM;
    if (a & THEME_ATTR_REVERSE)
        r |= A_REVERSE;
    if (a & THEME_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    return r;
}

static void setup_colours(const struct theme *theme, bool color)
{
    const struct theme *mono = &theme_builtin_mono;
    if (!color || !has_colors() || start_color() == ERR || COLORS < 8 ||
        COLOR_PAIRS <= THEME_NROLES) {
        for (int r = 0; r < THEME_NROLES; r++)
            T.attr[r] = theme_attrs(mono->role[r].attrs);
        return;
    }
    bool defaults = use_default_colors() == OK;
    for (int r = 0; r < THEME_NROLES; r++) {
        short fg, bg;
        unsigned attrs;
        /* theme_pick gives colours below COLORS, or -1 for the default. */
        theme_pick(&theme->role[r], COLORS, &fg, &bg, &attrs);
        if (!defaults) {
            fg = fg < 0 ? COLOR_WHITE : fg;
            bg = bg < 0 ? COLOR_BLACK : bg;
        }
        init_pair((short)(r + 1), fg, bg);
        T.attr[r] = COLOR_PAIR(r + 1) | theme_attrs(attrs);
    }
}

/* The signals the dashboard takes through its signal pipe while it runs. */
static const int caught[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa = {.sa_handler = fn, .sa_flags = flags};
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

int term_start(const struct theme *theme, bool color, bool ascii, char *err, size_t errlen)
{
    const char *cs = nl_langinfo(CODESET);
    T.ascii = ascii || !cs || strcmp(cs, "UTF-8") != 0;
    if (pipe2(T.sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    /* Installed before curses starts, so that it keeps ours. */
    for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
        install(caught[i], on_signal, 0);
    int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
        install(fatal[i], on_fatal, SA_RESETHAND);
    /* A terminal the system has no terminfo entry for, but this binary
     * carries (a container without a terminfo database): curses reads the
     * carried entry while newterm sets up, and the copy is gone after. */
    const char *term = getenv("TERM");
    struct terminfo_fallback fb;
    terminfo_fallback_begin(&fb, term, terminfo_system_has);
    T.screen = terminfo_cannot_address(term) ? NULL : newterm(NULL, stdout, stdin);
    terminfo_fallback_end(&fb);
    if (!T.screen) {
        /* TERM is the user's text: an escape sequence in it is shown, not sent. */
        char *shown = esc_term_dup(term ? term : "unset");
        snprintf(err, errlen, "cannot drive the terminal (TERM=%s)", shown);
        free(shown);
        return -1;
    }
    set_term(T.screen);
    atexit(term_stop); /* a process starts the dashboard once (ui_main) */
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    setup_colours(theme, color);
    bkgdset(' ' | T.attr[THEME_normal]);
    return 0;
}

void term_stop(void)
{
    if (T.screen) {
        SCREEN *screen = T.screen;
        T.screen = NULL; /* on_fatal leaves it alone from here */
        mousemask(0, NULL);
        curs_set(1);
        endwin();
        delscreen(screen);
    }
    if (T.sigpipe[0] >= 0) {
        for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
            signal(caught[i], caught[i] == SIGWINCH ? SIG_DFL : SIG_IGN);
        close(T.sigpipe[0]);
        close(T.sigpipe[1]);
        T.sigpipe[0] = T.sigpipe[1] = -1;
    }
}

bool term_ascii(void)
{
    return T.ascii;
}

const struct glyphs *term_glyphs(void)
{
    return T.ascii ? &ascii_glyphs : &utf8_glyphs;
}

attr_t term_attr(enum theme_role r)
{
    return (unsigned)r < THEME_NROLES ? T.attr[r] : A_NORMAL;
}

int term_signal_fd(void)
{
    return T.sigpipe[0];
}

int term_signals(void)
{
    unsigned char b[32];
    ssize_t n;
    int bits = 0;
    while ((n = read(T.sigpipe[0], b, sizeof(b))) > 0)
        for (ssize_t i = 0; i < n; i++)
            bits |= b[i] == SIGWINCH ? TERM_SIG_RESIZE : TERM_SIG_QUIT;
    return bits;
}

void term_resize(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
}

size_t term_next_char(const char *p, size_t left, wchar_t *wc, int *w)
{
    mbstate_t st = {0};
    size_t k = mbrtowc(wc, p, left, &st);
    if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
        *wc = L'?';
        k = 1;
    }
    *w = wcwidth(*wc);
    if (*w < 0) {
        *wc = L'?';
        *w = 1;
    }
    return k;
}

int term_width(const char *s)
{
    int cols = 0, w;
    wchar_t wc;
    for (size_t left = strlen(s); left;) {
        size_t k = term_next_char(s, left, &wc, &w);
        cols += w;
        s += k;
        left -= k;
    }
    return cols;
}

size_t term_fit(const char *s, int maxw)
{
    size_t n = strlen(s), len = 0;
    int cols = 0, w;
    wchar_t wc;
    while (len < n) {
        size_t k = term_next_char(s + len, n - len, &wc, &w);
        if (cols + w > maxw)
            return esc_term_cut(s, len);
        cols += w;
        len += k;
    }
    return len;
}

int term_put(int y, int x, int maxw, const char *s, attr_t a, bool ellipsis)
{
    if (maxw <= 0 || y < 0 || y >= LINES || x >= COLS)
        return 0;
    if (x + maxw > COLS)
        maxw = COLS - x;
    bool cut = term_width(s) > maxw;
    size_t len = term_fit(s, cut && ellipsis ? maxw - 1 : maxw);
    wchar_t chunk[128];
    size_t n = 0;
    int cols = 0, w;
    wchar_t wc;
    attrset(a);
    move(y, x);
    for (size_t i = 0; i < len;) {
        i += term_next_char(s + i, len - i, &wc, &w);
        chunk[n++] = wc;
        cols += w;
        if (n == sizeof(chunk) / sizeof(chunk[0])) {
            addnwstr(chunk, (int)n);
            n = 0;
        }
    }
    if (n)
        addnwstr(chunk, (int)n);
    if (cut && ellipsis)
        cols += term_put(y, x + cols, 1, term_glyphs()->ellipsis, a, false);
    return cols;
}

void term_escape_buf(struct buf *b, const char *s)
{
    esc_term(b, s, T.ascii);
}

/* The columns a prompt's label keeps when the text needs the room (all
 * of "Filter: "). */
#define PROMPT_LABEL_MIN 8

/* Writes the end of safe text s that fits in maxw columns from (y, x),
 * after an ellipsis when its start is cut. Returns the columns used. */
static int put_tail(int y, int x, int maxw, const char *s, attr_t a)
{
    int w = term_width(s), cw;
    if (w <= maxw || maxw < 1)
        return term_put(y, x, maxw, s, a, false);
    wchar_t wc;
    for (size_t left = strlen(s); left && w > maxw - 1;) {
        size_t k = term_next_char(s, left, &wc, &cw);
        w -= cw;
        s += k;
        left -= k;
    }
    int used = term_put(y, x, 1, term_glyphs()->ellipsis, a, false);
    return used + term_put(y, x + used, maxw - used, s, a, false);
}

int term_prompt(int y, const char *label, const char *text, attr_t a)
{
    struct buf b;
    buf_init(&b);
    term_escape_buf(&b, text);
    const char *shown = b.data ? b.data : "";
    int lw = term_width(label), tw = term_width(shown);
    int room = COLS - 1 - (lw < PROMPT_LABEL_MIN ? lw : PROMPT_LABEL_MIN);
    if (room < 0)
        room = 0;
    int x = term_put(y, 0, COLS - 1 - (tw < room ? tw : room), label, a, true);
    x += put_tail(y, x, COLS - 1 - x, shown, a);
    x += term_put(y, x, COLS - x, "_", a, false);
    buf_free(&b);
    return x;
}

void term_escape(char *dst, size_t n, const char *s)
{
    struct buf b;
    buf_init(&b);
    term_escape_buf(&b, s);
    const char *shown = b.data ? b.data : "";
    const char *ellipsis = term_glyphs()->ellipsis;
    size_t el = strlen(ellipsis);
    if (b.len < n || n <= el)
        snprintf(dst, n, "%s", b.len < n ? shown : "");
    else /* cut between two characters or escapes, and said so */
        snprintf(dst, n, "%.*s%s", (int)esc_term_cut(shown, n - 1 - el), shown, ellipsis);
    buf_free(&b);
}

int term_put_name(int y, int x, int maxw, const char *s, attr_t a, bool ellipsis)
{
    struct buf b;
    buf_init(&b);
    term_escape_buf(&b, s);
    int cols = term_put(y, x, maxw, b.data ? b.data : "", a, ellipsis);
    buf_free(&b);
    return cols;
}

void term_fill(int y, int x, int w, attr_t a)
{
    if (y < 0 || y >= LINES || x >= COLS)
        return;
    if (x + w > COLS)
        w = COLS - x;
    attrset(a);
    move(y, x);
    for (int i = 0; i < w; i++)
        addch(' ');
}
