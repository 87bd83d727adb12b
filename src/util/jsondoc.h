/* A JSON document read into a tree: for the records of a recording (why,
 * replay). Numbers are doubles (every integer a snapshot holds, byte counts
 * included, is below 2^53); strings are decoded (escapes undone, \u as
 * UTF-8) and may hold any byte but NUL. No I/O. */
#ifndef SHMWATCH_JSONDOC_H
#define SHMWATCH_JSONDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Objects and arrays nested deeper than this make a document malformed. */
#define JSONDOC_MAX_DEPTH 64

enum jd_type { JD_NULL, JD_BOOL, JD_NUM, JD_STR, JD_ARR, JD_OBJ };

struct jd {
    enum jd_type type;
    bool b;
    double num;
    char *str;            /* JD_STR: n bytes and a NUL */
    struct jd *items;     /* JD_ARR: n values; JD_OBJ: n values, keys[i] their keys */
    char **keys;
    size_t n;
};

/* Parses len bytes of text (one value, whitespace around it allowed).
 * NULL with a reason in err ("at byte N: ...") when it is not valid JSON
 * or nests deeper than JSONDOC_MAX_DEPTH. */
struct jd *jd_parse(const char *text, size_t len, char *err, size_t n);
void jd_free(struct jd *v);

/* Member key of an object (the last one when given twice); NULL when v is
 * not an object or has no such member. */
const struct jd *jd_get(const struct jd *v, const char *key);
/* Element i of an array, NULL past its end or when v is not an array. */
const struct jd *jd_at(const struct jd *v, size_t i);
/* The value as a type, or dflt when v is NULL or of another type. */
int64_t jd_int(const struct jd *v, int64_t dflt);
bool jd_bool(const struct jd *v, bool dflt);
const char *jd_str(const struct jd *v, const char *dflt);
/* Shorthands: member key of v as a type. */
double jd_getnum(const struct jd *v, const char *key, double dflt);
int64_t jd_getint(const struct jd *v, const char *key, int64_t dflt);
/* A count of bytes or events: member key of v when it is a number from 0 to
 * below 2^64, else 0. */
uint64_t jd_getu64(const struct jd *v, const char *key);
/* A pid: member key of v when it is from 1 to 2^31 - 1 (pid_t's range),
 * else 0 (null, absent, or a number no process can have). */
int64_t jd_getpid(const struct jd *v, const char *key);
const char *jd_getstr(const struct jd *v, const char *key, const char *dflt);
bool jd_getbool(const struct jd *v, const char *key, bool dflt);
/* Whether v is there and of that type; whether member key of v is. */
bool jd_is(const struct jd *v, enum jd_type type);
bool jd_has(const struct jd *v, const char *key, enum jd_type type);
/* The string v holds (jd_str) as a new string; NULL when it holds none. */
char *jd_strdup(const struct jd *v);
/* The number of elements of an array, 0 when v is not an array. */
size_t jd_len(const struct jd *v);

/* Defines `static T fn(const char *s)`, a name as the writer wrote it back
 * to its value: the k from lo to hi whose name(k) is s; dflt for NULL or a
 * name no k has. */
#define JD_NAME_READER(fn, T, name, lo, hi, dflt)                                                  \
    static T fn(const char *s)                                                                     \
    {                                                                                              \
        for (int k = (lo); s && k <= (hi); k++)                                                    \
            if (name((T)k) && strcmp(s, name((T)k)) == 0)                                          \
                return (T)k;                                                                       \
        return (dflt);                                                                             \
    }

#endif
