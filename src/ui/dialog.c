#include "ui/dialog.h"

#include <stdio.h>
#include <string.h>

#include "ui/term.h"
#include "ui/ui_priv.h"

struct box {
    int y, x, h, w;
};

/* A box of n body lines centred over the dashboard, as large as fits. */
static struct box frame(const char *title, const char *const *lines, size_t n, int extra)
{
    int w = term_width(title) + 4;
    for (size_t i = 0; i < n; i++) {
        int lw = term_width(lines[i]) + 4;
        w = lw > w ? lw : w;
    }
    if (w < 30)
        w = 30;
    if (w > COLS - 2)
        w = COLS - 2 > 1 ? COLS - 2 : COLS;
    int h = (int)n + 2 + extra;
    if (h > LINES - 2)
        h = LINES - 2 > 3 ? LINES - 2 : LINES;
    struct box b = {(LINES - h) / 2, (COLS - w) / 2, h, w};
    return b;
}

/* Draws the dashboard, the box, its title and as many lines as fit;
 * returns the first free line inside the box, -1 when the screen is too
 * small to show it (only the dashboard's notice is drawn). */
static int draw_box(struct ui *u, const struct box *b, const char *title, const char *const *lines,
                    size_t n, int reserve, int first, int selected)
{
    ui_draw(u);
    if (ui_too_small())
        return -1;
    attr_t a = term_attr(THEME_dialog);
    for (int i = 0; i < b->h; i++)
        term_fill(b->y + i, b->x, b->w, a);
    term_put(b->y, b->x + 1, b->w - 2, title, term_attr(THEME_header), true);
    int room = b->h - 2 - reserve;
    for (int i = 0; i < room && (size_t)(first + i) < n; i++) {
        int y = b->y + 1 + i;
        if (selected < 0 && i == room - 1 && (size_t)(first + i + 1) < n) {
            char tail[48];
            snprintf(tail, sizeof(tail), "... and %zu more", n - (size_t)(first + i));
            term_put(y, b->x + 2, b->w - 4, tail, a, true);
            break;
        }
        attr_t la = first + i == selected ? term_attr(THEME_selected) : a;
        if (first + i == selected)
            term_fill(y, b->x + 1, b->w - 2, la);
        term_put(y, b->x + 2, b->w - 4, lines[first + i], la, true);
    }
    return b->y + b->h - 1 - reserve;
}

void dialog_buttons(int bx, int bw, struct dialog_buttons *out)
{
    /* The widest form that fits inside the box (its edge columns are
     * margins): the gap narrows first, then the labels lose their spaces. */
    static const struct {
        const char *yes, *no;
        int gap;
    } forms[] = {{"[ Yes ]", "[ No ]", 4}, {"[ Yes ]", "[ No ]", 2}, {"[Yes]", "[No]", 1}};
    int inner = bw - 2;
    size_t f = 0;
    int total = 0;
    for (;; f++) {
        total = (int)strlen(forms[f].yes) + forms[f].gap + (int)strlen(forms[f].no);
        if (total <= inner || f + 1 == sizeof(forms) / sizeof(forms[0]))
            break;
    }
    out->yes = forms[f].yes;
    out->no = forms[f].no;
    out->x_yes = bx + 1 + (inner > total ? (inner - total) / 2 : 0);
    out->x_no = out->x_yes + (int)strlen(forms[f].yes) + forms[f].gap;
    out->right = bx + bw - 1; /* the first column past the inside */
}

/* The next key for a dialog just drawn. While the screen is too small to
 * show it, every key but a cancel (Esc, q, the dashboard quitting) and a
 * resize waits for it to fit again: nothing is picked unseen. */
static int dialog_key(struct ui *u)
{
    for (;;) {
        int k = ui_wait_key(u);
        if (!ui_too_small() || k <= 0 || k == 27 || k == 'q')
            return k;
    }
}

bool dialog_confirm(struct ui *u, const char *title, const char *const *lines, size_t n)
{
    bool yes = false;
    u->dirty = true; /* the dashboard is redrawn without the box afterwards */
    for (;;) {
        struct box b = frame(title, lines, n, 1);
        int y = draw_box(u, &b, title, lines, n, 1, 0, -1);
        if (y >= 0) {
            struct dialog_buttons bt;
            dialog_buttons(b.x, b.w, &bt);
            term_put(y, bt.x_yes, bt.right - bt.x_yes, bt.yes,
                     term_attr(yes ? THEME_selected : THEME_dialog), false);
            term_put(y, bt.x_no, bt.right - bt.x_no, bt.no,
                     term_attr(yes ? THEME_dialog : THEME_selected), false);
        }
        refresh();
        switch (dialog_key(u)) {
        case 'y':
        case 'Y':
            return true;
        case -1: /* quit */
        case 'n':
        case 'N':
        case 'q':
        case 27:
            return false;
        case '\r':
        case '\n':
        case FKEY(KEY_ENTER):
            return yes;
        case '\t':
        case FKEY(KEY_LEFT):
        case FKEY(KEY_RIGHT):
        case FKEY(KEY_BTAB):
            yes = !yes;
            break;
        default:
            break;
        }
    }
}

int dialog_number_pick(const int *numbers, size_t n, const char *typed, int *highlight)
{
    size_t len = strlen(typed);
    int exact = -1, first = -1, prefixed = 0;
    for (size_t i = 0; i < n; i++) {
        char num[16];
        if (numbers[i] <= 0)
            continue;
        snprintf(num, sizeof(num), "%d", numbers[i]);
        if (strncmp(num, typed, len) != 0)
            continue;
        prefixed++;
        first = first < 0 ? (int)i : first;
        if (!num[len])
            exact = (int)i;
    }
    *highlight = exact >= 0 ? exact : first;
    /* Picked only when no longer number could still be meant ("1" waits:
     * the user may be typing 15). */
    return exact >= 0 && prefixed == 1 ? exact : -1;
}

int dialog_menu(struct ui *u, const char *title, const char *const *items, const int *numbers,
                size_t n)
{
    int sel = 0;
    char typed[8] = "";
    u->dirty = true;
    if (!n)
        return -1;
    for (;;) {
        struct box b = frame(title, items, n, 0);
        int room = b.h - 2;
        int first = sel >= room ? sel - room + 1 : 0;
        draw_box(u, &b, title, items, n, 0, first, sel);
        refresh();
        int k = dialog_key(u);
        if (k == -1 || k == 27 || k == 'q')
            return -1;
        if (k == '\r' || k == '\n' || k == FKEY(KEY_ENTER))
            return sel;
        if (numbers && k >= '0' && k <= '9') {
            size_t len = strlen(typed);
            int hl;
            typed[len] = (char)k;
            typed[len + 1] = '\0';
            int picked = dialog_number_pick(numbers, n, typed, &hl);
            if (picked >= 0)
                return picked;
            if (hl < 0 || len + 2 >= sizeof(typed))
                typed[0] = '\0'; /* a number no item prints: start again, pick nothing */
            else
                sel = hl;
            continue;
        }
        typed[0] = '\0';
        if (!numbers && k >= '1' && k <= '9' && (size_t)(k - '1') < n)
            return k - '1';
        if (k == FKEY(KEY_UP) && sel > 0)
            sel--;
        if (k == FKEY(KEY_DOWN) && (size_t)sel + 1 < n)
            sel++;
    }
}

void dialog_list(struct ui *u, const char *title, const char *const *lines, size_t n)
{
    int sel = 0;
    u->dirty = true;
    for (;;) {
        struct box b = frame(title, lines, n, 0);
        int room = b.h - 2 > 1 ? b.h - 2 : 1, last = n ? (int)n - 1 : 0;
        int first = sel >= room ? sel - room + 1 : 0;
        draw_box(u, &b, title, lines, n, 0, first, n ? sel : -1);
        refresh();
        int k = dialog_key(u);
        if (k == -1 || k == 27 || k == 'q' || k == FKEY(KEY_LEFT) || k == '\r' || k == '\n' ||
            k == FKEY(KEY_ENTER))
            return;
        if (k == FKEY(KEY_UP))
            sel--;
        else if (k == FKEY(KEY_DOWN))
            sel++;
        else if (k == FKEY(KEY_PPAGE))
            sel -= room;
        else if (k == FKEY(KEY_NPAGE))
            sel += room;
        else if (k == FKEY(KEY_HOME))
            sel = 0;
        else if (k == FKEY(KEY_END))
            sel = last;
        sel = sel < 0 ? 0 : sel > last ? last : sel;
    }
}
