#include <string.h>

#include "model/model.h"

/* Reads [0-9]+ at *s, advancing; false if there is no digit or it overflows. */
static bool read_uint(const char **s, unsigned long *out)
{
    const char *p = *s;
    unsigned long v = 0;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9') {
        if (v > 100000000ul)
            return false;
        v = v * 10 + (unsigned long)(*p++ - '0');
    }
    *s = p;
    *out = v;
    return true;
}

/* ^torch_([0-9]+)_([0-9]+)(_([0-9]+))?$ */
static bool parse_torch(const char *name, pid_t *pid)
{
    if (strncmp(name, "torch_", 6) != 0)
        return false;
    const char *s = name + 6;
    unsigned long p, n;
    if (!read_uint(&s, &p) || *s++ != '_' || !read_uint(&s, &n))
        return false;
    if (*s == '_') {
        s++;
        if (!read_uint(&s, &n))
            return false;
    }
    if (*s != '\0')
        return false;
    *pid = (pid_t)p;
    return true;
}

/* __KMP_REGISTERED_LIB_<pid> or __KMP_REGISTERED_LIB_<pid>_<uid> */
static bool parse_omp(const char *name, pid_t *pid)
{
    static const char prefix[] = "__KMP_REGISTERED_LIB_";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return false;
    const char *s = name + sizeof(prefix) - 1;
    unsigned long p, uid;
    if (!read_uint(&s, &p))
        return false;
    if (*s == '_' && (s++, !read_uint(&s, &uid)))
        return false;
    if (*s != '\0')
        return false;
    *pid = (pid_t)p;
    return true;
}

enum seg_kind kind_of_name(const char *name)
{
    pid_t pid;
    if (parse_torch(name, &pid))
        return KIND_TORCH;
    if (strncmp(name, "__KMP_REGISTERED_LIB_", 21) == 0)
        return KIND_OMP;
    if (strncmp(name, "sem.", 4) == 0)
        return KIND_SEM;
    return KIND_OTHER;
}

bool name_creator_pid(const char *name, pid_t *pid)
{
    return (parse_torch(name, pid) || parse_omp(name, pid)) && *pid > 0;
}

const char *seg_kind_name(enum seg_kind k)
{
    switch (k) {
    case KIND_TORCH: return "torch";
    case KIND_OMP: return "omp";
    case KIND_SEM: return "sem";
    default: return "other";
    }
}

const char *seg_state_name(enum seg_state s)
{
    switch (s) {
    case SEG_IN_USE: return "in_use";
    case SEG_HIDDEN: return "hidden";
    case SEG_ORPHAN: return "orphan";
    default: return "unheld";
    }
}
