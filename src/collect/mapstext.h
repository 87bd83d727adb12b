/* The /proc/PID/maps text: the one parser of its lines, "start-end perms
 * offset maj:min inode path". The walk of a process's mappings reads it
 * where PROCMAP_QUERY is not answered (procfiles.h); pidscan_exe reads the
 * executable's path from it. */
#ifndef SHMWATCH_MAPSTEXT_H
#define SHMWATCH_MAPSTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the kernel appends to the path of a file that has been unlinked. */
#define MAPS_DELETED_SUFFIX " (deleted)"

/* One parsed /proc/PID/maps line; path points into the line ("" if none). */
struct maps_entry {
    uint64_t start, end, offset;
    unsigned major, minor;
    uint64_t inode;
    char *path;
    bool deleted;
};

/* Parses a maps line in place. Returns false for a malformed line. */
bool maps_parse_line(char *line, struct maps_entry *e);

/* The device field of a maps line alone (the line is not changed): read
 * first, so that a line on a device nobody watches is rejected before
 * anything else of it is parsed. False for a malformed line. */
bool maps_line_dev(const char *line, dev_t *dev);

/* The address range that starts a maps line (the line may end in '\n'
 * or NUL). False for a malformed one. */
bool maps_line_range(const char *line, uint64_t *start, uint64_t *end);

/* Splits " (deleted)" off a link or maps target in place; true if it was there. */
bool strip_deleted(char *path);

#endif
