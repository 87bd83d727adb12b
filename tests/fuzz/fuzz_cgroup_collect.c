/* cgroup_collect end to end on a fixture root: the input is split at NUL
 * bytes into /proc/self/cgroup, /proc/self/mountinfo, and the memory files
 * of the cgroup directory /cg (memory.stat, the limit, the usage, the peak),
 * which a mountinfo line can mount at /cg. */
#include "fuzz.h"

#include "collect/cgroup.h"
#include "collect/mounts.h"
#include "util/warn.h"

static char root[4096];

static void put(const char *rel, const char *text)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s%s", root, rel);
    fuzz_write(path, text, strlen(text));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) {
        snprintf(root, sizeof(root), "%s/cgroot", fuzz_tmpdir());
        char path[8192];
        const char *dirs[] = {"", "/proc", "/proc/self", "/cg"};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
            snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
            if (mkdir(path, 0700) != 0 && errno != EEXIST)
                abort();
        }
    }
    char *cgroup = fuzz_part(&data, &size), *mountinfo = fuzz_part(&data, &size);
    char *stat = fuzz_part(&data, &size), *limit = fuzz_part(&data, &size);
    char *usage = fuzz_part(&data, &size), *peak = fuzz_part(&data, &size);
    put("/proc/self/cgroup", cgroup);
    put("/proc/self/mountinfo", mountinfo);
    put("/cg/memory.stat", stat);
    put("/cg/memory.max", limit);
    put("/cg/memory.limit_in_bytes", limit);
    put("/cg/memory.current", usage);
    put("/cg/memory.usage_in_bytes", usage);
    put("/cg/memory.peak", peak);
    put("/cg/memory.max_usage_in_bytes", peak);

    char path[8192];
    snprintf(path, sizeof(path), "%s/proc", root);
    struct sysroot sys;
    if (sysroot_open(&sys, path, root, root) != 0)
        abort();
    struct mountinfo mi;
    (void)mountinfo_read(sys.proc, "self/mountinfo", &mi);
    struct warnings w;
    warn_init(&w);
    struct cgroup_info info;
    (void)cgroup_collect(&sys, 0, &mi, &info, &w, NULL);
    sysroot_close(&sys);
    cgroup_free(&info);
    warn_free(&w);
    mountinfo_free(&mi);
    free(cgroup);
    free(mountinfo);
    free(stat);
    free(limit);
    free(usage);
    free(peak);
    return 0;
}
