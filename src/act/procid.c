#include "act/procid.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collect/procs.h"
#include "util/buf.h"
#include "util/fileio.h"

bool procid_parse_stat(const char *text, struct procid *out)
{
    /* The scan's parser: one reading of the format, on the scan's path and
     * on the one right before a signal alike. */
    struct proc p;
    memset(&p, 0, sizeof(p));
    memset(out, 0, sizeof(*out));
    if (!procs_parse_stat(text, &p))
        return false;
    out->pid = p.pid;
    out->ppid = p.ppid;
    out->state = p.state;
    out->start_ticks = p.start_ticks;
    _Static_assert(sizeof(out->comm) == sizeof(p.comm), "comm sizes differ");
    memcpy(out->comm, p.comm, sizeof(out->comm));
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
    int rc = read_file_at(proc_dirfd, path, &text, READ_LINE_MAX);
    if (rc == 0 && !procid_parse_stat(text.data, out))
        rc = -EINVAL;
    if (rc == 0) {
        snprintf(path, sizeof(path), "%d/status", (int)pid);
        rc = read_file_at(proc_dirfd, path, &text, READ_SMALL_MAX);
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
