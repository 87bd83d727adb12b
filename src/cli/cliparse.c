/* cli_parse and cli_usage: the command line and its --help, made from the
 * table of src/cli/opttable.c. getopt_long does the scanning (abbreviated
 * long options, clustered short ones, arguments after options), the table
 * says what each option means. */
#include "cli/opttable.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

/* getopt_long's value for a long option: its row, past every char. */
#define ROW_VAL 256

static bool takes(const struct cli_opt *r, enum cli_cmd cmd)
{
    return (r->cmds & CLI_IN(cmd)) != 0;
}

static bool has_value(const struct cli_opt *r)
{
    return r->type != CLI_FLAG && r->type != CLI_CHOICE;
}

/* The one-line message: "shmwatch[ NAME]: " tmpl, with arg (escaped: it is
 * the user's text) in place of its "%s", and the hint where to look.
 * Returns 2. */
static int say(const struct cli_command *c, bool hint, const char *tmpl, const char *arg,
               char **err)
{
    struct buf b;
    buf_init(&b);
    buf_printf(&b, "shmwatch%s%s: ", *c->name ? " " : "", c->name);
    const char *at = arg ? strstr(tmpl, "%s") : NULL;
    if (at) {
        buf_add(&b, tmpl, (size_t)(at - tmpl));
        esc_term(&b, arg, 0);
        buf_adds(&b, at + 2);
    } else {
        buf_adds(&b, tmpl);
    }
    if (hint && *c->name)
        buf_printf(&b, " (see shmwatch %s --help)", c->name);
    else if (hint)
        buf_adds(&b, " (see --help)");
    *err = buf_steal(&b);
    return 2;
}

/* say() of "--NAME: " what, the value v in place of its "%s". Returns 2. */
static int say_value(const struct cli_command *c, const struct cli_opt *r, const char *what,
                     const char *v, char **err)
{
    char *tmpl = str_printf("--%s: %s", r->name, what);
    int rc = say(c, c->value_hint, tmpl, v, err);
    free(tmpl);
    return rc;
}

/* Sets the field of r from its value v (NULL for a flag); 0, or 2 with the
 * row's message. */
static int set(const struct cli_command *c, const struct cli_opt *r, const char *v,
               struct options *o, char **err)
{
    void *f = (char *)o + r->offset;
    if (r->config_key) { /* the config layer checks it, in settings_load */
        if (has_value(r))
            *(const char **)f = v;
        else
            *(bool *)f = true;
        return 0;
    }
    bool ok = true;
    switch (r->type) {
    case CLI_FLAG:
        *(bool *)f = true;
        break;
    case CLI_CHOICE: {
        int *choice = f;
        ok = r->stop || *choice == 0 || *choice == r->value;
        if (ok)
            *choice = r->value;
        break;
    }
    case CLI_INT:
        ok = parse_int(v, (long long)r->min, (long long)r->max, f);
        break;
    case CLI_SIZE: {
        uint64_t *n = f;
        ok = parse_size(v, n);
        if (!ok && units_too_large(v)) /* the value is the fault: say so, not the form */
            return say_value(c, r, "%s is out of range (below 16777216t)", v, err);
        ok = ok && (double)*n >= r->min && (r->max == 0 || (double)*n <= r->max);
        break;
    }
    case CLI_DURATION: {
        double *s = f;
        ok = parse_duration(v, s);
        if (!ok && units_not_plain(v)) /* the form is the fault: say so, not the range */
            return say_value(c, r, "'%s' is not a plain decimal duration (such as 2, 0.5s or 10m)",
                             v, err);
        ok = ok && *s >= r->min && (r->max == 0 || *s <= r->max);
        break;
    }
    case CLI_PATH:
        ok = !v ? r->optional : !r->absolute || v[0] == '/';
        if (ok && r->repeat) {
            struct cli_list *l = f;
            l->item = xrealloc(l->item, (l->n + 1) * sizeof(*l->item));
            l->item[l->n++] = v;
        } else if (ok) {
            *(const char **)f = v;
        }
        break;
    case CLI_STRING:
        *(const char **)f = v;
        break;
    }
    if (!ok)
        return say(c, c->value_hint, r->bad, v, err);
    if (r->set_offset)
        *(bool *)((char *)o + r->set_offset) = true;
    return 0;
}

/* The row of cmd whose short name is ch, else NULL. */
static const struct cli_opt *short_row(enum cli_cmd cmd, int ch)
{
    for (size_t i = 0; i < cli_nopts; i++)
        if (cli_opts[i].short_name && cli_opts[i].short_name == ch && takes(&cli_opts[i], cmd))
            return &cli_opts[i];
    return NULL;
}

/* The long options of lo that the "--" word arg abbreviates (its name up
 * to any '='), each as "--name" in names, ", " between; how many. */
static size_t abbreviates(const struct option *lo, const char *arg, struct buf *names)
{
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    const char *p = arg + 2;
    size_t len = strcspn(p, "="), n = 0;
    for (; lo->name; lo++)
        if (strncmp(lo->name, p, len) == 0)
            buf_printf(names, "%s--%s", n++ ? ", " : "", lo->name);
    return n;
}

/* An option getopt_long did not take: one that abbreviates several is
 * ambiguous, and the message names them; any other is unknown. */
static int say_unknown(const struct cli_command *c, const struct option *lo, const char *arg,
                       char **err)
{
    struct buf names;
    buf_init(&names);
    int rc;
    if (abbreviates(lo, arg, &names) > 1) {
        char *tmpl = str_printf("option '%%s' is ambiguous: %s", names.data);
        rc = say(c, true, tmpl, arg, err);
        free(tmpl);
    } else {
        rc = say(c, true, "unknown option '%s'", arg, err);
    }
    buf_free(&names);
    return rc;
}

int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct options *o, char **err)
{
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->count = 1;
    o->dtype = "float32";
    *err = NULL;
    const struct cli_command *c = &cli_commands[cmd];

    /* The getopt tables of cmd: ':' first, so that a missing value is
     * told from an unknown option and getopt itself prints nothing. */
    struct option *longopts = xcalloc(cli_nopts + 1, sizeof(*longopts));
    char *shorts = xcalloc(2 * cli_nopts + 2, 1);
    size_t nl = 0, ns = 0;
    shorts[ns++] = ':';
    for (size_t i = 0; i < cli_nopts; i++) {
        const struct cli_opt *r = &cli_opts[i];
        if (!takes(r, cmd))
            continue;
        longopts[nl++] = (struct option){r->name,
                                         !has_value(r) ? no_argument
                                         : r->optional ? optional_argument
                                                       : required_argument,
                                         NULL, ROW_VAL + (int)i};
        if (r->short_name) {
            shorts[ns++] = r->short_name;
            if (has_value(r))
                shorts[ns++] = ':';
        }
    }

    optind = 0; /* a fresh start, also for a second parse in one process */
    opterr = 0;
    int ch, rc = 0;
    bool stopped = false;
    while (rc == 0 && !stopped && (ch = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const struct cli_opt *r = ch >= ROW_VAL ? &cli_opts[ch - ROW_VAL] : short_row(cmd, ch);
        if (ch == ':')
            rc = say(c, c->hint, "%s needs a value", argv[optind - 1], err);
        else if (!r)
            rc = say_unknown(c, longopts, argv[optind - 1], err);
        else {
            const char *v = optarg;
            /* An optional value may come as the next argument. */
            if (r->optional && !v && optind < argc && argv[optind][0] != '-')
                v = argv[optind++];
            if ((rc = set(c, r, v, o, err)) == 0)
                stopped = r->stop;
        }
    }
    free(longopts);
    free(shorts);
    if (rc || stopped)
        return rc;
    if (optind < argc)
        return say(c, true, "unexpected argument '%s'", argv[optind], err);
    if (c->check) {
        char *msg = NULL;
        if (c->check(o, &msg)) {
            say(c, c->value_hint, msg, NULL, err);
            free(msg);
            return 2;
        }
    }
    return 0;
}

/* lead, then the items of cmd's options (not --help), wrapped at width
 * under the end of lead. */
static void synopsis(struct buf *b, enum cli_cmd cmd, const char *lead, size_t width)
{
    size_t indent = strlen(lead), col = indent;
    buf_adds(b, lead);
    for (size_t i = 0; i < cli_nopts; i++) {
        const struct cli_opt *r = &cli_opts[i];
        if (!takes(r, cmd) || r->stop || (r->synopsis && !*r->synopsis))
            continue;
        struct buf item; /* "[--name METAVAR]", or the row's own */
        buf_init(&item);
        if (r->synopsis)
            buf_adds(&item, r->synopsis);
        else if (has_value(r))
            buf_printf(&item, "[--%s %s]", r->name, r->metavar);
        else
            buf_printf(&item, "[--%s]", r->name);
        if (col > indent && col + 1 + item.len > width) { /* col > indent: past the first item */
            buf_printf(b, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            buf_addc(b, ' ');
            col++;
        }
        buf_add(b, item.data, item.len);
        col += item.len;
        buf_free(&item);
    }
    buf_addc(b, '\n');
}

/* "  -n, --dry-run      check everything, remove nothing": the help from
 * the command's column, on the next line when the names reach it. */
static void option_lines(struct buf *b, const struct cli_command *c, const struct cli_opt *r)
{
    size_t start = b->len;
    if (r->short_name)
        buf_printf(b, "  -%c, ", r->short_name);
    else
        buf_adds(b, c->short_col ? "      " : "  ");
    buf_printf(b, "--%s", r->name);
    if (has_value(r))
        buf_printf(b, " %s", r->metavar);
    size_t len = b->len - start, col = (size_t)c->col;
    if (len < col)
        buf_printf(b, "%*s", (int)(col - len), "");
    else
        buf_printf(b, "\n%*s", (int)col, "");
    for (const char *p = r->help; *p; p++) {
        buf_addc(b, *p);
        if (*p == '\n')
            buf_printf(b, "%*s", (int)col, "");
    }
    buf_addc(b, '\n');
}

char *cli_usage(enum cli_cmd cmd)
{
    const struct cli_command *c = &cli_commands[cmd];
    struct buf b;
    buf_init(&b);
    if (c->head) {
        buf_adds(&b, c->head);
    } else {
        char *lead = str_printf("Usage: shmwatch %s ", c->name);
        synopsis(&b, cmd, lead, CLI_USAGE_WIDTH);
        free(lead);
    }
    if (cmd == CLI_MAIN) {
        int w = 0;
        for (int k = 0; k < CLI_NCMDS; k++)
            if (cli_commands[k].in_overview && (int)strlen(cli_commands[k].name) > w)
                w = (int)strlen(cli_commands[k].name);
        for (int k = 0; k < CLI_NCMDS; k++) {
            if (!cli_commands[k].in_overview)
                continue;
            char *lead = str_printf("       shmwatch %-*s ", w, cli_commands[k].name);
            synopsis(&b, (enum cli_cmd)k, lead, CLI_OVERVIEW_WIDTH);
            free(lead);
        }
    }
    buf_adds(&b, c->about);
    for (size_t i = 0; i < cli_nopts; i++)
        if (takes(&cli_opts[i], cmd))
            option_lines(&b, c, &cli_opts[i]);
    buf_adds(&b, c->tail);
    return buf_steal(&b);
}
