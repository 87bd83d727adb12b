#include "collect/procmap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum procmap_way procmap_choose(uint64_t text_ns, size_t lines, uint64_t query_ns, size_t calls)
{
    if (!lines || !calls)
        return lines ? PROCMAP_WAY_TEXT : PROCMAP_WAY_QUERY;
    return (double)text_ns / (double)lines < (double)query_ns / (double)calls ? PROCMAP_WAY_TEXT
                                                                              : PROCMAP_WAY_QUERY;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* One reading of the text, as the scan reads it (open, read to the end,
 * close): its time, and its lines in *lines. 0 when it cannot be read. */
static uint64_t time_text(size_t *lines)
{
    char buf[16384];
    uint64_t t0 = now_ns();
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    ssize_t got;
    while ((got = read(fd, buf, sizeof(buf))) > 0)
        for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + got - p))); p++)
            n++;
    close(fd);
    uint64_t t = now_ns() - t0;
    *lines = n;
    return got == 0 ? (t ? t : 1) : 0;
}

/* One walk through the ioctl, as the scan walks (open, file-backed mappings
 * one by one to the end, close): its time, and its calls in *calls. 0 when
 * it cannot be done; *lacking set when the kernel does not know the ioctl. */
static uint64_t time_query(size_t *calls, bool *lacking)
{
    uint64_t t0 = now_ns();
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    uint64_t addr = 0;
    int err = 0;
    for (;;) {
        struct procmap_query q = {.size = sizeof(q),
                                  .query_flags = PQ_COVERING_OR_NEXT | PQ_FILE_BACKED,
                                  .query_addr = addr};
        n++;
        if (ioctl(fd, PROCMAP_QUERY_IOCTL, &q) != 0) {
            err = errno;
            break;
        }
        addr = q.vma_end;
    }
    close(fd);
    uint64_t t = now_ns() - t0;
    *lacking = n == 1 && (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP);
    *calls = n;
    return err == ENOENT ? (t ? t : 1) : 0;
}

static enum procmap_way measured = PROCMAP_WAY_QUERY;
static uint64_t test_text_ns, test_query_ns;

void procmap_set_test_times(uint64_t text_ns, uint64_t query_ns)
{
    test_text_ns = text_ns;
    test_query_ns = query_ns;
}
static _Atomic int forced = -1; /* an enum procmap_way, or -1: measure */

void procmap_force(enum procmap_way way)
{
    forced = (int)way;
}

static void measure(void)
{
    uint64_t text = 0, query = 0;
    size_t lines = 0, calls = 0;
    for (int round = 0; round < 3; round++) {
        size_t l = 0, c = 0;
        bool lacking = false;
        uint64_t t = time_text(&l), q = time_query(&c, &lacking);
        if (lacking) {
            measured = PROCMAP_WAY_TEXT;
            return;
        }
        if (!t || !q)
            return; /* nothing to go by: the ioctl, which falls back itself */
        if (test_text_ns)
            t = test_text_ns, q = test_query_ns;
        if (!text || t < text)
            text = t, lines = l;
        if (!query || q < query)
            query = q, calls = c;
    }
    measured = procmap_choose(text, lines, query, calls);
}

enum procmap_way procmap_way(void)
{
    int f = forced;
    if (f >= 0)
        return (enum procmap_way)f;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, measure);
    return measured;
}
