/* Helpers shared by the libFuzzer harnesses: NUL-terminated copies of the
 * input, splitting it into parts, and writing it where a reader of files
 * expects it. */
#ifndef SHMWATCH_FUZZ_H
#define SHMWATCH_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a malloc'd C string (bytes after a NUL are cut off by the
 * parsers anyway, as they would be by a reader of text). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The next part of *data up to a NUL byte (or the end), as a C string. */
static inline char *fuzz_part(const uint8_t **data, size_t *size)
{
    const uint8_t *nul = memchr(*data, '\0', *size);
    size_t n = nul ? (size_t)(nul - *data) : *size;
    char *s = fuzz_cstr(*data, n);
    *data += nul ? n + 1 : n;
    *size -= nul ? n + 1 : n;
    return s;
}

/* Replaces the contents of path with len bytes. */
static inline void fuzz_write(const char *path, const void *p, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len)) {
        perror(path);
        abort();
    }
    close(fd);
}

/* A memory file that readers open by its /proc/self/fd path: no disk I/O
 * per input. Returns the path (static storage). */
static inline const char *fuzz_memfile(const void *p, size_t len)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (len && pwrite(fd, p, len, 0) != (ssize_t)len)) {
        perror("memfd");
        abort();
    }
    return path;
}

/* A fresh directory below $TMPDIR (or /tmp), made once per process. */
static inline const char *fuzz_tmpdir(void)
{
    static char dir[1024]; /* the callers add a name to it in 4096 bytes */
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof(dir), "%s/shmwatch-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
    }
    return dir;
}

/* The message of a failed load must be one line. */
static inline void fuzz_check_one_line(const char *err)
{
    if (!err || !*err || strchr(err, '\n')) {
        fprintf(stderr, "error message missing or not one line: %s\n", err ? err : "(null)");
        abort();
    }
}

/* A message that must be one line of valid UTF-8. Frees it. */
static inline void fuzz_check_utf8_line(char *err)
{
    fuzz_check_one_line(err);
    for (size_t k = 0, len = strlen(err), step; k < len; k += step) {
        step = utf8_valid_len((const unsigned char *)err + k, len - k);
        if (!step) {
            fprintf(stderr, "message with invalid UTF-8 at byte %zu: %s\n", k, err);
            abort();
        }
    }
    free(err);
}

/* The message of a failed load of the file at path: one line of valid
 * UTF-8 that starts "path:line:column: ". Frees err. */
static inline void fuzz_check_located(char *err, const char *path)
{
    fuzz_check_one_line(err);
    size_t n = strlen(path);
    unsigned line, col;
    char c;
    if (strncmp(err, path, n) != 0 || sscanf(err + n, ":%u:%u%c", &line, &col, &c) != 3 ||
        c != ':' || line == 0 || col == 0) {
        fprintf(stderr, "error without file:line:column: %s\n", err);
        abort();
    }
    fuzz_check_utf8_line(err);
}

#endif
