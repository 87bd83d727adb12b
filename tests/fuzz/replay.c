/* Runs a libFuzzer harness over its seed corpus without libFuzzer: each
 * file named on the command line (or each file of each directory named) is
 * handed to LLVMFuzzerTestOneInput once. Built with gcc in both builds, so
 * that the sanitizer build runs every parser over its recorded inputs
 * (tests/meson.build, the suite 'fuzz'); tests/fuzz/run.sh is the search
 * for new inputs, which needs clang. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The bytes of the file at path, or NULL (said on stderr). */
static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    uint8_t *data = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            data = realloc(data, cap);
            if (!data)
                abort();
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *size = n;
    return data;
}

static int run_file(const char *path)
{
    size_t size;
    uint8_t *data = slurp(path, &size);
    if (!data)
        return 1;
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0, ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            failed++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed += run_file(argv[i]);
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            failed++;
            continue;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            failed += run_file(path);
            ran++;
        }
        closedir(d);
    }
    printf("%d inputs, %d unreadable\n", ran, failed);
    return failed || !ran ? 1 : 0;
}
