#include "act/procid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fileio.h"

bool procid_parse_stat(const char *text, struct procid *out)
{
    /* "123 (comm with ) inside) S 1 123 123 0 -1 4194560 ... starttime ..." */
    char *end;
    errno = 0;
    long pid = strtol(text, &end, 10);
    if (errno || end == text || pid <= 0 || end[0] != ' ' || end[1] != '(')
        return false;
    const char *open = end + 1, *close = strrchr(text, ')');
    if (!close || close < open || close[1] != ' ' || !close[2])
        return false;
    size_t len = (size_t)(close - open - 1);
    if (len >= sizeof(out->comm))
        len = sizeof(out->comm) - 1;
    memset(out, 0, sizeof(*out));
    memcpy(out->comm, open + 1, len);
    out->pid = (pid_t)pid;
    out->state = close[2];
    /* Fields after the comm, numbered from 3 (state). */
    const char *p = close + 3;
    for (int field = 4; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return false;
        errno = 0;
        if (field == 4 || field == 22) {
            unsigned long long v = strtoull(p, &end, 10);
            if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
                return false;
            if (field == 4)
                out->ppid = (pid_t)v;
            else
                out->start_ticks = v;
        } else {
            strtoll(p, &end, 10);
            if (end == p)
                return false;
        }
        p = end;
    }
    return true;
}

static bool parse_uids(const char *status, uid_t *ruid, uid_t *euid)
{
    const char *line = strstr(status, "\nUid:");
    if (!line)
        return false;
    unsigned long r, e;
    if (sscanf(line + 5, "%lu %lu", &r, &e) != 2)
        return false;
    *ruid = (uid_t)r;
    *euid = (uid_t)e;
    return true;
}

int procid_read(int proc_dirfd, pid_t pid, struct procid *out)
{
    char path[32];
    struct buf text;
    buf_init(&text);
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    int rc = read_file_at(proc_dirfd, path, &text, 4096);
    if (rc == 0 && !procid_parse_stat(text.data, out))
        rc = -EINVAL;
    if (rc == 0) {
        snprintf(path, sizeof(path), "%d/status", (int)pid);
        rc = read_file_at(proc_dirfd, path, &text, 1 << 16);
        if (rc == 0 && !parse_uids(text.data, &out->ruid, &out->euid))
            rc = -EINVAL;
    }
    buf_free(&text);
    if (rc == -ENOENT)
        rc = -ESRCH;
    return rc;
}

bool procid_same(pid_t pid, unsigned long long start_ticks, const struct procid *now)
{
    return now->pid == pid && now->start_ticks == start_ticks;
}

bool procid_may_signal(uid_t caller, const struct procid *p)
{
    return caller == 0 || (p->euid == caller && p->ruid == caller);
}
