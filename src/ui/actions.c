/* The action keys. Placeholders until the cleanup engine (src/act) is
 * wired in here: each says what it will do and that it is not available
 * yet. The selection they receive is complete, so wiring needs no change
 * outside this file. */
#include "ui/actions.h"

#include "config/theme.h"
#include "ui/ui_priv.h"

static void not_yet(struct ui *u, const char *what)
{
    ui_message(u, THEME_warning, "%s is not available yet in this version", what);
}

void actions_unlink(struct ui *u, const struct ui_selection *sel)
{
    (void)sel;
    not_yet(u, "Unlinking orphans (d)");
}

void actions_unlink_orphans(struct ui *u, const struct ui_selection *sel)
{
    (void)sel;
    not_yet(u, "Unlinking every orphan (D)");
}

void actions_unlink_unheld(struct ui *u, const struct ui_selection *sel)
{
    (void)sel;
    not_yet(u, "Unlinking unheld segments (U)");
}

void actions_signal(struct ui *u, const struct ui_selection *sel)
{
    (void)sel;
    not_yet(u, "Sending signals (k)");
}

void actions_reap(struct ui *u, const struct ui_selection *sel)
{
    (void)sel;
    not_yet(u, "Reaping stuck workers (K)");
}
