#include "collect/mapstext.h"

#include <limits.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/procstat.h"

bool maps_line_dev(const char *line, dev_t *dev)
{
    const char *s = line;
    for (int k = 0; k < 3 && s; k++) {
        s = strchr(s, ' ');
        if (s)
            s++;
    }
    uint64_t maj, min;
    if (!s || !hex_field(&s, ':', &maj) || !hex_field(&s, ' ', &min))
        return false;
    *dev = makedev(maj, min);
    return true;
}

bool maps_line_range(const char *line, uint64_t *start, uint64_t *end)
{
    const char *s = line;
    return hex_field(&s, '-', start) && hex_field(&s, ' ', end);
}

bool strip_deleted(char *path)
{
    size_t n = strlen(path), k = sizeof(MAPS_DELETED_SUFFIX) - 1;
    if (n >= k && strcmp(path + n - k, MAPS_DELETED_SUFFIX) == 0) {
        path[n - k] = '\0';
        return true;
    }
    return false;
}

bool maps_parse_line(char *line, struct maps_entry *e)
{
    /* 7f2c3c000000-7f2c3c100000 rw-s 00000000 00:1a 12345   /dev/shm/torch_1_2 (deleted) */
    const char *cur = line;
    uint64_t maj, min, ino;
    if (!hex_field(&cur, '-', &e->start) || !hex_field(&cur, ' ', &e->end))
        return false;
    const char *sp = strchr(cur, ' '); /* permissions */
    if (!sp || e->end < e->start)
        return false;
    cur = sp + 1;
    if (!hex_field(&cur, ' ', &e->offset) || !hex_field(&cur, ':', &maj) ||
        !hex_field(&cur, ' ', &min) || maj > UINT_MAX || min > UINT_MAX)
        return false;
    /* The inode ends the line when no path follows. */
    const char *end = cur + strcspn(cur, " ");
    if (!dec_field(&cur, *end, &ino))
        return false;
    e->major = (unsigned)maj;
    e->minor = (unsigned)min;
    e->inode = ino;
    while (*end == ' ')
        end++;
    e->path = line + (end - line); /* end, as a pointer into the line, which is ours to write */
    e->deleted = strip_deleted(e->path);
    return true;
}
