/* The page viewer and the help page. The help page is generated from the
 * key table (keys.c), so it lists every key there is. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ui/page.h"
#include "ui/term.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/xalloc.h"

static void push(struct page *p, int role, const char *s, size_t n)
{
    struct page_line *l = VEC_PUSH(p->lines, p->n, p->cap);
    l->text = xstrndup(s, n);
    l->role = role;
}

/* Breaks text into lines of at most p->width columns, at the last space
 * that fits, or in a word longer than a line between two characters or
 * escapes. */
static void wrap(struct page *p, int role, int indent, const char *text)
{
    int width = p->width > indent + 8 ? p->width : indent + 8;
    struct buf line;
    buf_init(&line);
    const char *s = text;
    int lead = 0; /* the first line keeps its own spaces; the others are indented */
    do {
        buf_reset(&line);
        for (int i = 0; i < lead; i++)
            buf_addc(&line, ' ');
        int col = lead;
        size_t start = line.len;
        const char *cut = NULL; /* after the last space that fits */
        size_t cut_len = 0;
        const char *q = s;
        while (*q) {
            wchar_t wc;
            int w;
            size_t k = term_next_char(q, strlen(q), &wc, &w);
            if (col + w > width)
                break;
            if (*q == ' ' && line.len > start && line.data[line.len - 1] != ' ') {
                cut = q;
                cut_len = line.len;
            }
            buf_add(&line, q, k);
            col += w;
            q += k;
        }
        if (*q && cut) { /* break at the space */
            line.len = cut_len;
            line.data[line.len] = '\0';
            q = cut;
        } else if (*q) { /* in a word: between two escapes of a name (\xff) */
            size_t keep = start + esc_term_cut(line.data + start, line.len - start);
            if (keep > start) {
                q -= line.len - keep;
                line.len = keep;
                line.data[keep] = '\0';
            }
        }
        push(p, role, line.data ? line.data : "", line.len);
        s = q;
        while (*s == ' ')
            s++;
        lead = indent;
    } while (*s);
    buf_free(&line);
}

void page_add(struct page *p, int role, int indent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = str_vprintf(fmt, ap);
    va_end(ap);
    wrap(p, role, indent, text);
    free(text);
}

void page_add_name(struct page *p, int role, int indent, const char *label, const char *name)
{
    struct buf b;
    buf_init(&b);
    buf_adds(&b, label);
    term_escape_buf(&b, name ? name : "");
    wrap(p, role, indent, b.data);
    buf_free(&b);
}

void page_blank(struct page *p)
{
    push(p, THEME_normal, "", 0);
}

static void page_free(struct page *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->lines[i].text);
    free(p->lines);
}

/* --- Help ------------------------------------------------------------------ */

static void help_page(struct page *p)
{
    snprintf(p->title, sizeof(p->title), "Help: every key");
    page_add(p, THEME_normal, 0,
             "shmwatch shows who fills POSIX shared memory (/dev/shm): each mount's fill, "
             "each segment with its holders and state, PyTorch DataLoader groups (main -> "
             "workers -> shm managers) and the memory budget.");
    page_blank(p);
    page_add(p, THEME_normal, 2,
             "States: in_use = named and held; hidden = unlinked but still held (invisible "
             "to ls, still filling the mount); orphan = held by nobody and its creator is "
             "dead (safe to remove); unheld = held by nobody, owner unknown.");
    keys_help_lines(p);
}

/* --- Viewer ---------------------------------------------------------------- */

void page_draw(struct ui *u)
{
    struct page p = {.width = COLS - 1};
    switch (u->page) {
    case PAGE_HELP:
        help_page(&p);
        break;
    case PAGE_BUDGET:
        info_budget(u, &p);
        break;
    case PAGE_DETAILS:
        info_details(u, &p);
        break;
    case PAGE_EVENTS:
        evlog_page(u, &p);
        break;
    default:
        break;
    }
    int body = LINES - 2; /* ui_draw shows a page on 5 lines or more */
    if (u->page_scroll > (int)p.n - body)
        u->page_scroll = (int)p.n - body;
    if (u->page_scroll < 0)
        u->page_scroll = 0;

    attr_t title = term_attr(THEME_title);
    term_fill(0, 0, COLS, title);
    term_put(0, 1, COLS - 1, p.title, title, true);
    for (int i = 0; i < body && (size_t)(u->page_scroll + i) < p.n; i++) {
        const struct page_line *l = &p.lines[u->page_scroll + i];
        term_put(1 + i, 0, COLS, l->text, term_attr(l->role), true);
    }
    const struct glyphs *g = term_glyphs();
    char foot[160];
    int last = u->page_scroll + body < (int)p.n ? u->page_scroll + body : (int)p.n;
    snprintf(foot, sizeof(foot), " %d-%d of %zu  %s%s PgUp PgDn Home End: scroll  q Esc: close",
             p.n ? u->page_scroll + 1 : 0, last, p.n, g->up, g->down);
    attr_t st = term_attr(THEME_status);
    term_fill(LINES - 1, 0, COLS, st);
    term_put(LINES - 1, 0, COLS, foot, st, true);
    page_free(&p);
}
