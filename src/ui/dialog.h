/* Modal dialogs over the dashboard, for the action keys: they take the
 * keyboard until answered, and follow resizes. Texts are safe text: pass
 * names through term_escape first. */
#ifndef SHMWATCH_UI_DIALOG_H
#define SHMWATCH_UI_DIALOG_H

#include <stdbool.h>
#include <stddef.h>

struct ui;

/* A box with a title, lines (e.g. the targets and their bytes) and
 * [ Yes ] [ No ], "No" selected: y / n answer at once, Left / Right / Tab
 * move, Enter picks, Esc and q say No. True for Yes. */
bool dialog_confirm(struct ui *u, const char *title, const char *const *lines, size_t n);

/* Where dialog_confirm puts its buttons on a box at column bx, bw wide:
 * inside it at every size the dashboard draws (down to 20 columns),
 * centred, the labels shorter when the box is narrow. */
struct dialog_buttons {
    const char *yes, *no;
    int x_yes, x_no;
    int right; /* the first column they may not reach */
};
void dialog_buttons(int bx, int bw, struct dialog_buttons *out);

/* A menu: Up / Down move, Enter picks, Esc and q cancel. Returns the index
 * picked, or -1. With numbers NULL, 1-9 pick directly by position.
 *
 * Else the items print numbers that are not their positions (the signal
 * menu: " 2 INT" is the third line): digits type the number read, never a
 * position. numbers[i] is the one item i prints (0: none). A number no
 * other one starts with picks at once (2, 9, 15); one that starts another
 * ("1" of 15 and 17) moves the selection to its item and waits for the
 * next digit or Enter; digits that no item prints pick nothing. */
int dialog_menu(struct ui *u, const char *title, const char *const *items, const int *numbers,
                size_t n);

/* A list to read (an action's results, the action log): Up / Down, PgUp /
 * PgDn, Home / End move through it; q, Esc, Left and Enter close it, as a
 * page closes. */
void dialog_list(struct ui *u, const char *title, const char *const *lines, size_t n);

/* The typing rule above, alone: the item the digits typed pick, or -1;
 * *highlight gets the item to select meanwhile (-1: no item's number starts
 * with typed). */
int dialog_number_pick(const int *numbers, size_t n, const char *typed, int *highlight);

#endif
