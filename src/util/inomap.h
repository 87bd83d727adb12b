/* A hash map from (device, inode) to an index: how segments are identified
 * and joined to their holders without quadratic searches. A slot is 16
 * bytes (the inode, the device as an index into the map's few distinct
 * devices, the value) so that 100,000 segments cost 4 MiB, not 12. */
#ifndef SHMWATCH_INOMAP_H
#define SHMWATCH_INOMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inomap_slot {
    uint64_t ino;
    uint32_t dev; /* index into devs */
    uint32_t val; /* 0: empty; else the value + 1 */
};

/* A device's hash in bits bits (at most 32): where a table of hints keeps
 * the index of a device among a few watched ones (here, and the walk's
 * test of whether a device is watched, collect/procfiles.c). */
static inline unsigned dev_hash(dev_t dev, unsigned bits)
{
    return (unsigned)(((uint64_t)dev * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

#define INOMAP_DEV_HINT_BITS 6
#define INOMAP_DEV_HINTS (1u << INOMAP_DEV_HINT_BITS)

struct inomap {
    struct inomap_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
    dev_t *devs; /* the distinct devices seen */
    size_t ndevs, devs_cap;
    /* Where in devs a device is, by a hash of it (index + 1; 0: none): the
     * node view watches a device per container, and each lookup would
     * otherwise search them all. A device whose entry another took is
     * found by the search. */
    uint32_t dev_hint[INOMAP_DEV_HINTS];
};

/* Values are indices below INOMAP_MAX_VAL. */
#define INOMAP_MAX_VAL ((size_t)UINT32_MAX - 1)

void inomap_init(struct inomap *m);
void inomap_free(struct inomap *m);
/* Makes room for n entries in all, so that filling it never rehashes. */
void inomap_reserve(struct inomap *m, size_t n);
/* Find-or-add in one lookup: *val gets the value of (dev, ino), which is
 * inserted with value fresh when absent. Returns true when it was inserted. */
bool inomap_add(struct inomap *m, dev_t dev, ino_t ino, size_t fresh, size_t *val);
/* Inserts or overwrites. */
void inomap_put(struct inomap *m, dev_t dev, ino_t ino, size_t val);
/* Finds; returns false when absent. */
bool inomap_get(const struct inomap *m, dev_t dev, ino_t ino, size_t *val);

#endif
