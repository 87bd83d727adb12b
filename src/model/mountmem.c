/* Each mount's budget history across scans (model.h, struct mount_memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "model/model.h"
#include "util/xalloc.h"

const char *mount_memory_key(const struct scan *s, size_t i, char *buf, size_t n)
{
    const struct shm_mount *mt = &s->mounts.items[i];
    const struct node_ctr *c = node_owner(&s->node, i);
    if (c && c->info.id)
        snprintf(buf, n, "%.80s %u:%u", c->info.id, major(mt->dev), minor(mt->dev));
    else if (c) /* no runtime names it: its namespace does, as a device number is reused */
        snprintf(buf, n, "mntns %lu %u:%u", c->mntns, major(mt->dev), minor(mt->dev));
    else
        snprintf(buf, n, "%u:%u", major(mt->dev), minor(mt->dev));
    return buf;
}

const struct mount_mem *mount_memory_find(const struct mount_memory *mm, const char *key)
{
    for (size_t i = 0; mm && i < mm->n; i++)
        if (strcmp(mm->items[i].key, key) == 0)
            return &mm->items[i];
    return NULL;
}

void mount_memory_observe(struct mount_memory *mm, const struct scan *s, double t)
{
    /* The entries of this scan's mounts, in its order; the rest forgotten. */
    struct mount_mem *kept = xcalloc(s->mounts.n, sizeof(*kept));
    size_t nkept = 0;
    for (size_t i = 0; i < s->mounts.n && nkept < MOUNT_MEMORY_MAX; i++) {
        char key[sizeof(kept->key)];
        mount_memory_key(s, i, key, sizeof(key));
        if (mount_memory_find(&(struct mount_memory){kept, nkept, nkept}, key))
            continue; /* one device seen twice: one entry */
        struct mount_mem *e = &kept[nkept++];
        const struct mount_mem *was = mount_memory_find(mm, key);
        if (was)
            *e = *was;
        else
            snprintf(e->key, sizeof(e->key), "%s", key);
        const struct cgroup_info *cg = scan_mount_cgroup(s, i); /* its owner's */
        e->oom_new = oom_watch_add(&e->oom, t, cg->present && cg->has_oom_kills, cg->oom_kills);
        e->oom_recent = oom_watch_recent(&e->oom, t);
        const struct shm_mount *mt = &s->mounts.items[i];
        if (mt->stat_ok && mt->used > e->peak_shm)
            e->peak_shm = mt->used;
    }
    free(mm->items);
    mm->items = kept;
    mm->n = nkept;
    mm->cap = s->mounts.n;
}

void mount_memory_learn(struct mount_memory *mm, const struct model *m)
{
    for (size_t i = 0; i < m->nmount_budgets; i++) {
        char key[sizeof(mm->items->key)];
        mount_memory_key(m->scan, i, key, sizeof(key));
        struct mount_mem *e = (struct mount_mem *)mount_memory_find(mm, key);
        if (e && m->mount_budgets[i].app > e->peak_app)
            e->peak_app = m->mount_budgets[i].app;
    }
}

void mount_memory_free(struct mount_memory *mm)
{
    free(mm->items);
    memset(mm, 0, sizeof(*mm));
}
