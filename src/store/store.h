/* The recording store (doc/recording.md): JSON lines in files by time under
 * one directory, written by one recorder at a time, read by why and replay. */
#ifndef SHMWATCH_STORE_H
#define SHMWATCH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_MAX_SIZE_DEFAULT (256ull << 20)
#define STORE_MAX_AGE_DEFAULT (7.0 * 86400)

/* The default directory into buf: /var/lib/shmwatch as root, else
 * $XDG_STATE_HOME/shmwatch (~/.local/state/shmwatch). NULL when it cannot
 * be told (no HOME) or does not fit. */
const char *store_default_dir(char *buf, size_t n);

/* Writing. */
struct store_limits {
    uint64_t max_size;
    double max_age_s;
};
struct store;

/* Opens dir for writing (made 0700 when missing), taking its lock. lim:
 * NULL, or a member 0, for the defaults. header:
 * the members of the header record after "recording" and "time" (a
 * JSON text of members without braces, e.g. "\"hostname\":\"x\",..."). 0,
 * or -errno with a one-line reason in msg (a second recorder: -EBUSY, "DIR
 * is being recorded by pid N"). Every msg of the store names its files
 * escaped for a terminal already: it is printed as it is. */
int store_open(const char *dir, const struct store_limits *lim, const char *header,
               struct store **out, char *msg, size_t n);
/* Appends one record (line: a JSON object, no newline) of time t (Unix
 * seconds): whole or not at all. 0, or -errno with the reason in msg. On a
 * full disk the oldest file is dropped and the write tried once more: msg
 * then says so (and which file) even when it returns 0; after a plain
 * write msg is "". */
int store_write(struct store *st, double t, const char *line, size_t len, char *msg, size_t n);
void store_close(struct store *st); /* st may be NULL */

/* Reading: an index of the records of a window, in time order. */
enum store_rec_kind { STORE_SNAPSHOT, STORE_EVENT };
struct store_entry {
    double t;                 /* the record's time, Unix seconds */
    enum store_rec_kind kind;
    char event[16];           /* the event's KIND ("exit", ...), "" for a snapshot */
    uint32_t file;            /* index into the index's files */
    uint64_t offset;          /* of the line in its file */
    uint32_t len;             /* the line's length, without its newline */
    uint64_t sum;             /* str_hash of the line: a copy is told from another record */
};
struct store_index {
    char *dir;
    char **files;             /* names, in time order */
    size_t nfiles;
    struct store_entry *items;
    size_t n;
    char **warnings;          /* "FILE: offset N: ...", one per damage found */
    size_t nwarnings;
    bool *unread;             /* per file: a record of it could not be read back
                               * (store_index_read_once); NULL until one cannot */
};

/* The records from..to (Unix seconds; from 0: the oldest, to 0: the newest)
 * of dir. Files that end before from are not read. 0, or -errno with a
 * one-line reason in msg (no such directory, nothing recorded). */
int store_index_load(const char *dir, double from, double to, struct store_index *ix, char *msg,
                     size_t n);
/* Entry i's line (a new string, NUL-terminated), NULL with msg on a
 * failure: the reason alone, the caller naming the file and offset. */
char *store_index_read(const struct store_index *ix, size_t i, char *msg, size_t n);
/* Entry i's line, as store_index_read reads it, for a reader of many
 * entries. When it cannot be read, *warning is, for the first such entry
 * of its file, "DIR/FILE: offset N: cannot be read: REASON" (a new string,
 * DIR escaped as in the index's warnings), NULL for the others of that
 * file: a file the recorder dropped after it was indexed is one warning,
 * not one per record. *warning is NULL when the line is read. */
char *store_index_read_once(struct store_index *ix, size_t i, char **warning);
void store_index_free(struct store_index *ix);

#endif
