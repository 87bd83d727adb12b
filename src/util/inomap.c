#include "util/inomap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static size_t hash(dev_t dev, ino_t ino)
{
    uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
    return (size_t)(h ^ (h >> 29));
}

void inomap_init(struct inomap *m)
{
    memset(m, 0, sizeof(*m));
}

void inomap_free(struct inomap *m)
{
    free(m->slots);
    inomap_init(m);
}

void inomap_clear(struct inomap *m)
{
    if (m->slots)
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
    m->n = 0;
}

static struct inomap_slot *find_slot(struct inomap_slot *slots, size_t cap, dev_t dev, ino_t ino)
{
    size_t i = hash(dev, ino) & (cap - 1);
    while (slots[i].used && !(slots[i].dev == dev && slots[i].ino == ino))
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
        if (old[i].used)
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

size_t *inomap_ref(struct inomap *m, dev_t dev, ino_t ino)
{
    if ((m->n + 1) * 2 > m->cap)
        rehash(m, m->cap ? m->cap * 2 : 64);
    struct inomap_slot *s = find_slot(m->slots, m->cap, dev, ino);
    if (!s->used) {
        s->used = true;
        s->dev = dev;
        s->ino = ino;
        s->val = 0;
        m->n++;
    }
    return &s->val;
}

void inomap_put(struct inomap *m, dev_t dev, ino_t ino, size_t val)
{
    *inomap_ref(m, dev, ino) = val;
}

bool inomap_get(const struct inomap *m, dev_t dev, ino_t ino, size_t *val)
{
    if (!m->cap)
        return false;
    const struct inomap_slot *s = find_slot(m->slots, m->cap, dev, ino);
    if (!s->used)
        return false;
    *val = s->val;
    return true;
}
