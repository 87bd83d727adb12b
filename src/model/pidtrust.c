#include "model/pidtrust.h"

#include <string.h>

/* Was the tmpfs born after the pid namespace's init started? Both are
 * coarse: the start time counts in clock ticks (10 ms, truncated) and a
 * tmpfs's birth time is the kernel's coarse clock (a jiffy behind), while a
 * runtime mounts /dev/shm a few milliseconds after its init exists. So the
 * birth may come up to 20 ms before the start as read; no shared tmpfs is
 * made that close before a container (the host's is made at boot, a pod's
 * or a shareable container's before the containers that join it). */
#define BIRTH_SLACK_NS 20000000LL

static bool born_after(const struct timespec *birth, const struct timespec *start)
{
    long long b = (long long)birth->tv_sec * 1000000000LL + birth->tv_nsec;
    long long s = (long long)start->tv_sec * 1000000000LL + start->tv_nsec;
    return b + BIRTH_SLACK_NS > s;
}

/* The pid namespace --pid watches (its target's), 0 without --pid. */
static unsigned long target_pidns(const struct scan *s)
{
    if (s->target_pid <= 0)
        return 0;
    const struct proc *t = procs_find(&s->procs, s->target_pid);
    return t ? t->pidns : 0;
}

void pidtrust_mount(const struct scan *s, size_t i, bool trust, struct mount_pids *out)
{
    memset(out, 0, sizeof(*out));
    const struct nsmap *ns = &s->ns;
    const struct mount_reach *r = ns->reach && i < ns->ndevs ? &ns->reach[i] : NULL;
    /* The kinds whose names carry a pid (torch, OpenMP, joblib) are made
     * through /dev/shm (shm_open, or that path): only the namespaces that
     * show the mount there can have written them. A runtime's or the
     * kubelet's own mount of a container's tmpfs at its state path
     * (podman's .../userdata/shm, Docker's .../mounts/shm, an emptyDir)
     * counts for nothing. A mount that no namespace shows there (one
     * watched with --mount) counts every namespace that shows it. */
    if (r && r->nshm_pidns) {
        out->npidns = r->nshm_pidns;
        out->pidns = r->shm_pidns;
    } else if (r) {
        out->npidns = r->npidns;
        out->pidns = r->pidns;
    }
    out->first_start_ok = r && r->nshm_procs && ns->view_initial &&
                          nsmap_started(ns, r->shm_first_ticks, &out->first_start);
    /* One namespace: pids are read there (through NSpid when /proc shows
     * another). None seen (a scan without namespace facts): the --pid
     * target's, else as /proc shows them. */
    out->lookup = out->npidns == 1 ? out->pidns[0] : target_pidns(s);
    if (out->lookup && out->lookup == ns->self_pidns && ns->self_depth == 1)
        out->lookup = 0;
    if (!ns->self_pidns) { /* no namespace facts at all (kernels before 3.8, tests) */
        out->evidence = PIDS_SOUND;
        return;
    }
    if (out->npidns > 1) {
        out->evidence = PIDS_SHARED;
    } else if (ns->view_initial) {
        out->evidence = PIDS_SOUND;
    } else if (r && !r->propagates && r->btime_ok && ns->pid1_ok &&
               born_after(&r->btime, &ns->pid1_start)) {
        out->evidence = PIDS_PRIVATE;
    } else {
        out->evidence = trust ? PIDS_TRUSTED : PIDS_UNPROVEN;
    }
}

const char *pid_evidence_name(enum pid_evidence e)
{
    switch (e) {
    case PIDS_SOUND: return "sound";
    case PIDS_PRIVATE: return "private";
    case PIDS_TRUSTED: return "trusted";
    case PIDS_SHARED: return "shared";
    default: return "unproven";
    }
}

const char *pid_evidence_note(enum pid_evidence e)
{
    switch (e) {
    case PIDS_PRIVATE:
        return "private to this pid namespace (made after its init started, not "
               "propagated): creator pids are read here";
    case PIDS_TRUSTED:
        return "creator pids are taken as this pid namespace's, as the setting trust_pids says";
    case PIDS_SHARED:
        return "at /dev/shm in several pid namespaces: a pid in a name cannot prove an orphan "
               "(leftovers: clean --all-unheld)";
    case PIDS_UNPROVEN:
        return "not shown private to this pid namespace (shmwatch runs in one of its own): "
               "creator pids prove nothing (--trust-pids if it is)";
    default:
        return NULL;
    }
}

const struct proc *pid_lookup_find(struct pid_lookup *l, unsigned long ns, pid_t pid)
{
    if (!ns)
        return procs_find(&l->s->procs, pid);
    for (size_t i = 0; i < l->n; i++)
        if (l->cache[i].ns == ns)
            return nspid_index_find(&l->cache[i].idx, pid);
    size_t k = l->n < 8 ? l->n++ : 7; /* past eight namespaces the last slot is reused */
    if (k == 7 && l->cache[k].ns)
        nspid_index_free(&l->cache[k].idx);
    l->cache[k].ns = ns;
    nspid_index_build(&l->cache[k].idx, &l->s->procs, ns);
    return nspid_index_find(&l->cache[k].idx, pid);
}

void pid_lookup_free(struct pid_lookup *l)
{
    for (size_t i = 0; i < l->n; i++)
        nspid_index_free(&l->cache[i].idx);
    l->n = 0;
}
