/* The maps text: maps_parse_line on one line, and the whole text walked by
 * procfiles (forced to the text, as on kernels before 6.11) from a fixture
 * process directory whose maps file is the input, and the path at an
 * address read back from that text. Mappings on 00:1a and 00:05 are
 * watched. */
#include "fuzz.h"

#include <sys/sysmacros.h>

#include "collect/holders.h"
#include "collect/mapstext.h"
#include "collect/procfiles.h"
#include "collect/procmap.h"

static dev_t devs[2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int piddir = -1;
    static char maps[4096];
    static struct procfiles *pf;
    if (piddir < 0) {
        char dir[2048];
        snprintf(dir, sizeof(dir), "%s/pid", fuzz_tmpdir());
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            abort();
        snprintf(maps, sizeof(maps), "%s/maps", dir);
        piddir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (piddir < 0)
            abort();
        devs[0] = makedev(0, 0x1a);
        devs[1] = makedev(0, 5);
        procmap_force(PROCMAP_WAY_TEXT); /* read by procfiles_new */
        pf = procfiles_new(devs, 2, NULL);
    }

    char *line = fuzz_cstr(data, size);
    struct maps_entry e;
    if (maps_parse_line(line, &e) && (e.end < e.start || !e.path))
        abort();
    free(line);

    fuzz_write(maps, data, size);
    procfiles_begin(pf, piddir);
    struct procfile f;
    while (procfiles_next(pf, &f)) {
        if (f.kind != PROCFILE_MAP || f.ino == 0 || (f.dev != devs[0] && f.dev != devs[1]))
            abort();
        char *name = procfiles_name(pf, &f);
        if (name)
            (void)strip_deleted(name);
        struct stat st;
        (void)procfiles_map_stat(pf, &f, &st); /* no map_files/ here: fails */
    }
    (void)procfiles_end(pf);
    (void)procfiles_torch(pf);
    /* The executable's path at an address within the text's lines: the
     * first line's start, moved by the input's last byte in pages
     * (pidscan_exe's reading of the text just walked). */
    char *text = fuzz_cstr(data, size);
    uint64_t addr = strtoull(text, NULL, 16) + (size ? (uint64_t)data[size - 1] << 12 : 0);
    free(text);
    const char *exe = procfiles_text_path(pf, addr);
    if (exe && exe[0] != '/')
        abort();
    return 0;
}
