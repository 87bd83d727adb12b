/* The command line of the snapshot and dashboard modes (doc/shmwatch.1,
 * OPTIONS), and what the subcommands share with them. */
#ifndef SHMWATCH_OPTIONS_H
#define SHMWATCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum run_mode { MODE_DASHBOARD, MODE_ONCE, MODE_JSON, MODE_PROMETHEUS, MODE_HELP, MODE_VERSION };

/* The commands that have a command line of their own. */
enum cli_cmd { CLI_MAIN, CLI_CLEAN, CLI_REAP, CLI_PLAN, CLI_RECORD, CLI_REPLAY, CLI_WHY, CLI_NCMDS };

/* A repeatable option's values, in the order given (pointers into argv). */
struct cli_list {
    const char **item;
    size_t n;
};

/* Every command's options, filled by cli_parse (src/cli/opttable.c says
 * which field each option sets). Strings point into argv. A field whose
 * option was not given keeps its zero, or the default cli_parse gives it. */
struct options {
    enum cli_cmd cmd;   /* the command that was parsed */
    enum run_mode mode; /* MODE_HELP for --help of any command */
    /* The dashboard and the snapshots. */
    double interval; /* seconds between snapshots (streams) or scans (dashboard) */
    bool interval_set;
    long long count; /* snapshots to print; 0 = forever */
    bool count_set;
    struct cli_list mounts; /* --mount (also clean) */
    long long pid;          /* --pid: watch this process's namespaces */
    bool all;               /* --all: the node view (also clean, reap) */
    const char *config;     /* (also clean, reap) */
    const char *theme;
    const char *prometheus_file;
    const char *log_file; /* (also clean, reap) */
    bool no_color, ascii, read_only, demo;
    bool trust_pids;            /* --trust-pids (also clean) */
    const char *orphan_min_age; /* --orphan-min-age, as given (also clean) */
    /* clean and reap */
    bool dry_run, yes;
    bool all_unheld; /* clean */
    double min_age;  /* clean --min-age */
    bool min_age_set;
    double timeout; /* reap --timeout */
    bool timeout_set;
    /* plan */
    long long observe; /* --observe PID */
    long long batch_size, workers, prefetch;
    bool batch_size_set, workers_set, prefetch_set;
    const char *sample_shape;
    const char *dtype; /* default "float32" */
    bool dtype_set;
    uint64_t memory, shm_size;
    bool memory_set, shm_size_set;
    bool json; /* plan --json, why --json */
    /* record, replay and why */
    const char *dir;   /* --dir: the store (record writes it, replay and why read
                        * it; default: store_default_dir) */
    bool record;       /* the dashboard's --record [DIR] */
    const char *record_dir; /* its DIR, NULL: the default */
    /* record */
    const char *max_size; /* --max-size, as given (the setting record_max_size) */
    const char *max_age;  /* --max-age, as given (the setting record_max_age) */
    /* replay */
    const char *at;  /* --at: the time to open it at, as given */
    /* why */
    double since;          /* --since, seconds back from now */
    bool since_set;
    const char *container; /* --container NAME */
};

/* Parses the command line of cmd (argv[0] is the program or the
 * subcommand's name) by the table of src/cli/opttable.c. Returns 0, or 2
 * with *err the whole one-line message to print (malloc'd; no newline),
 * e.g. "shmwatch clean: unknown option --x (see shmwatch clean --help)".
 * --help (and --version) end the parsing at once: o->mode says which. Free
 * o with options_free whatever the result. */
int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct options *o, char **err);
/* The --help text of cmd, made from the same table (malloc'd). */
char *cli_usage(enum cli_cmd cmd);
void options_free(struct options *o);

/* The main command's rules between options, after the table's checks:
 * --prometheus-file, --count and --interval, and no empty --config, --theme
 * or --log. 0, or 2 with *err the message without its "shmwatch: "
 * (malloc'd). */
int options_check(struct options *o, char **err);
/* clean's, reap's and record's: --all and --pid exclude each other, and no
 * empty --dir, --config or --log. */
int options_check_act(struct options *o, char **err);
/* why's: --pid and --container exclude each other, and no empty --dir or
 * --config. */
int options_check_why(struct options *o, char **err);
/* replay's: no empty --dir, --config or --theme. */
int options_check_replay(struct options *o, char **err);

/* Standard output, for every mode: what is written through these goes out
 * at once (flushed), and the first failure is kept for output_status. */
struct buf;
/* Writes all of b; false when it cannot be written. */
bool output_write(const struct buf *b);
__attribute__((format(printf, 1, 2))) bool output_printf(const char *fmt, ...);
/* The exit status the output allows: 0 when all of it was written, or when
 * the reader closed the pipe (EPIPE: it has read what it wanted); else 1,
 * said in one line on stderr, "shmwatch[ CMD]: cannot write the output:
 * REASON[; NOTE]". cmd and note may be NULL. */
int output_status(const char *cmd, const char *note);

/* Prints cli_usage(cmd) on stdout; returns output_status's answer. */
int usage_print(enum cli_cmd cmd);

/* A subcommand's first step: cli_parse, then what every subcommand does
 * with --help (usage_print) or a bad command line (the one-line error on
 * stderr), o freed in both cases and *status what to return: false. True
 * when the command goes on with o (the caller frees it). */
bool usage_parse(enum cli_cmd cmd, int argc, char **argv, struct options *o, int *status);

/* A subcommand's usage error: "shmwatch CMD: MESSAGE (see shmwatch CMD
 * --help)" on stderr. Returns 2, the exit status. */
__attribute__((format(printf, 2, 3))) int usage_error(const char *cmd, const char *fmt, ...);

#endif
