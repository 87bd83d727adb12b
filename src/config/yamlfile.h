/* A YAML file loaded whole as one libyaml document, and error messages that
 * point into it as "file:line:column: message" (1-based, as editors count).
 * Internal to src/config: the rest of the program never sees libyaml. */
#ifndef SHMWATCH_YAMLFILE_H
#define SHMWATCH_YAMLFILE_H

#include <stdbool.h>

#include <yaml.h>

#include "config/trust.h"
#include "util/buf.h"

struct yamlfile {
    const char *path; /* borrowed: must outlive the yamlfile */
    yaml_document_t doc;
};

/* Reads and parses path (one document at most; an empty file is an empty
 * document). Returns 0, -EINVAL with *err = "file:line:column: problem" for
 * malformed YAML, or -errno with *err = "file: strerror" when unreadable.
 * The trust rule (config/trust.h) is applied to the file read, for the
 * effective uid: CONFIG_TRUST_REQUIRE refuses an untrusted
 * file with -EPERM and *err = "file: refused: why (...)"; CONFIG_TRUST_WARN
 * loads it and sets *warning (malloc'd, one line, else NULL), which may be
 * NULL for CONFIG_TRUST_ANY and _REQUIRE. After a load that returned 0,
 * yaml_document_delete(&f->doc) frees it; on failure nothing is left to free. */
int yamlfile_load_trusted(struct yamlfile *f, const char *path, enum config_trust trust, char **err,
                          char **warning);

yaml_node_t *yamlfile_node(struct yamlfile *f, int index);

/* "file:line:column: " + the formatted message, malloc'd; line and column
 * are those where node starts (1:1 when node is NULL). */
char *yamlfile_error(const struct yamlfile *f, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error for a mapping's key refused as what ("unknown", "duplicate"):
 * "file:line:column: <what> key 'name'", the name quoted as yamlfile_quote. */
char *yamlfile_key_error(const struct yamlfile *f, const yaml_node_t *key, const char *what);

/* Checks that node is a mapping whose keys are scalars and unique; what
 * names the mapping in messages (e.g. "the file", "colors"). */
int yamlfile_check_mapping(struct yamlfile *f, yaml_node_t *node, const char *what, char **err);

/* true for an absent value: a plain "", "~", "null", "Null" or "NULL". */
bool yamlfile_is_null(const yaml_node_t *node);

/* The text of a scalar node (NUL-terminated by libyaml), NULL otherwise. */
const char *yamlfile_scalar(const yaml_node_t *node);

/* "a mapping", "a list", "null" or "a string": what a value was, for messages. */
const char *yamlfile_kind(const yaml_node_t *node);

/* Appends s quoted for a one-line message: 'text', control bytes escaped. */
void yamlfile_quote(struct buf *b, const char *s);

#endif
