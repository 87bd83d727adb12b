/* The process table and meminfo through procps-ng's libproc2. Its strings
 * belong to the library and are reused on the next fetch: everything kept
 * is copied. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libproc2/meminfo.h>
#include <libproc2/pids.h>

#include "collect/procs.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/xalloc.h"

#define PF_KTHREAD 0x00200000u

static enum pids_item items[] = {
    PIDS_ID_PID,    PIDS_ID_PPID,   PIDS_ID_PGRP,   PIDS_ID_SESSION,  PIDS_STATE,
    PIDS_CMD,       PIDS_CMDLINE,   PIDS_EXE,       PIDS_ID_EUID,     PIDS_TICS_BEGAN,
    PIDS_VM_RSS_ANON, PIDS_VM_RSS_SHARED, PIDS_NS_PID, PIDS_FLAGS,     PIDS_SIGCATCH,
    PIDS_NS_MNT,
};
enum rel {
    R_PID, R_PPID, R_PGRP, R_SID, R_STATE, R_CMD, R_CMDLINE, R_EXE, R_EUID, R_BEGAN,
    R_RSS_ANON, R_RSS_SHMEM, R_NS_PID, R_FLAGS, R_SIGCATCH, R_NS_MNT,
};

static unsigned long own_pidns(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

static int read_table(void *ctx, struct proc_list *out, struct warnings *w)
{
    (void)ctx;
    struct pids_info *info = NULL;
    int rc = procps_pids_new(&info, items, (int)(sizeof(items) / sizeof(items[0])));
    if (rc < 0) {
        warn_add(w, "cannot read the process table: %s", strerror(-rc));
        return rc;
    }
    struct pids_fetch *f = procps_pids_reap(info, PIDS_FETCH_TASKS_ONLY);
    if (!f) {
        rc = -errno;
        warn_add(w, "cannot read the process table: %s", strerror(errno));
        procps_pids_unref(&info);
        return rc ? rc : -EIO;
    }
    unsigned long mine = own_pidns();
    struct buf status;
    buf_init(&status);
    for (int i = 0; i < f->counts->total; i++) {
        struct pids_stack *st = f->stacks[i];
        struct proc *p = VEC_PUSH(out->items, out->n, out->cap);
        p->pid = PIDS_VAL(R_PID, s_int, st, info);
        p->ppid = PIDS_VAL(R_PPID, s_int, st, info);
        p->pgid = PIDS_VAL(R_PGRP, s_int, st, info);
        p->sid = PIDS_VAL(R_SID, s_int, st, info);
        p->state = PIDS_VAL(R_STATE, s_ch, st, info);
        snprintf(p->comm, sizeof(p->comm), "%s", PIDS_VAL(R_CMD, str, st, info));
        p->cmdline = xstrdup(PIDS_VAL(R_CMDLINE, str, st, info));
        const char *exe = PIDS_VAL(R_EXE, str, st, info);
        p->exe = (exe && exe[0] == '/') ? xstrdup(exe) : NULL;
        p->uid = PIDS_VAL(R_EUID, u_int, st, info);
        p->start_ticks = PIDS_VAL(R_BEGAN, ull_int, st, info);
        p->rss_anon = (uint64_t)PIDS_VAL(R_RSS_ANON, ul_int, st, info) * 1024u;
        p->rss_shmem = (uint64_t)PIDS_VAL(R_RSS_SHMEM, ul_int, st, info) * 1024u;
        p->pidns = PIDS_VAL(R_NS_PID, ul_int, st, info);
        p->mntns = PIDS_VAL(R_NS_MNT, ul_int, st, info);
        p->kernel_thread = (PIDS_VAL(R_FLAGS, ul_int, st, info) & PF_KTHREAD) != 0;
        parse_sigmask(PIDS_VAL(R_SIGCATCH, str, st, info), &p->sigcatch);
        p->nspid = p->pid;
        /* A process in another pid namespace names itself (and its segments)
         * by its pid there: NSpid's last field. */
        if (p->pidns && mine && p->pidns != mine) {
            char path[64];
            snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
            if (read_file(path, &status, 64u << 10) == 0)
                status_parse_nspid(status.data, &p->nspid);
        }
    }
    buf_free(&status);
    procps_pids_unref(&info);
    procs_sort(out);
    return 0;
}

static int read_meminfo(void *ctx, struct meminfo *mi)
{
    (void)ctx;
    struct meminfo_info *info = NULL;
    int rc = procps_meminfo_new(&info);
    if (rc < 0)
        return rc;
    mi->total = (uint64_t)MEMINFO_GET(info, MEMINFO_MEM_TOTAL, ul_int) * 1024u;
    mi->available = (uint64_t)MEMINFO_GET(info, MEMINFO_MEM_AVAILABLE, ul_int) * 1024u;
    mi->shmem = (uint64_t)MEMINFO_GET(info, MEMINFO_MEM_SHARED, ul_int) * 1024u;
    procps_meminfo_unref(&info);
    return 0;
}

const struct proc_source procs_libproc2 = {
    .read = read_table,
    .meminfo = read_meminfo,
    .ctx = NULL,
};
