/* shmwatch why: the abnormal ends of a recording, explained. Reads only the
 * window's records (and an hour before it, for the snapshot before its first
 * end) from the store's index, parses a record only when the model asks for
 * it (model/why.c), and says each damaged record once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/subcommands.h"
#include "model/why.h"
#include "report/whyreport.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/jsondoc.h"
#include "util/rfc3339.h"
#include "util/xalloc.h"

#define WHY_DEFAULT_SINCE (24.0 * 3600)
/* Records read before the window: the snapshot before an early end. */
#define WHY_CONTEXT_S 3600.0

struct why_ctx {
    struct store_index *ix;
    struct jd **docs;
    bool *tried;
    char **warnings;
    size_t nwarnings, cap;
};

static void warn_add(struct why_ctx *c, char *msg)
{
    *VEC_PUSH(c->warnings, c->nwarnings, c->cap) = msg;
}

/* A warning when the deaths found by --container NAME are of several
 * containers of that name (a Docker and a podman container may share one):
 * the text names each death's container by its name alone. */
static bool bears(const struct why_death *d, const char *name)
{
    return d->container && d->container_name && strcmp(d->container_name, name) == 0;
}

static void warn_same_name(struct why_ctx *c, const struct why_result *r, const char *name)
{
    struct buf ids;
    buf_init(&ids);
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!bears(&r->d[i], name))
            continue;
        size_t k = 0;
        while (k < i && !(bears(&r->d[k], name) && !strcmp(r->d[k].container, r->d[i].container)))
            k++;
        if (k == i) /* the first death of this container */
            buf_printf(&ids, "%s%.12s", n++ ? ", " : "", r->d[i].container);
    }
    if (n > 1)
        warn_add(c, str_printf("--container %s names %zu containers (%s): give an id to choose one",
                               name, n, ids.data));
    buf_free(&ids);
}

/* A warning when --container NAMESPACE/NAME found nothing but the name alone
 * finds ends whose records do not say their containerd namespace (written
 * by a recorder older than that field). */
static void warn_no_namespace(struct why_ctx *c, const struct why_source *src,
                              const struct why_filter *f)
{
    const char *slash = strchr(f->container, '/');
    if (!slash)
        return;
    struct why_filter name = *f;
    name.container = slash + 1;
    struct why_result r;
    why_find(src, &name, &r);
    bool unsaid = false;
    for (size_t i = 0; i < r.n && !unsaid; i++)
        unsaid = !r.d[i].container_ns_known;
    if (unsaid)
        warn_add(c, str_printf("--container %s: this recording does not say containers' "
                               "containerd namespaces; --container %s or an id finds the ends "
                               "of %s",
                               f->container, slash + 1, slash + 1));
    why_result_free(&r);
}

/* Record i parsed, once; a record that cannot be read or parsed is left
 * out. One that cannot be parsed is a warning naming its directory, file and
 * offset, as the store's own warnings do; one that cannot be read, the first
 * of its file only (a file the recorder dropped while why reads is one
 * warning). */
static const struct jd *load(void *ctx, size_t i)
{
    struct why_ctx *c = ctx;
    if (c->tried[i])
        return c->docs[i];
    c->tried[i] = true;
    const struct store_entry *e = &c->ix->items[i];
    char msg[256], *warning;
    char *line = store_index_read_once(c->ix, i, &warning);
    if (!line) {
        if (warning)
            warn_add(c, warning);
        return NULL;
    }
    struct jd *d = jd_parse(line, strlen(line), msg, sizeof(msg));
    free(line);
    if (!jd_is(d, JD_OBJ)) {
        char *shown = esc_term_dup(c->ix->dir);
        warn_add(c, str_printf("%s/%s: offset %llu: not a record (%s)", shown,
                               c->ix->files[e->file], (unsigned long long)e->offset,
                               d ? "not an object" : msg));
        free(shown);
        jd_free(d);
        return NULL;
    }
    c->docs[i] = d;
    return d;
}

/* The store's messages name the directory already escaped (util/escape.h's
 * esc_term): escaping them again would double its backslashes. Any control
 * byte that still came through is shown as '?'. */
static void say_line(const char *prefix, const char *msg)
{
    fputs(prefix, stderr);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, stderr);
    fputc('\n', stderr);
}

int cmd_why(int argc, char **argv)
{
    struct options o;
    int status;
    if (!usage_parse(CLI_WHY, argc, argv, &o, &status))
        return status;
    status = 1;
    char dbuf[4096];
    const char *dir = o.dir ? o.dir : store_default_dir(dbuf, sizeof(dbuf));
    if (!dir) {
        fprintf(stderr, "shmwatch why: no recording directory: HOME is not set; give --dir\n");
        goto out;
    }
    double now = clock_wall();
    double from = now - (o.since_set ? o.since : WHY_DEFAULT_SINCE);
    /* No record is older than year 0000; further back is too far for a
     * time_t to show. */
    if (from < RFC3339_FIRST)
        from = RFC3339_FIRST;
    struct store_index ix;
    char msg[512];
    if (store_index_load(dir, from - WHY_CONTEXT_S, 0, &ix, msg, sizeof(msg)) != 0) {
        say_line("shmwatch why: ", msg);
        goto out;
    }
    struct why_ctx c = {.ix = &ix};
    c.docs = xcalloc(ix.n, sizeof(*c.docs));
    c.tried = xcalloc(ix.n, sizeof(*c.tried));
    for (size_t i = 0; i < ix.nwarnings; i++)
        warn_add(&c, xstrdup(ix.warnings[i]));
    struct why_rec *recs = xcalloc(ix.n, sizeof(*recs));
    double to = now;
    for (size_t i = 0; i < ix.n; i++) {
        recs[i].t = ix.items[i].t;
        recs[i].snapshot = ix.items[i].kind == STORE_SNAPSHOT;
        recs[i].event = ix.items[i].event;
        if (recs[i].t > to)
            to = recs[i].t;
    }
    struct why_source src = {.recs = recs, .n = ix.n, .doc = load, .ctx = &c};
    struct why_filter f = {.from = from, .pid = o.pid, .container = o.container};
    struct why_result r;
    why_find(&src, &f, &r);
    if (o.container)
        warn_same_name(&c, &r, o.container);
    if (o.container && !r.n)
        warn_no_namespace(&c, &src, &f);

    /* Every damage once on stderr (and in the JSON's warnings). */
    for (size_t i = 0; i < c.nwarnings; i++)
        say_line("shmwatch why: warning: ", c.warnings[i]);
    struct whyreport_in in = {.r = &r, .from = from, .to = to, .warnings = c.warnings,
                              .nwarnings = c.nwarnings};
    struct buf out;
    buf_init(&out);
    if (o.json)
        whyreport_json(&out, &in);
    else
        whyreport_text(&out, &in);
    output_write(&out);
    buf_free(&out);
    status = output_status("why", NULL);
    if (status == 0 && r.n)
        status = 4;

    why_result_free(&r);
    for (size_t i = 0; i < ix.n; i++)
        jd_free(c.docs[i]);
    for (size_t i = 0; i < c.nwarnings; i++)
        free(c.warnings[i]);
    free(c.warnings);
    free(c.docs);
    free(c.tried);
    free(recs);
    store_index_free(&ix);
out:
    options_free(&o);
    return status;
}
