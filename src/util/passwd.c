#include "util/passwd.h"

#include <errno.h>
#include <string.h>

#include "util/beneath.h"
#include "util/buf.h"

/* The decimal uid of [s, e), at most 10 digits and below 2^32 - 1 (the
 * invalid uid). */
static int parse_uid(const char *s, const char *e, uid_t *out)
{
    if (s == e || e - s > 10)
        return -EINVAL;
    unsigned long long v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        v = v * 10 + (unsigned)(*s - '0');
    }
    if (v >= 0xffffffffull)
        return -EINVAL;
    *out = (uid_t)v;
    return 0;
}

int passwd_find(const char *text, size_t len, uid_t uid, char *out, size_t n)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const char *line = p;
        p = eol < end ? eol + 1 : end;
        const char *c1 = memchr(line, ':', (size_t)(eol - line));
        if (!c1 || c1 == line || *line == '+' || *line == '-' ||
            memchr(line, '\0', (size_t)(c1 - line)))
            continue;
        const char *c2 = memchr(c1 + 1, ':', (size_t)(eol - c1 - 1));
        if (!c2)
            continue;
        const char *c3 = memchr(c2 + 1, ':', (size_t)(eol - c2 - 1));
        uid_t u;
        if (parse_uid(c2 + 1, c3 ? c3 : eol, &u) < 0 || u != uid)
            continue;
        size_t nl = (size_t)(c1 - line);
        if (nl >= n)
            return -ENAMETOOLONG;
        memcpy(out, line, nl);
        out[nl] = '\0';
        return 0;
    }
    return -ENOENT;
}

int passwd_name_at(int rootfd, uid_t uid, char *out, size_t n)
{
    struct buf b;
    buf_init(&b);
    int rc = read_beneath(rootfd, "etc/passwd", &b, PASSWD_MAX);
    if (rc == 0)
        rc = passwd_find(b.data, b.len, uid, out, n);
    buf_free(&b);
    return rc;
}
