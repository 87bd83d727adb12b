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

/* A menu: Up / Down move, Enter picks, 1-9 pick directly, Esc and q cancel.
 * Returns the index picked, or -1. */
int dialog_menu(struct ui *u, const char *title, const char *const *items, size_t n, int initial);

#endif
