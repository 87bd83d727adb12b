/* A hash map from (device, inode) to an index: how segments are identified
 * and joined to their holders without quadratic searches. */
#ifndef SHMWATCH_INOMAP_H
#define SHMWATCH_INOMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct inomap_slot {
    dev_t dev;
    ino_t ino;
    size_t val;
    bool used;
};

struct inomap {
    struct inomap_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
};

void inomap_init(struct inomap *m);
void inomap_free(struct inomap *m);
/* Empties the map, keeping its memory for the next scan. */
void inomap_clear(struct inomap *m);
/* Makes room for n entries in all, so that filling it never rehashes. */
void inomap_reserve(struct inomap *m, size_t n);
/* Inserts or overwrites. */
void inomap_put(struct inomap *m, dev_t dev, ino_t ino, size_t val);
/* The value of (dev, ino), inserted as 0 when absent: one lookup for a
 * find-or-add. The pointer is valid until the next insertion. */
size_t *inomap_ref(struct inomap *m, dev_t dev, ino_t ino);
/* Finds; returns false when absent. */
bool inomap_get(const struct inomap *m, dev_t dev, ino_t ino, size_t *val);

#endif
