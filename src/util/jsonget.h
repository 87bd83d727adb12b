/* One string out of a JSON document that came from outside (a container
 * runtime's state file): the whole document is checked, and anything
 * malformed, too deep or not a string where one is asked for gives no answer
 * rather than a guess. Read through util/jsondoc.h. No I/O. */
#ifndef SHMWATCH_JSONGET_H
#define SHMWATCH_JSONGET_H

#include <stdbool.h>
#include <stddef.h>

#include "util/jsondoc.h"

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

/* A step of a path that takes an array's first element instead of an
 * object's member (compared by address, never by its text). */
extern const char jsonget_first[];
#define JSONGET_FIRST jsonget_first

/* As jsonget_string, in a document that is an array of objects: the path
 * leads from the element whose member key is the string want (the last one,
 * when several are). E.g. containers/storage's containers.json,
 * [{"id": ID, "names": [NAME, ...]}, ...], with key "id", want ID and path
 * {"names", JSONGET_FIRST}. False when the document is not such an array or
 * no element matches. */
bool jsonget_string_where(const char *text, size_t len, const char *key, const char *want,
                          const char *const *path, size_t npath, char **out);

#endif
