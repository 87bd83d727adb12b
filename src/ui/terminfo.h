/* Terminals without a terminfo entry: a container image often has no
 * terminfo database at all (or none for tmux-256color), and a static binary
 * cannot rely on the one it was built with. shmwatch carries compiled
 * entries for the common terminals (ui/terminfo_data.h); when the system has
 * no entry for TERM and the binary carries one, that entry is written into a
 * new private directory (mode 0700, below $TMPDIR or /tmp), TERMINFO points
 * there while curses reads it, and both are undone right after. The system's
 * entry always wins when it has one. */
#ifndef SHMWATCH_UI_TERMINFO_H
#define SHMWATCH_UI_TERMINFO_H

#include <limits.h>
#include <stdbool.h>

#include "ui/terminfo_data.h"

struct terminfo_fallback {
    bool active;
    char dir[PATH_MAX]; /* the private directory */
    char leaf[2];       /* its one subdirectory (the name's first letter) */
    const char *name;   /* the entry written */
    char *saved;        /* TERMINFO before, or NULL when it was unset */
};

/* The carried entry for term, or NULL. */
const struct terminfo_entry *terminfo_carried(const char *term);

/* Whether the terminfo database curses reads has an entry for term (asks
 * curses itself, so TERMINFO, TERMINFO_DIRS and ~/.terminfo count). */
bool terminfo_system_has(const char *term);

/* Whether curses knows term (as terminfo_system_has) and its entry cannot
 * move the cursor (no cup: TERM=dumb, a printing terminal). curses takes
 * such a terminal and then draws nothing; shmwatch refuses it instead, as
 * it refuses a terminal curses does not know. */
bool terminfo_cannot_address(const char *term);

/* When term is carried and has(term) is false (has: terminfo_system_has, or
 * a stand-in for the tests), writes the entry and sets TERMINFO. Returns 1
 * when it did, 0 when nothing was needed, -errno when the directory could
 * not be made (curses will then say the terminal is unknown). */
int terminfo_fallback_begin(struct terminfo_fallback *f, const char *term,
                            bool (*has)(const char *term));
/* Removes the directory and restores TERMINFO; safe when nothing was done. */
void terminfo_fallback_end(struct terminfo_fallback *f);

#endif
