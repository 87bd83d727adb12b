/* The command line as data: every option of every command is one row of
 * cli_opts[] (src/cli/opttable.c), every command one entry of
 * cli_commands[]. cli_parse and cli_usage (src/cli/cliparse.c) make the
 * getopt tables, the checks, the error messages and the --help text from
 * them; settings_load (src/cli/settings.c) hands the rows with a config key
 * to the config layer's setter.
 *
 * Adding an option: a field in struct options (cli/options.h) and one row
 * here, placed where it is to appear in --help, with the commands that take
 * it. */
#ifndef SHMWATCH_OPTTABLE_H
#define SHMWATCH_OPTTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"

enum cli_type {
    CLI_FLAG,     /* no value: sets a bool */
    CLI_CHOICE,   /* no value: sets an enum field to .value; two different
                   * choices for one field exclude each other (.bad) */
    CLI_INT,      /* long long in [min, max] */
    CLI_SIZE,     /* uint64_t bytes ("512m", "8g") of at least min (max 0: no limit) */
    CLI_DURATION, /* double seconds ("90", "10m") in [min, max] (max 0: no limit) */
    CLI_PATH,     /* const char *; .absolute: must begin with '/' */
    CLI_STRING,   /* const char * */
};

/* The bit of a command in cli_opt.cmds. */
#define CLI_IN(cmd) (1u << (cmd))

struct cli_opt {
    const char *name; /* the long name, without "--" */
    char short_name;  /* 0: none */
    enum cli_type type;
    unsigned cmds;       /* CLI_IN(CLI_MAIN) | CLI_IN(CLI_CLEAN) ... */
    const char *metavar; /* the value's name in --help, for a type that takes one */
    const char *help;    /* its lines, split by '\n' where --help wraps them */
    size_t offset;       /* the field of struct options it sets */
    size_t set_offset;   /* a bool field set true when given; 0: none */
    double min, max;     /* CLI_INT, CLI_SIZE, CLI_DURATION */
    int value;           /* CLI_CHOICE: the value it sets */
    bool stop;           /* CLI_CHOICE: ends the parsing (--help, --version) */
    bool repeat;         /* CLI_PATH: may be given again; the field is a struct cli_list */
    bool absolute;       /* CLI_PATH */
    bool optional;       /* CLI_PATH: the value may be left out ("--record" alone);
                          * given as "--name=V" or as the next argument when
                          * that is no option */
    /* A value of the wrong form or range (a second choice, for CLI_CHOICE):
     * the message, where "%s" is the value as given. */
    const char *bad;
    /* The option in the generated "Usage:" line: NULL for "[--name
     * METAVAR]", "" to leave it out (e.g. when another row shows both as
     * "[--pid PID|--all]"). */
    const char *synopsis;
    /* A setting of the configuration (config/config_table.c): the field
     * keeps the text as given (a flag: true) and settings_load sets the key
     * with config_set, which validates it; its message goes in "%s" of
     * config_bad. */
    const char *config_key;
    const char *config_bad;
};

struct cli_command {
    const char *name; /* "clean"; "" for the main command */
    /* An unknown option or an unexpected argument is told with where to
     * look, " (see shmwatch NAME --help)" (the main command's " (see
     * --help)"); so is "--x needs a value" with hint, and so are the rows'
     * .bad messages with value_hint. */
    bool hint;
    bool value_hint;
    /* --help: head (the usage lines; NULL: made from the rows), the
     * main command's overview of the commands with in_overview, about,
     * the options from column col (short_col: with room for "-x, "),
     * tail. */
    const char *head;
    bool in_overview;
    const char *about;
    const char *tail;
    int col;
    bool short_col;
    /* Rules between options after the rows' own checks: 0, or 2 with a
     * malloc'd message for after "shmwatch[ NAME]: ". */
    int (*check)(struct options *o, char **err);
};

extern const struct cli_opt cli_opts[];
extern const size_t cli_nopts;
extern const struct cli_command cli_commands[CLI_NCMDS];

/* Width of a generated "Usage:" line, and of the overview's lines. */
#define CLI_USAGE_WIDTH 80
#define CLI_OVERVIEW_WIDTH 90

#endif
