/* One string out of a JSON document that came from outside (a container
 * runtime's state file): the whole document is checked, and anything
 * malformed, too deep or not a string where one is asked for gives no answer
 * rather than a guess. No I/O. */
#ifndef SHMWATCH_JSONGET_H
#define SHMWATCH_JSONGET_H

#include <stdbool.h>
#include <stddef.h>

/* Objects and arrays nested deeper than this make a document malformed. */
#define JSONGET_MAX_DEPTH 64

/* The string at path, a list of npath object keys from the top-level object
 * (e.g. {"Config", "Hostname"}), in the len bytes of text (which may hold
 * NULs: they are malformed JSON). True: *out is a new string (malloc'd) of
 * the decoded bytes: escapes undone, \u escapes as UTF-8 (a lone surrogate
 * as U+FFFD), raw bytes kept as they are, valid UTF-8 or not. False, *out
 * NULL: the document is not valid JSON, the path leads nowhere or not to a
 * string, or the string holds a NUL (\u0000). A key given twice: the last
 * one counts. */
bool jsonget_string(const char *text, size_t len, const char *const *path, size_t npath,
                    char **out);

#endif
