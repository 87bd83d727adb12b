#include "collect/sysv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

/* Column positions come from the header line: kernels have added columns
 * (rss, swap) over time, so positions are not assumed. */
enum col { C_KEY, C_SHMID, C_SIZE, C_CPID, C_LPID, C_NATTCH, C_UID, C_RSS, C_NCOLS };
static const char *const col_names[C_NCOLS] = {"key", "shmid", "size", "cpid",
                                                "lpid", "nattch", "uid", "rss"};

int sysv_parse(const char *text, struct sysv_list *out)
{
    char *copy = xstrdup(text);
    char *cur = copy, *line = next_line(&cur);
    int pos[C_NCOLS];
    for (int c = 0; c < C_NCOLS; c++)
        pos[c] = -1;
    int idx = 0;
    char *save; /* strtok_r: the scan runs on a thread of its own */
    for (char *tok = line ? strtok_r(line, " \t", &save) : NULL; tok;
         tok = strtok_r(NULL, " \t", &save), idx++)
        for (int c = 0; c < C_NCOLS; c++)
            if (strcmp(tok, col_names[c]) == 0)
                pos[c] = idx;
    bool header = true; /* every column but rss is named */
    for (int c = 0; c < C_RSS; c++)
        header = header && pos[c] >= 0;
    while (header && (line = next_line(&cur))) {
        long long v[C_NCOLS] = {0};
        bool have[C_NCOLS] = {false};
        idx = 0;
        for (char *tok = strtok_r(line, " \t", &save); tok;
             tok = strtok_r(NULL, " \t", &save), idx++) {
            for (int c = 0; c < C_NCOLS; c++) {
                if (pos[c] == idx) {
                    char *end;
                    errno = 0;
                    v[c] = strtoll(tok, &end, 10);
                    have[c] = !errno && *end == '\0';
                }
            }
        }
        if (!have[C_SHMID] || !have[C_SIZE])
            continue;
        struct sysv_seg *s = VEC_PUSH(out->items, out->n, out->cap);
        s->key = v[C_KEY];
        s->shmid = (int)v[C_SHMID];
        s->size = v[C_SIZE] > 0 ? (uint64_t)v[C_SIZE] : 0;
        s->rss = v[C_RSS] > 0 ? (uint64_t)v[C_RSS] : 0;
        s->nattch = v[C_NATTCH] > 0 ? (unsigned long)v[C_NATTCH] : 0;
        s->cpid = (pid_t)v[C_CPID];
        s->lpid = (pid_t)v[C_LPID];
        s->uid = (uid_t)v[C_UID];
    }
    free(copy);
    return header ? 0 : -EINVAL;
}

int sysv_collect(const struct sysroot *sys, struct sysv_list *out)
{
    struct buf text;
    buf_init(&text);
    int rc = read_file_at(sys->proc, "sysvipc/shm", &text, READ_TEXT_MAX);
    if (rc == 0)
        rc = sysv_parse(text.data, out);
    buf_free(&text);
    return rc;
}

void sysv_free(struct sysv_list *sl)
{
    free(sl->items);
    memset(sl, 0, sizeof(*sl));
}
