/* The terminal: curses set-up and teardown (also on signals and fatal
 * errors), colour roles from the theme, the glyph set (UTF-8 or ASCII), and
 * text output clipped to display columns. Untrusted text (segment names,
 * command lines) goes through term_put_name, which escapes control bytes
 * and invalid UTF-8 before anything reaches the terminal. */
#ifndef SHMWATCH_UI_TERM_H
#define SHMWATCH_UI_TERM_H

#include <stdbool.h>

#include <curses.h>

#include "config/theme.h"
#include "util/buf.h"

struct glyphs {
    const char *bar_full, *bar_empty, *bar_open, *bar_close;
    const char *bar_part[8];                  /* [k]: k eighths of a cell filled (0 unused) */
    const char *spark[8];                     /* lowest to highest */
    const char *branch, *last, *pipe, *blank; /* tree lines, 2 columns each */
    const char *open, *closed;                /* expanded / collapsed marker */
    const char *mark, *ellipsis, *up, *down, *sep, *rising;
};

/* Sets the terminal up. ascii: draw with ASCII only (also forced when the
 * locale is not UTF-8). Returns 0 or -1 with a message in err. */
int term_start(const struct theme *theme, bool color, bool ascii, char *err, size_t errlen);
/* Restores the terminal; safe to call more than once. */
void term_stop(void);

bool term_ascii(void);
const struct glyphs *term_glyphs(void);
attr_t term_attr(enum theme_role r);

/* Signals (SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT) arrive as bytes on
 * this descriptor; term_signals reads them: TERM_SIG_* bits. */
enum { TERM_SIG_RESIZE = 1, TERM_SIG_QUIT = 2 };
int term_signal_fd(void);
int term_signals(void);
/* Re-reads the window size after SIGWINCH. */
void term_resize(void);

/* Decodes the character of safe text at p (left bytes on) into *wc and its
 * columns into *w; an invalid byte counts as '?'. Returns its bytes. */
size_t term_next_char(const char *p, size_t left, wchar_t *wc, int *w);
/* Display columns of safe text (UTF-8 or ASCII). */
int term_width(const char *s);
/* The bytes of the start of safe text s that fit in maxw columns, cut
 * between two characters and outside any escape of esc_term (a cut name
 * never ends in "\x"). */
size_t term_fit(const char *s, int maxw);
/* Writes safe text at (y, x), at most maxw columns (a cut as term_fit
 * makes it); with ellipsis, text that does not fit ends in the ellipsis
 * glyph. Returns the columns used. */
int term_put(int y, int x, int maxw, const char *s, attr_t a, bool ellipsis);
/* The same for untrusted bytes: escaped first (util/escape.h). */
int term_put_name(int y, int x, int maxw, const char *s, attr_t a, bool ellipsis);
/* Spaces from x over w columns. */
void term_fill(int y, int x, int w, attr_t a);
/* A prompt from the start of line y: label (safe), the text typed
 * (untrusted: escaped) and a cursor "_". The end of the text and the
 * cursor always show: a label too long gives way first, then the start of
 * the text (an ellipsis before what is left). Returns the columns used. */
int term_prompt(int y, const char *label, const char *text, attr_t a);

/* Appends untrusted bytes to b as the screen shows them: esc_term, every
 * non-ASCII character escaped where the terminal cannot show UTF-8. */
void term_escape_buf(struct buf *b, const char *s);
/* Escapes untrusted bytes into dst as term_put_name shows them; text too
 * long for dst is cut between two characters or escapes and ends in the
 * ellipsis glyph. */
void term_escape(char *dst, size_t n, const char *s);

#endif
