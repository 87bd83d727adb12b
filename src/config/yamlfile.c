#include "config/yamlfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/safefile.h"

/* Config and theme files are small; anything bigger is a mistake. */
#define YAMLFILE_MAX (1u << 20)

/* "PATH: MSG" or "PATH:LINE:COLUMN: MSG" (line > 0), the path escaped: a
 * file name holding a newline or an escape sequence must not split the
 * one-line error or reach the terminal. */
static char *path_error(const char *path, size_t line, size_t column, const char *msg)
{
    char *p = esc_term_dup(path);
    char *e = line ? str_printf("%s:%zu:%zu: %s", p, line, column, msg)
                   : str_printf("%s: %s", p, msg);
    free(p);
    return e;
}

static char *mark_error(const char *path, size_t line, size_t column, const char *msg)
{
    return path_error(path, line + 1, column + 1, msg);
}

/* The reader reports a byte offset, not a mark: count lines up to it. */
static void offset_to_mark(const struct buf *text, size_t offset, size_t *line, size_t *column)
{
    *line = 0;
    *column = 0;
    for (size_t i = 0; i < offset && i < text->len; i++) {
        if (text->data[i] == '\n') {
            (*line)++;
            *column = 0;
        } else {
            (*column)++;
        }
    }
}

static char *parser_error(const char *path, const yaml_parser_t *p, const struct buf *text)
{
    struct buf msg;
    buf_init(&msg);
    size_t line = p->problem_mark.line, column = p->problem_mark.column;
    if (p->error == YAML_READER_ERROR) {
        offset_to_mark(text, p->problem_offset, &line, &column);
        buf_adds(&msg, p->problem ? p->problem : "unreadable text");
    } else if (p->error == YAML_MEMORY_ERROR) {
        buf_adds(&msg, "out of memory");
    } else {
        buf_adds(&msg, p->problem ? p->problem : "malformed YAML");
        if (p->context)
            buf_printf(&msg, " (%s at %zu:%zu)", p->context, p->context_mark.line + 1,
                       p->context_mark.column + 1);
    }
    char *e = mark_error(path, line, column, msg.data);
    buf_free(&msg);
    return e;
}

/* A parser reading text; false, with *err, when libyaml has no memory. */
static bool parser_open(yaml_parser_t *p, const char *path, const struct buf *text, char **err)
{
    if (!yaml_parser_initialize(p)) {
        *err = mark_error(path, 0, 0, "out of memory");
        return false;
    }
    yaml_parser_set_input_string(p, (const unsigned char *)text->data, text->len);
    return true;
}

/* The trust rule on the file read (st): 0, with *warning set when trust
 * only warns, or -EPERM with *err. */
static int check_trust(const char *path, const struct stat *st, enum config_trust trust, char **err,
                       char **warning)
{
    int why = trust == CONFIG_TRUST_ANY ? 0 : safefile_trusted(st, geteuid());
    if (why == 0)
        return 0;
    if (trust == CONFIG_TRUST_WARN) {
        char *p = esc_term_dup(path);
        *warning = str_printf("%s is %s: read because the command line names it, but whoever "
                              "can write it decides what shmwatch does as root",
                              p, safefile_strerror(-why));
        free(p);
        return 0;
    }
    char *msg = str_printf("refused: %s (run as root, shmwatch reads settings only from files "
                           "that root owns and only root can write)",
                           safefile_strerror(-why));
    *err = path_error(path, 0, 0, msg);
    free(msg);
    return -EPERM;
}

/* No setting or theme nests more than a few levels; libyaml's scanner
 * costs time in the square of the nesting (a megabyte of '[' took it half
 * an hour). So the events are read once first and the text refused at the
 * first collection this deep, before libyaml has read much further. A
 * syntax error stops this pass silently: the load reports it. */
#define YAMLFILE_MAX_DEPTH 64

static int check_depth(const char *path, const struct buf *text, char **err)
{
    yaml_parser_t p;
    if (!parser_open(&p, path, text, err))
        return -ENOMEM;
    int depth = 0, rc = 0;
    for (bool done = false; !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break;
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
            if (++depth > YAMLFILE_MAX_DEPTH) {
                *err = mark_error(path, ev.start_mark.line, ev.start_mark.column,
                                  "nested more than 64 levels deep");
                rc = -EINVAL;
                done = true;
            }
        } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        done = done || ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* A double-quoted "\0" puts a NUL inside a scalar, which every reader of
 * it, a C string, would take as its end: "/tmp/a\0b" would be /tmp/a. So a
 * scalar holding one is refused, wherever it is. */
static int check_nul(const struct yamlfile *f, char **err)
{
    for (yaml_node_t *n = f->doc.nodes.start; n < f->doc.nodes.top; n++) {
        if (n->type == YAML_SCALAR_NODE &&
            memchr(n->data.scalar.value, '\0', n->data.scalar.length)) {
            *err = mark_error(f->path, n->start_mark.line, n->start_mark.column,
                              "a NUL character (\\0) in a string");
            return -EINVAL;
        }
    }
    return 0;
}

/* The one document of text, into f. */
static int load_document(struct yamlfile *f, const struct buf *text, char **err)
{
    yaml_parser_t p;
    if (!parser_open(&p, f->path, text, err))
        return -ENOMEM;
    int rc = 0;
    if (!yaml_parser_load(&p, &f->doc)) {
        *err = parser_error(f->path, &p, text);
        rc = -EINVAL;
    } else {
        /* A second document would be silently ignored: refuse it. */
        yaml_document_t next;
        if (!yaml_parser_load(&p, &next)) {
            *err = parser_error(f->path, &p, text);
            rc = -EINVAL;
        } else {
            if (yaml_document_get_root_node(&next)) {
                *err = mark_error(f->path, next.start_mark.line, next.start_mark.column,
                                  "expected one YAML document, found a second one");
                rc = -EINVAL;
            }
            yaml_document_delete(&next);
        }
        if (rc == 0)
            rc = check_nul(f, err);
        if (rc)
            yaml_document_delete(&f->doc);
    }
    yaml_parser_delete(&p);
    return rc;
}

int yamlfile_load_trusted(struct yamlfile *f, const char *path, enum config_trust trust, char **err,
                          char **warning)
{
    memset(f, 0, sizeof(*f));
    f->path = path;
    if (warning)
        *warning = NULL;
    struct buf text;
    buf_init(&text);
    struct stat st;
    int rc = read_file_stat(path, &text, YAMLFILE_MAX, &st);
    if (rc == -EAGAIN)
        *err = path_error(path, 0, 0, "cannot read: it waits for more instead of ending");
    else if (rc < 0)
        *err = path_error(path, 0, 0,
                          rc == -ENODATA ? "a FIFO or pipe that no process writes to"
                                         : strerror(-rc));
    else
        rc = check_trust(path, &st, trust, err, warning);
    if (rc == 0)
        rc = check_depth(path, &text, err);
    if (rc == 0)
        rc = load_document(f, &text, err);
    buf_free(&text);
    return rc;
}

yaml_node_t *yamlfile_node(struct yamlfile *f, int index)
{
    return yaml_document_get_node(&f->doc, index);
}

char *yamlfile_error(const struct yamlfile *f, const yaml_node_t *node, const char *fmt, ...)
{
    struct buf msg;
    buf_init(&msg);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    size_t line = node ? node->start_mark.line : 0;
    size_t column = node ? node->start_mark.column : 0;
    char *e = mark_error(f->path, line, column, msg.data);
    buf_free(&msg);
    return e;
}

char *yamlfile_key_error(const struct yamlfile *f, const yaml_node_t *key, const char *what)
{
    struct buf b;
    buf_init(&b);
    yamlfile_quote(&b, yamlfile_scalar(key));
    char *e = yamlfile_error(f, key, "%s key %s", what, b.data);
    buf_free(&b);
    return e;
}

int yamlfile_check_mapping(struct yamlfile *f, yaml_node_t *node, const char *what, char **err)
{
    if (node->type != YAML_MAPPING_NODE) {
        *err = yamlfile_error(f, node, "%s: expected a mapping of keys to values, got %s", what,
                              yamlfile_kind(node));
        return -EINVAL;
    }
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = yamlfile_node(f, p->key);
        const char *k = yamlfile_scalar(key);
        if (!k || yamlfile_is_null(key)) {
            *err =
                yamlfile_error(f, key, "%s: expected a key name, got %s", what, yamlfile_kind(key));
            return -EINVAL;
        }
        for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < p; q++) {
            const char *prev = yamlfile_scalar(yamlfile_node(f, q->key));
            if (prev && strcmp(prev, k) == 0) {
                *err = yamlfile_key_error(f, key, "duplicate");
                return -EINVAL;
            }
        }
    }
    return 0;
}

bool yamlfile_is_null(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return node == NULL;
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)node->data.scalar.value;
    return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

const char *yamlfile_scalar(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)node->data.scalar.value;
}

const char *yamlfile_kind(const yaml_node_t *node)
{
    if (!node)
        return "nothing";
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    default:
        return yamlfile_is_null(node) ? "null" : "a string";
    }
}

void yamlfile_quote(struct buf *b, const char *s)
{
    buf_addc(b, '\'');
    esc_term(b, s, 0);
    buf_addc(b, '\'');
}
