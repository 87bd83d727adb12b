/* The cgroup parsers: a /proc/PID/cgroup line, memory.max /
 * memory.limit_in_bytes, memory.stat (v1 and v2), and the helpers that
 * compare the paths and lists they give. */
#include "fuzz.h"

#include "collect/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);

    bool limited;
    uint64_t limit;
    (void)cgroup_parse_limit(text, &limited, &limit);
    struct cgroup_stat st;
    cgroup_parse_stat(text, 1, &st);
    cgroup_parse_stat(text, 2, &st);
    uint64_t v;
    (void)cgroup_stat_get(text, "", &v);

    char *line = strdup(text);
    struct cgroup_line l;
    if (cgroup_parse_line(line, &l)) {
        (void)cgroup_list_has(l.controllers, "memory");
        (void)cgroup_list_has(l.controllers, "");
        (void)cgroup_relative(l.path, "/");
        (void)cgroup_relative(l.path, l.controllers);
        (void)cgroup_relative("/docker/abc", l.path);
    }
    free(line);
    free(text);
    return 0;
}
