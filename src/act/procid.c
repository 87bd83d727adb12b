#include "act/procid.h"

#include <errno.h>
#include <string.h>

#include "collect/procs.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/procstat.h"

/* The identity part of st into out, zeroed by the caller (the uids are
 * status's). */
static void from_stat(const struct procstat *st, struct procid *out)
{
    out->pid = st->pid;
    out->ppid = st->ppid;
    out->state = st->state;
    out->start_ticks = st->start_ticks;
    _Static_assert(sizeof(out->comm) == sizeof(st->comm), "comm sizes differ");
    memcpy(out->comm, st->comm, sizeof(out->comm));
}

int procid_read(int proc_dirfd, pid_t pid, struct procid *out)
{
    struct procstat st;
    memset(out, 0, sizeof(*out));
    int rc = procstat_read(proc_dirfd, pid, &st);
    if (rc < 0)
        return rc;
    from_stat(&st, out);
    char path[32];
    struct buf text;
    buf_init(&text);
    rc = read_file_at(proc_dirfd, pid_file_name(path, pid, "status"), &text, READ_SMALL_MAX);
    if (rc == 0 && !procs_status_uids(text.data, &out->ruid, &out->euid))
        rc = -EINVAL;
    if (rc == 0)
        status_parse_nspid(text.data, &out->nspid);
    buf_free(&text);
    return rc == -ENOENT ? -ESRCH : rc;
}

bool procid_same(pid_t pid, unsigned long long start_ticks, const struct procid *now)
{
    return now->pid == pid && now->start_ticks == start_ticks;
}

bool procid_may_signal(uid_t caller, const struct procid *p)
{
    return caller == 0 || (p->euid == caller && p->ruid == caller);
}
