#include "util/inomap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static size_t hash(uint32_t dev, uint64_t ino)
{
    uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
    return (size_t)(h ^ (h >> 29));
}

void inomap_init(struct inomap *m)
{
    memset(m, 0, sizeof(*m));
}

void inomap_free(struct inomap *m)
{
    free(m->slots);
    free(m->devs);
    inomap_init(m);
}

/* The index of dev among the map's devices, or -1. */
static long dev_index(const struct inomap *m, dev_t dev)
{
    uint32_t h = m->dev_hint[dev_hash(dev, INOMAP_DEV_HINT_BITS)];
    if (h && m->devs[h - 1] == dev)
        return (long)h - 1;
    for (size_t i = 0; i < m->ndevs; i++)
        if (m->devs[i] == dev)
            return (long)i;
    return -1;
}

static struct inomap_slot *find_slot(struct inomap_slot *slots, size_t cap, uint32_t dev,
                                     uint64_t ino)
{
    size_t i = hash(dev, ino) & (cap - 1);
    while (slots[i].val && !(slots[i].ino == ino && slots[i].dev == dev))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static void rehash(struct inomap *m, size_t ncap)
{
    struct inomap_slot *old = m->slots;
    size_t ocap = m->cap;
    m->slots = xcalloc(ncap, sizeof(*m->slots));
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].val)
            *find_slot(m->slots, ncap, old[i].dev, old[i].ino) = old[i];
    free(old);
}

void inomap_reserve(struct inomap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    if (cap > m->cap)
        rehash(m, cap);
}

static void check_val(size_t val)
{
    if (val > INOMAP_MAX_VAL) {
        fputs("shmwatch: too many inodes\n", stderr);
        exit(1);
    }
}

/* The slot of (dev, ino), made (empty, val 0) when absent. */
static struct inomap_slot *slot_of(struct inomap *m, dev_t dev, ino_t ino)
{
    long d = dev_index(m, dev);
    if (d < 0) {
        *VEC_PUSH(m->devs, m->ndevs, m->devs_cap) = dev;
        d = (long)m->ndevs - 1;
        uint32_t *h = &m->dev_hint[dev_hash(dev, INOMAP_DEV_HINT_BITS)];
        if (!*h)
            *h = (uint32_t)m->ndevs;
    }
    if ((m->n + 1) * 2 > m->cap)
        rehash(m, m->cap ? m->cap * 2 : 64);
    struct inomap_slot *s = find_slot(m->slots, m->cap, (uint32_t)d, (uint64_t)ino);
    if (!s->val) {
        s->ino = (uint64_t)ino;
        s->dev = (uint32_t)d;
    }
    return s;
}

bool inomap_add(struct inomap *m, dev_t dev, ino_t ino, size_t fresh, size_t *val)
{
    check_val(fresh);
    struct inomap_slot *s = slot_of(m, dev, ino);
    bool added = !s->val;
    if (added) {
        s->val = (uint32_t)fresh + 1;
        m->n++;
    }
    *val = s->val - 1;
    return added;
}

void inomap_put(struct inomap *m, dev_t dev, ino_t ino, size_t val)
{
    check_val(val);
    struct inomap_slot *s = slot_of(m, dev, ino);
    if (!s->val)
        m->n++;
    s->val = (uint32_t)val + 1;
}

bool inomap_get(const struct inomap *m, dev_t dev, ino_t ino, size_t *val)
{
    if (!m->cap)
        return false;
    long d = dev_index(m, dev);
    if (d < 0)
        return false;
    const struct inomap_slot *s =
        find_slot(m->slots, m->cap, (uint32_t)d, (uint64_t)ino);
    if (!s->val)
        return false;
    *val = s->val - 1;
    return true;
}
