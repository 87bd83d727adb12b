#include "cli/options.h"
#include "cli/opttable.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/escape.h"

/* The errno of the first write to stdout that failed, else 0. */
static int output_err;

/* Flushes stdout after a write of want bytes that wrote put; false, with
 * the failure kept, when not all of it went out. Once a write has failed no
 * other is tried: the output is already incomplete. */
static bool output_done(size_t put, size_t want)
{
    if (put == want && fflush(stdout) == 0 && !ferror(stdout))
        return true;
    output_err = errno ? errno : EIO;
    return false;
}

bool output_write(const struct buf *b)
{
    if (output_err)
        return false;
    errno = 0;
    return output_done(fwrite(b->data, 1, b->len, stdout), b->len);
}

bool output_printf(const char *fmt, ...)
{
    if (output_err)
        return false;
    errno = 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n >= 0 ? output_done((size_t)n, (size_t)n) : output_done(0, 1);
}

int output_status(const char *cmd, const char *note)
{
    if (!output_err) { /* what was written otherwise (fputs, a stream) */
        errno = 0;
        output_done(0, 0);
    }
    if (!output_err || output_err == EPIPE)
        return 0;
    fprintf(stderr, "shmwatch%s%s: cannot write the output: %s%s%s\n", cmd ? " " : "",
            cmd ? cmd : "", strerror(output_err), note ? "; " : "", note ? note : "");
    return 1;
}

int usage_print(enum cli_cmd cmd)
{
    char *usage = cli_usage(cmd);
    output_printf("%s", usage);
    free(usage);
    const char *name = cli_commands[cmd].name;
    return output_status(*name ? name : NULL, NULL);
}

bool usage_parse(enum cli_cmd cmd, int argc, char **argv, struct options *o, int *status)
{
    char *err = NULL;
    *status = cli_parse(cmd, argc, argv, o, &err);
    if (*status == 0 && o->mode != MODE_HELP)
        return true;
    options_free(o);
    if (*status == 0) {
        *status = usage_print(cmd);
    } else {
        fprintf(stderr, "%s\n", err);
        free(err);
    }
    return false;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = str_vprintf(fmt, ap);
    va_end(ap);
    /* The arguments are the user's text: a newline or an escape sequence
     * must not split the line or reach the terminal. */
    char *m = esc_term_dup(msg);
    fprintf(stderr, "shmwatch %s: %s (see shmwatch %s --help)\n", cmd, m, cmd);
    free(m);
    free(msg);
    return 2;
}

/* Sets *err to the message of a broken rule; returns 2, a check's status
 * for it. */
__attribute__((format(printf, 2, 3))) static int refuse(char **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *err = str_vprintf(fmt, ap);
    va_end(ap);
    return 2;
}

/* An empty --dir, --config, --theme or --log names nothing: refused here
 * with the option's name, as the empty string would reach the file system
 * or the settings as nothing any message could name. */
static int check_empty(const struct options *o, char **err)
{
    if (o->dir && !*o->dir)
        return refuse(err, "--dir needs a directory, not an empty string");
    if (o->config && !*o->config)
        return refuse(err, "--config needs a file name, not an empty string");
    if (o->theme && !*o->theme)
        return refuse(err, "--theme needs a theme name or a file, not an empty string");
    if (o->log_file && !*o->log_file)
        return refuse(err, "--log needs a file name, not an empty string");
    return 0;
}

int options_check(struct options *o, char **err)
{
    if (o->all && o->pid)
        return refuse(err, "--all and --pid exclude each other");
    if (o->all && o->demo)
        return refuse(err, "--demo watches its own scene: it excludes --all");
    /* --once and --prometheus are one snapshot: a stream of them would be
     * concatenated texts (Prometheus's with its HELP and TYPE lines twice,
     * which is invalid). Without --interval, --count is refused below. */
    if ((o->mode == MODE_ONCE || (o->mode == MODE_PROMETHEUS && !o->prometheus_file)) &&
        o->interval_set)
        return refuse(err,
                      "--interval goes with --json, --prometheus-file and the dashboard, not "
                      "--%s (one snapshot)",
                      o->mode == MODE_ONCE ? "once" : "prometheus");
    if (o->demo && (o->mode != MODE_DASHBOARD || o->prometheus_file))
        return refuse(err,
                      "--demo opens the dashboard on its own scene: it excludes --once, --json, "
                      "--prometheus and --prometheus-file");
    if (o->record && (o->mode != MODE_DASHBOARD || o->prometheus_file))
        return refuse(err, "--record is the dashboard's; a recorder without it is shmwatch record");
    if (o->record && o->demo)
        return refuse(err, "--demo shows a scene of its own: it is not recorded (--record)");
    if (o->record_dir && !*o->record_dir)
        return refuse(err, "--record needs a directory name, not an empty string");
    if (o->prometheus_file && !*o->prometheus_file)
        return refuse(err, "--prometheus-file needs a file name, not an empty string");
    if (o->prometheus_file) {
        if (o->mode != MODE_DASHBOARD && o->mode != MODE_PROMETHEUS)
            return refuse(err, "--prometheus-file goes with Prometheus output only");
        o->mode = MODE_PROMETHEUS;
        /* The documented default: a file rewritten every 15 s, --count
         * times (or until stopped) whether --interval is given or not. */
        if (!o->interval_set)
            o->interval = 15;
        o->interval_set = true;
    }
    if (o->count_set && !o->interval_set && o->count != 1)
        return refuse(err, "--count needs --interval");
    if (o->interval_set && o->mode != MODE_DASHBOARD && !o->count_set)
        o->count = 0;
    return check_empty(o, err);
}

int options_check_act(struct options *o, char **err)
{
    if (o->all && o->pid)
        return refuse(err, "--all and --pid exclude each other");
    return check_empty(o, err);
}

int options_check_why(struct options *o, char **err)
{
    if (o->pid && o->container)
        return refuse(err, "--pid and --container exclude each other");
    if (o->container && !*o->container)
        return refuse(err, "--container needs a name, an id or a pod, not an empty string");
    return check_empty(o, err);
}

int options_check_replay(struct options *o, char **err)
{
    return check_empty(o, err);
}

void options_free(struct options *o)
{
    free(o->mounts.item);
    o->mounts.item = NULL;
    o->mounts.n = 0;
}
