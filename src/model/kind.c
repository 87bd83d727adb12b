#include <stdint.h>
#include <string.h>

#include "model/model.h"

/* Reads [0-9]+ at *s, advancing; false if there is no digit or the value
 * exceeds max. */
static bool read_uint(const char **s, uint64_t max, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p++ - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *s = p;
    *out = v;
    return true;
}

/* ^torch_([0-9]+)_([0-9]+)(_([0-9]+))?$. The first number is a pid; the
 * others are counters or, since torch 1.x, a random 32-bit number
 * (torch_6418_3996645901_5), so they may take all of 64 bits. */
static bool parse_torch(const char *name, pid_t *pid)
{
    if (strncmp(name, "torch_", 6) != 0)
        return false;
    const char *s = name + 6;
    uint64_t p, n;
    if (!read_uint(&s, INT32_MAX, &p) || *s++ != '_' || !read_uint(&s, UINT64_MAX, &n))
        return false;
    if (*s == '_') {
        s++;
        if (!read_uint(&s, UINT64_MAX, &n))
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
    uint64_t p, uid;
    if (!read_uint(&s, INT32_MAX, &p))
        return false;
    if (*s == '_' && (s++, !read_uint(&s, UINT32_MAX, &uid)))
        return false;
    if (*s != '\0')
        return false;
    *pid = (pid_t)p;
    return true;
}

enum seg_kind name_facts(const char *name, pid_t *creator)
{
    pid_t pid = 0;
    enum seg_kind kind = KIND_OTHER;
    if (parse_torch(name, &pid))
        kind = KIND_TORCH;
    else if (strncmp(name, "__KMP_REGISTERED_LIB_", 21) == 0) {
        kind = KIND_OMP;
        parse_omp(name, &pid); /* sets pid only for a well-formed name */
    } else if (strncmp(name, "sem.", 4) == 0)
        kind = KIND_SEM;
    *creator = pid > 0 ? pid : 0;
    return kind;
}

bool name_creator_pid(const char *name, pid_t *pid)
{
    name_facts(name, pid);
    return *pid > 0;
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
