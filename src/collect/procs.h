/* The process table: what shmwatch needs to know about each process (read
 * by walk.c; tests build tables by hand), and meminfo. */
#ifndef SHMWATCH_PROCS_H
#define SHMWATCH_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/warn.h"

struct proc {
    pid_t pid, ppid, pgid, sid;
    char state;              /* R S D Z T ... */
    char comm[16];
    char *cmdline;           /* arguments joined by spaces; comm in brackets if empty */
    char *exe;               /* NULL when unreadable */
    uid_t uid;               /* effective uid */
    unsigned long long start_ticks; /* start time since boot, clock ticks: pid identity */
    uint64_t rss_anon;       /* bytes: RssAnon (statm's resident - shared) */
    pid_t nspid;             /* pid in the innermost pid namespace (== pid when none) */
    unsigned long pidns;     /* pid namespace inode, 0 if unknown */
    unsigned long mntns;     /* mount namespace inode, 0 if unknown */
    uint64_t sigcatch;       /* caught signals (SigCgt): bit n-1 for signal n; 0 in a kthread */
    uint64_t start_code;     /* where its executable's code is mapped (stat's startcode);
                              * 0 without memory, 1 when not shown to this reader */
    bool kernel_thread;
};

/* pid_cmp (util/fileio.h) orders the process table by the pid a record
 * begins with. */
_Static_assert(offsetof(struct proc, pid) == 0, "pid_cmp reads a record's pid at its start");

struct proc_list {
    struct proc *items;
    size_t n, cap;
};

struct meminfo {
    uint64_t total, shmem; /* bytes */
};

/* MemTotal and Shmem through libproc2; returns 0 or -errno. */
int procs_meminfo(struct meminfo *mi);

/* Looks a pid up (the list is sorted by pid). */
const struct proc *procs_find(const struct proc_list *pl, pid_t pid);
void procs_sort(struct proc_list *pl);
void procs_free(struct proc_list *pl);

/* The processes of one pid namespace by their pid there (NSpid's last
 * field), sorted: how a pid in a segment name made in a container (--pid)
 * is found, one binary search per name. */
struct nspid_index {
    const struct proc **items;
    size_t n;
};
/* pidns 0 indexes the processes of every pid namespace whose pid there
 * differs from the one /proc shows (the walk's creators of named
 * segments). The list must outlive the index. */
void nspid_index_build(struct nspid_index *t, const struct proc_list *pl, unsigned long pidns);
/* The position of the first entry whose pid there is nspid or more (n for
 * none): the entries of that pid follow from there. */
size_t nspid_index_lower(const struct nspid_index *t, pid_t nspid);
const struct proc *nspid_index_find(const struct nspid_index *t, pid_t nspid);
void nspid_index_free(struct nspid_index *t);

/* Parses a /proc/PID/stat text (util/procstat.c, the one parser of it) into
 * p: pid, comm, state, ppid, pgid, sid, start_ticks, kernel_thread,
 * start_code and sigcatch (nspid set to pid). A kernel thread's line is read
 * up to start_ticks only: its sigcatch is 0 (the torch fingerprints are all
 * it is for). False when the text is malformed (p is then left alone). */
bool procs_parse_stat(const char *text, struct proc *p);

/* Takes the effective uid, RssAnon, NSpid and SigCgt of a /proc/PID/status
 * text into p (the fields it lacks are left alone). */
void procs_parse_status(const char *text, struct proc *p);

/* Takes RssAnon from a /proc/PID/statm text into p: resident - shared
 * pages (the kernel counts shared as file + shmem pages, resident as those
 * and the anonymous ones), left alone when malformed. statm is a third of
 * status's cost to the kernel; the effective uid is the owner of the
 * /proc/PID directory, which the kernel keeps even for a non-dumpable
 * process. */
void procs_parse_statm(const char *text, struct proc *p, uint64_t page_size);

/* RssShmem of process pid, if it is still the one that started at
 * start_ticks: only the details page shows it, so the scan does not read
 * it. Returns 0 or -errno (-ESRCH: gone, or the pid is another's). */
int procs_read_shmem(int proc_dirfd, pid_t pid, unsigned long long start_ticks,
                     uint64_t *bytes);

/* A /proc/PID/cmdline text (len bytes, NUL-separated) as one string:
 * arguments joined by spaces; "[comm]" when there are none, "[comm] <defunct>"
 * for a zombie. */
char *procs_join_cmdline(const char *text, size_t len, const char *comm, bool zombie);

/* The NSpid line of a /proc/PID/status text: the number of pids it lists
 * (the depth of the process's pid namespace; 0 without the line), the
 * innermost (the last) into *nspid when it is a pid. The one parser of the
 * line. */
int status_parse_nspid(const char *status, pid_t *nspid);

/* The Uid line of a /proc/PID/status text: the real and effective uids.
 * False without the line or with a malformed one. The one parser of the
 * line (procs_parse_status and act/procid.c call it). */
bool procs_status_uids(const char *status, uid_t *ruid, uid_t *euid);

#endif
