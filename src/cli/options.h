/* The command line of the snapshot and dashboard modes (doc/shmwatch.1,
 * OPTIONS), and what the subcommands share with them. */
#ifndef SHMWATCH_OPTIONS_H
#define SHMWATCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum run_mode { MODE_DASHBOARD, MODE_ONCE, MODE_JSON, MODE_PROMETHEUS, MODE_HELP, MODE_VERSION };

struct options {
    enum run_mode mode;
    double interval;        /* seconds between snapshots (streams) or scans (dashboard) */
    bool interval_set;
    long long count;        /* snapshots to print; 0 = forever */
    bool count_set;
    const char **mounts;    /* --mount, repeatable */
    size_t nmounts;
    pid_t pid;              /* --pid: watch this process's namespaces */
    bool all;               /* --all: the node view, every mount namespace's shm */
    const char *config;
    const char *theme;
    const char *prometheus_file;
    const char *log_file;
    bool no_color, ascii, read_only, demo;
    bool trust_pids;              /* --trust-pids */
    const char *orphan_min_age;   /* --orphan-min-age, as given */
};

/* Parses argv; returns 0, or 2 with a one-line message in err (malloc'd). */
int options_parse(int argc, char **argv, struct options *o, char **err);
void options_free(struct options *o);
/* The --help text. */
const char *options_usage(void);

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

/* A subcommand's usage error: "shmwatch CMD: MESSAGE (see shmwatch CMD
 * --help)" on stderr. Returns 2, the exit status. */
__attribute__((format(printf, 2, 3))) int usage_error(const char *cmd, const char *fmt, ...);

#endif
