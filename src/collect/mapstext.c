#include "collect/mapstext.h"

#include <limits.h>
#include <string.h>
#include <sys/sysmacros.h>

/* One more than the value of each byte as a hex digit; 0 for a byte that
 * is none. */
static const unsigned char hex_digit1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The fields of the maps text are read by hand, not by strtoull, which cost
 * a sixth of a snapshot's instructions: they are read on every line of
 * every process's maps. Each takes digits only (no sign, space or "0x",
 * which strtoull would also take), at least one, up to the char stop,
 * which is passed, and no value past 64 bits. */

/* A hex field: at most 16 digits, as the kernel writes them. */
static bool hex_field(const char **s, char stop, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    for (unsigned d; (d = hex_digit1[(unsigned char)*p]) != 0; p++)
        v = v << 4 | (d - 1);
    if (p == *s || p - *s > 16 || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

/* A decimal field. */
static bool dec_field(const char **s, char stop, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    for (; (unsigned)(*p - '0') < 10; p++)
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (unsigned)(*p - '0'), &v))
            return false;
    if (p == *s || *p != stop)
        return false;
    *out = v;
    *s = p + 1;
    return true;
}

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
