/* Subcommands: `shmwatch NAME ...` dispatches to cmd_NAME(argc, argv) with
 * argv[0] = NAME. Each returns the process exit status. */
#ifndef SHMWATCH_SUBCOMMANDS_H
#define SHMWATCH_SUBCOMMANDS_H

int cmd_plan(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_reap(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_why(int argc, char **argv);

/* The whole program (src/main.c): what main runs. */
int shmwatch_main(int argc, char **argv);

#endif
