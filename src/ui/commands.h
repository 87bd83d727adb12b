/* What the keys do: one function per command, each taking the key code
 * that called it (so one command can serve several keys). keys.c binds
 * them to keys in its table. */
#ifndef SHMWATCH_UI_COMMANDS_H
#define SHMWATCH_UI_COMMANDS_H

struct ui;

/* Moving: rows or page lines, screens, the ends, the mouse, tree branches. */
void cmd_line(struct ui *u, int code);
void cmd_screen(struct ui *u, int code);
void cmd_ends(struct ui *u, int code);
void cmd_mouse(struct ui *u, int code);
void cmd_collapse(struct ui *u, int code);
void cmd_expand(struct ui *u, int code);
void cmd_expand_all(struct ui *u, int code);
/* Views, sorting, filter, pages. */
void cmd_tree(struct ui *u, int code);
void cmd_procs(struct ui *u, int code);
void cmd_next_view(struct ui *u, int code);
void cmd_sort(struct ui *u, int code);
void cmd_invert(struct ui *u, int code);
void cmd_filter(struct ui *u, int code);
void cmd_escape(struct ui *u, int code);
void cmd_details(struct ui *u, int code);
void cmd_budget(struct ui *u, int code);
void cmd_node(struct ui *u, int code);
void cmd_help(struct ui *u, int code);
void cmd_close(struct ui *u, int code);
void cmd_redraw(struct ui *u, int code);
/* Data, marks, actions (ui/actions.h), quitting. */
void cmd_pause(struct ui *u, int code);
void cmd_rescan(struct ui *u, int code);
void cmd_mark(struct ui *u, int code);
void cmd_unmark(struct ui *u, int code);
void cmd_action(struct ui *u, int code);
void cmd_log(struct ui *u, int code);
void cmd_quit(struct ui *u, int code);
/* A replay's moves (ui/replay.c): a snapshot ([ ]), an event ({ }), a time (g). */
void cmd_replay_step(struct ui *u, int code);
void cmd_replay_event(struct ui *u, int code);
void cmd_replay_goto(struct ui *u, int code);
/* The filter prompt: a typed character, Backspace, Enter. */
void cmd_filter_type(struct ui *u, int code);
void cmd_filter_erase(struct ui *u, int code);
void cmd_filter_done(struct ui *u, int code);

#endif
