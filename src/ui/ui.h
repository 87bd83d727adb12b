/* The dashboard: the only part of shmwatch that talks to a terminal. */
#ifndef SHMWATCH_UI_H
#define SHMWATCH_UI_H

struct config;
struct options;

/* Runs the dashboard with the settings (config file and flags, as
 * cli/settings.c loads them): loads the theme (errors: a one-line message
 * on stderr, exit 2), starts the demo scene with --demo, and draws until
 * the user quits. Returns the exit status. stdin and stdout must be a
 * terminal (main checks). */
int ui_main(const struct options *o, const struct config *cfg);

#endif
