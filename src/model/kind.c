#include <stdint.h>
#include <string.h>

#include "model/model.h"

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define HEX "0123456789abcdef"

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

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
    if (!starts(name, "torch_"))
        return false;
    const char *s = name + 6;
    uint64_t p, n;
    if (!read_uint(&s, INT32_MAX, &p) || *s++ != '_' || !read_uint(&s, UINT64_MAX, &n))
        return false;
    if (*s == '_' && (s++, !read_uint(&s, UINT64_MAX, &n)))
        return false;
    if (*s != '\0')
        return false;
    *pid = (pid_t)p;
    return true;
}

#define OMP_PREFIX "__KMP_REGISTERED_LIB_"

/* What follows OMP_PREFIX in a name: <pid> or <pid>_<uid>. */
static bool parse_omp(const char *s, pid_t *pid)
{
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

/* joblib_memmapping_folder_<pid>_<hex>_<hex> (older: _<pid>_<id>): the pid,
 * then one or two ids of hex digits. */
static bool parse_joblib(const char *name, pid_t *pid)
{
    static const char prefix[] = "joblib_memmapping_folder_";
    if (!starts(name, prefix))
        return false;
    const char *s = name + sizeof(prefix) - 1;
    uint64_t p;
    if (!read_uint(&s, INT32_MAX, &p) || *s != '_')
        return false;
    for (int ids = 0; *s == '_' && ids < 2; ids++) {
        s++;
        size_t n = strspn(s, HEX);
        if (n == 0)
            return false;
        s += n;
    }
    if (*s != '\0')
        return false;
    *pid = (pid_t)p;
    return true;
}

/* Whether name, from offset on, is min to max characters of set. A loop
 * rather than strspn: GCC's overread check misjudges name + offset. */
static bool all_of(const char *name, size_t offset, const char *set, size_t min, size_t max)
{
    size_t n = 0;
    for (const char *p = name + offset; *p; p++, n++)
        if (!strchr(set, *p))
            return false;
    return n >= min && n <= max;
}

/* The kinds whose names carry no creator pid: a prefix, and for some a
 * tail of min to max characters of a set (NULL: any tail). No name matches
 * two rules. */
static const struct prefix_rule {
    const char *prefix;
    enum seg_kind kind;
    const char *tail;
    size_t min, max;
} prefix_rules[] = {
    {"nccl-shm-send-", KIND_NCCL, NULL, 0, 0},
    {"nccl-shm-recv-", KIND_NCCL, NULL, 0, 0},
    {"nccl-", KIND_NCCL, ALNUM, 6, 6},
    {"nvidia_dali_", KIND_DALI, NULL, 0, 0},
    {"psm_", KIND_PYTHON, HEX, 8, 8},
    {"psm2_shm.", KIND_MPI, NULL, 0, 0},
    {"plasma", KIND_RAY, ALNUM, 6, 6},
    {"pulse-shm-", KIND_PULSE, "0123456789", 1, SIZE_MAX},
    {"sem.", KIND_SEM, NULL, 0, 0},
    {"sm_segment.", KIND_MPI, NULL, 0, 0},
    {"vader_segment.", KIND_MPI, NULL, 0, 0},
    {"mpich_shar_tmp", KIND_MPI, NULL, 0, 0},
    {"open_mpi.", KIND_MPI, NULL, 0, 0},
    {"ucx_shm_posix_", KIND_UCX, HEX, 1, SIZE_MAX},
    {"deepspeed_allreduce_buffer_", KIND_DEEPSPEED, NULL, 0, 0},
    {".org.chromium.", KIND_CHROMIUM, NULL, 0, 0},
    {".com.google.Chrome.", KIND_CHROMIUM, NULL, 0, 0},
};

/* Only the rules whose prefix begins with the name's first character go on
 * to compare the prefix: a node's /dev/shm may hold 100,000 names of no
 * known kind. */
static enum seg_kind kind_by_prefix(const char *name)
{
    for (size_t i = 0; i < sizeof(prefix_rules) / sizeof(prefix_rules[0]); i++) {
        const struct prefix_rule *r = &prefix_rules[i];
        if (r->prefix[0] == name[0] && starts(name, r->prefix) &&
            (!r->tail || all_of(name, strlen(r->prefix), r->tail, r->min, r->max)))
            return r->kind;
    }
    return KIND_OTHER;
}

enum seg_kind name_facts(const char *name, pid_t *creator)
{
    *creator = 0; /* each parser sets it only for a well-formed name */
    if (name[0] == 't' && parse_torch(name, creator))
        return KIND_TORCH;
    if (name[0] == '_' && starts(name, OMP_PREFIX)) {
        parse_omp(name + strlen(OMP_PREFIX), creator);
        return KIND_OMP;
    }
    if (name[0] == 'j' && parse_joblib(name, creator))
        return KIND_JOBLIB;
    return kind_by_prefix(name);
}

bool name_creator_pid(const char *name, pid_t *pid)
{
    name_facts(name, pid);
    return *pid > 0;
}

static const char *const kind_names[KIND_COUNT] = {
    [KIND_TORCH] = "torch",       [KIND_JOBLIB] = "joblib",       [KIND_OMP] = "omp",
    [KIND_NCCL] = "nccl",         [KIND_PYTHON] = "python",       [KIND_SEM] = "sem",
    [KIND_MPI] = "mpi",           [KIND_UCX] = "ucx",             [KIND_RAY] = "ray",
    [KIND_DALI] = "dali",         [KIND_DEEPSPEED] = "deepspeed", [KIND_PULSE] = "pulse",
    [KIND_CHROMIUM] = "chromium", [KIND_OTHER] = "other",
};

const char *seg_kind_name(enum seg_kind k)
{
    return (unsigned)k < KIND_COUNT ? kind_names[k] : "other";
}

bool seg_kind_parse(const char *s, enum seg_kind *out)
{
    for (int k = 0; k < KIND_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0) {
            *out = (enum seg_kind)k;
            return true;
        }
    return false;
}

bool seg_kind_has_creator(enum seg_kind k)
{
    return k == KIND_TORCH || k == KIND_JOBLIB || k == KIND_OMP;
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
