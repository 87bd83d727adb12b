/* The dashboard: the only part of shmwatch that talks to a terminal. */
#ifndef SHMWATCH_UI_H
#define SHMWATCH_UI_H

#include <stdbool.h>
#include <sys/types.h>

struct config;

/* What the command line says to the dashboard beyond the settings: the
 * caller (main) fills it from its options, so that the dashboard needs
 * nothing of the command line's code. */
struct ui_flags {
    pid_t pid;         /* --pid, 0 for none */
    bool all;          /* --all: the node view */
    bool demo;         /* --demo */
    bool mounts_given; /* --mount given at least once */
    bool theme_given;  /* --theme given: its errors name the flag */
    /* shmwatch replay: the recording's directory (NULL: the live dashboard),
     * and the time to open it at (Unix seconds; at_set false: its newest
     * snapshot). */
    const char *replay_dir;
    double replay_at;
    bool replay_at_set;
};

/* Runs the dashboard with the settings (config file and flags, as
 * cli/settings.c loads them) and the flags: loads the theme (errors: a one-line message
 * on stderr, exit 2), starts the demo scene with --demo, and draws until
 * the user quits. Returns the exit status. stdin and stdout must be a
 * terminal (main checks). With replay_dir, the dashboard shows the
 * recording there instead of scans (ui/replay.h); a recording that cannot
 * be shown is said in one line on stderr, status 1. */
int ui_main(const struct ui_flags *f, const struct config *cfg);

#endif
