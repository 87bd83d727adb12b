/* The memory budget. A tmpfs page is charged to the memory cgroup of the
 * process that first wrote it, so /dev/shm and the application share one
 * limit: whichever runs out first decides how a DataLoader dies, with
 * "No space left on device" / SIGBUS (the tmpfs is full) or an OOM kill
 * (the limit is reached). */
#include "model/budget.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/units.h"
#include "util/xalloc.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

enum { MAX_NOTES = 12 };

struct notes {
    char *text[MAX_NOTES];
    enum verdict sev[MAX_NOTES]; /* VERDICT_OK: information only */
    size_t n;
};

__attribute__((format(printf, 3, 4))) static void note(struct notes *ns, enum verdict sev,
                                                       const char *fmt, ...)
{
    if (ns->n == MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    ns->sev[ns->n] = sev;
    ns->text[ns->n++] = str_vprintf(fmt, ap);
    va_end(ap);
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t budget_scale_up(uint64_t x, uint64_t num, uint64_t den)
{
    uint64_t p;
    if (den == 0 || __builtin_mul_overflow(x, num, &p))
        return UINT64_MAX;
    return p / den + (p % den != 0);
}

uint64_t budget_round_up(uint64_t bytes)
{
    uint64_t unit = bytes <= GiB ? MiB : GiB;
    uint64_t r = budget_scale_up(bytes, 1, unit);
    return r > UINT64_MAX / unit ? UINT64_MAX : r * unit;
}

const char *budget_flag_size(char *dst, size_t n, uint64_t bytes)
{
    if (bytes >= GiB && bytes % GiB == 0)
        snprintf(dst, n, "%llug", (unsigned long long)(bytes / GiB));
    else
        snprintf(dst, n, "%llum", (unsigned long long)budget_scale_up(bytes, 1, MiB));
    return dst;
}

const char *budget_fmt_step(char *dst, size_t n, uint64_t bytes)
{
    if (bytes < MiB / 8)
        return fmt_size(dst, n, bytes);
    if (bytes < GiB)
        snprintf(dst, n, "%.1f MiB", (double)bytes / (double)MiB);
    else
        snprintf(dst, n, "%.2f GiB", (double)bytes / (double)GiB);
    return dst;
}

const char *budget_unit_word(uint64_t rounded)
{
    return rounded > GiB ? "GiB" : "MiB";
}

uint64_t budget_rec_shm(uint64_t peak, uint64_t *margin, bool *floored)
{
    *margin = budget_scale_up(peak, 3, 2);
    uint64_t rec = *margin == UINT64_MAX ? UINT64_MAX : budget_round_up(*margin);
    *floored = rec < DOCKER_DEFAULT_SHM;
    return *floored ? DOCKER_DEFAULT_SHM : rec;
}

uint64_t budget_rec_memory(uint64_t peak_app, uint64_t rec_shm, uint64_t *margin)
{
    *margin = budget_scale_up(add_sat(peak_app, rec_shm), 6, 5);
    return budget_round_up(*margin);
}

/* Human sizes for sentences; each call uses the next of a few buffers. */
struct sizes {
    char s[8][32];
    int next;
};

static const char *sz(struct sizes *z, uint64_t v)
{
    char *d = z->s[z->next++ % 8];
    return fmt_size(d, sizeof(z->s[0]), v);
}

static const char *step(struct sizes *z, uint64_t v)
{
    char *d = z->s[z->next++ % 8];
    return budget_fmt_step(d, sizeof(z->s[0]), v);
}

/* This mount's name, and the other shm mounts' of its cgroup, in a
 * sentence that names both. */
static const char *here(const struct budget_input *in)
{
    return in->path ? in->path : "/dev/shm";
}

static const char *others(const struct budget_input *in)
{
    return in->other ? in->other : "the other shm mounts";
}

static void choose_limit(const struct budget_input *in, const struct cgroup_info *cg,
                         struct budget *out, struct notes *ns, struct sizes *z)
{
    if (cg && cg->has_limit && (in->mem_total == 0 || cg->limit <= in->mem_total)) {
        out->limit = cg->limit;
        out->limit_source = LIMIT_CGROUP;
        return;
    }
    out->limit = in->mem_total;
    out->limit_source = LIMIT_MEMTOTAL;
    if (cg && cg->has_limit)
        note(ns, VERDICT_OK,
             "The memory cgroup's limit (%s) is above the machine's memory: the budget counts "
             "against MemTotal (%s).",
             sz(z, cg->limit), sz(z, in->mem_total));
    else if (cg)
        note(ns, VERDICT_OK,
             "The memory cgroup %s has no limit: the budget counts against the machine's "
             "memory (MemTotal %s).",
             cg->path ? cg->path : "", sz(z, in->mem_total));
    else
        note(ns, VERDICT_OK,
             "No memory cgroup was found: the budget counts against the machine's memory "
             "(MemTotal %s).",
             sz(z, in->mem_total));
}

static void check_shm(const struct budget_input *in, const struct budget *b, double warn_pct,
                      double crit_pct, struct notes *ns, struct sizes *z)
{
    const char *against = b->limit_source == LIMIT_CGROUP ? "memory limit" : "machine's memory";
    uint64_t room = sub0(sub0(b->limit, b->app), b->shm_other);
    if (b->shm_size > 0 && b->limit > 0 && b->shm_size > room && b->shm_other)
        note(ns, VERDICT_WARN,
             "%s (%s) is larger than the memory left for it under the %s (%s - %s of app - %s "
             "on %s, charged to the same cgroup, = %s): the OOM killer fires while %s of %s are "
             "still free, so expect an OOM kill rather than \"No space left on device\".",
             here(in), sz(z, b->shm_size), against, sz(z, b->limit), sz(z, b->app),
             sz(z, b->shm_other), others(in), sz(z, room), sz(z, b->shm_size - room), here(in));
    else if (b->shm_size > 0 && b->limit > 0 && b->shm_size > room)
        note(ns, VERDICT_WARN,
             "/dev/shm (%s) is larger than the memory left for it under the %s (%s - %s of "
             "app = %s): the OOM killer fires while %s of /dev/shm are still free, so expect "
             "an OOM kill rather than \"No space left on device\".",
             sz(z, b->shm_size), against, sz(z, b->limit), sz(z, b->app), sz(z, room),
             sz(z, b->shm_size - room));
    if (b->shm_size == DOCKER_DEFAULT_SHM && in->workers_present) {
        char f[32];
        if (b->rec_shm_size > DOCKER_DEFAULT_SHM)
            note(ns, VERDICT_WARN,
                 "/dev/shm is 64 MiB, Docker's default, and DataLoader workers are running: "
                 "their peak so far (%s) needs --shm-size=%s with a safety margin; when /dev/shm "
                 "fills, workers die with \"Bus error\" or \"No space left on device\".",
                 sz(z, b->peak_shm), budget_flag_size(f, sizeof(f), b->rec_shm_size));
        else
            note(ns, VERDICT_WARN,
                 "/dev/shm is 64 MiB, Docker's default, and DataLoader workers are running: a "
                 "few batches in flight fill it, and then workers die with \"Bus error\" or "
                 "\"No space left on device\". The peak so far (%s) fits; before raising the "
                 "batch size, workers or prefetch factor, check the need with shmwatch plan.",
                 sz(z, b->peak_shm));
    }
    if (b->shm_size > 0) {
        double pct = (double)b->shm_used * 100.0 / (double)b->shm_size;
        if (pct >= crit_pct)
            note(ns, VERDICT_CRITICAL,
                 "/dev/shm is %.1f%% full (%s of %s; critical at %.0f%%): the next writes fail "
                 "with \"No space left on device\" or a Bus error.",
                 pct, sz(z, b->shm_used), sz(z, b->shm_size), crit_pct);
        else if (pct >= warn_pct)
            note(ns, VERDICT_WARN, "/dev/shm is %.1f%% full (%s of %s; warning at %.0f%%).", pct,
                 sz(z, b->shm_used), sz(z, b->shm_size), warn_pct);
    }
    if (in->inodes > 0) {
        /* Every file takes an inode: a tmpfs mounted with nr_inodes runs
         * out of them (thousands of leftovers) with its bytes still free. */
        uint64_t iused = in->inodes - in->inodes_free;
        double ipct = (double)iused * 100.0 / (double)in->inodes;
        if (in->inodes_free == 0 || ipct >= crit_pct)
            note(ns, VERDICT_CRITICAL,
                 "/dev/shm has %llu of its %llu inodes in use (nr_inodes; critical at %.0f%%): "
                 "creating a segment fails with \"No space left on device\" however many "
                 "bytes are free; remove leftovers (shmwatch clean) or mount it with a larger "
                 "nr_inodes.",
                 (unsigned long long)iused, (unsigned long long)in->inodes, crit_pct);
        else if (ipct >= warn_pct)
            note(ns, VERDICT_WARN,
                 "/dev/shm has %llu of its %llu inodes in use (nr_inodes; warning at %.0f%%).",
                 (unsigned long long)iused, (unsigned long long)in->inodes, warn_pct);
    }
    if (in->pending > 0 && in->pending > in->shm_avail)
        note(ns, VERDICT_CRITICAL,
             "Live segments have %s reserved but not yet written, more than the %s free on "
             "/dev/shm: when they are written, the writing process dies with SIGBUS "
             "(\"Bus error\").",
             sz(z, in->pending), sz(z, in->shm_avail));
    else if (in->pending > 0 && b->limit_source == LIMIT_CGROUP && in->pending > b->headroom)
        note(ns, VERDICT_CRITICAL,
             "Live segments have %s reserved but not yet written, more than the %s left under "
             "the memory limit: writing them triggers the OOM killer.",
             sz(z, in->pending), sz(z, b->headroom));
}

/* The cgroup's OOM kills: the kernel's count is cumulative, so only kills
 * seen rising between scans (in->oom_recent) make the verdict critical; older
 * ones are information, the proof that the limit was hit before. */
static void check_oom(const struct budget_input *in, const struct cgroup_info *cg,
                      struct budget *b, struct notes *ns, struct sizes *z)
{
    if (!cg || !cg->has_oom_kills || cg->oom_kills == 0)
        return;
    unsigned long long all = (unsigned long long)cg->oom_kills;
    unsigned long long recent = (unsigned long long)in->oom_recent;
    char hit[96];
    if (b->limit_source == LIMIT_CGROUP)
        snprintf(hit, sizeof(hit), "the memory limit (-m, %s) was hit", sz(z, b->limit));
    else
        snprintf(hit, sizeof(hit), "the machine ran out of memory (no cgroup limit applies)");
    if (recent > 0) {
        b->oom_recent = in->oom_recent;
        note(ns, VERDICT_CRITICAL,
             "The OOM killer has just ended %llu %s in the memory cgroup (%llu OOM %s since it "
             "was made): %s. A DataLoader worker killed this way dies with \"killed by signal: "
             "Killed\"; raise -m or lower what the job holds (see the recommendation).",
             recent, recent == 1 ? "process" : "processes", all, all == 1 ? "kill" : "kills",
             hit);
    } else {
        note(ns, VERDICT_OK,
             "The memory cgroup has had %llu OOM %s since it was made: %s at least once.", all,
             all == 1 ? "kill" : "kills", hit);
    }
}

/* A restarted container's mount that still holds its last run's orphans:
 * still charged, they leave the new run that much less room. */
static void check_leftover(const struct budget_input *in, const struct budget *b,
                           struct notes *ns, struct sizes *z)
{
    if (!in->leftover)
        return;
    note(ns, VERDICT_WARN,
         "An earlier run of this container left %s of orphans on its /dev/shm, still charged "
         "to the %s limit: clean them first (shmwatch clean), before the new run needs the room.",
         sz(z, in->leftover), sz(z, b->limit));
}

/* The application and the shm mounts of its cgroup against the memory
 * limit: each figure named, adding up to the percentage's numerator. */
static void check_memory(const struct budget_input *in, const struct budget *b,
                         double warn_pct, double crit_pct, struct notes *ns, struct sizes *z)
{
    if (b->limit_source != LIMIT_CGROUP || b->limit == 0)
        return;
    uint64_t used = add_sat(add_sat(b->app, b->shm_used), b->shm_other);
    double pct = (double)used * 100.0 / (double)b->limit;
    bool crit = pct >= crit_pct;
    if (!crit && pct < warn_pct)
        return;
    enum verdict sev = crit ? VERDICT_CRITICAL : VERDICT_WARN;
    const char *level = crit ? "critical" : "warning";
    const char *end = crit ? ": the OOM killer is close." : ".";
    double at = crit ? crit_pct : warn_pct;
    if (b->shm_other)
        note(ns, sev,
             "The application, %s and %s, the shm mounts of one cgroup, together use %.1f%% of "
             "the memory limit (%s + %s + %s of %s; %s at %.0f%%)%s",
             here(in), others(in), pct, sz(z, b->app), sz(z, b->shm_used), sz(z, b->shm_other),
             sz(z, b->limit), level, at, end);
    else
        note(ns, sev,
             "The application and /dev/shm together use %.1f%% of the memory limit (%s + %s of "
             "%s; %s at %.0f%%)%s",
             pct, sz(z, b->app), sz(z, b->shm_used), sz(z, b->limit), level, at, end);
}

/* The --shm-size part of the recommendation: the least that fits, and
 * against the current size "too small", "holds the peak, not its margin"
 * (above the peak, below its 1.5 x), or "at least" with the spare room, so
 * that a value below the current one never reads as a cut; "as it is" when
 * the current size is kept below Docker's default (recommend). */
static void recommend_shm(struct buf *o, const struct budget *b, uint64_t shm15, bool floored,
                          bool keep, struct sizes *z)
{
    char f[32];
    budget_flag_size(f, sizeof(f), b->rec_shm_size);
    bool fits = b->shm_size > 0 && b->rec_shm_size <= b->shm_size;
    if (keep)
        buf_adds(o, "--shm-size as it is");
    else
        buf_printf(o, "--shm-size%s%s", fits ? " at least " : "=", f);
    buf_printf(o, " (peak shm %s x 1.5 = %s, rounded up to a whole %s%s", step(z, b->peak_shm),
               step(z, shm15), budget_unit_word(b->rec_shm_size),
               floored && !keep ? ", and no less than Docker's default 64 MiB" : "");
    if (fits)
        buf_printf(o, "; the current %s fits: keep it, %s spare above the peak)",
                   sz(z, b->shm_size), sz(z, sub0(b->shm_size, b->peak_shm)));
    else if (b->shm_size > b->peak_shm) /* as plan says: fits, but tightly */
        buf_printf(o, "; the current %s holds the peak, not its margin)", sz(z, b->shm_size));
    else if (b->shm_size > 0)
        buf_printf(o, "; the current %s is too small)", sz(z, b->shm_size));
    else
        buf_adds(o, ")");
}

/* The -m part, the same way against the memory cgroup's limit (none when
 * the budget counts against MemTotal); the other shm mounts of the cgroup
 * (in->other) count at their own recommended sizes, and the spare room
 * above what they hold now. */
static void recommend_memory(struct buf *o, const struct budget_input *in, const struct budget *b,
                             uint64_t mem12, struct sizes *z)
{
    char f[32];
    budget_flag_size(f, sizeof(f), b->rec_memory);
    bool limited = b->limit_source == LIMIT_CGROUP && b->limit > 0;
    bool fits = limited && b->rec_memory <= b->limit;
    buf_printf(o, "-m%s%s ((app peak %s + shm %s", fits ? " at least " : " ", f,
               step(z, b->peak_app), step(z, b->rec_shm_size));
    if (in->shm_other_rec)
        buf_printf(o, " + %s recommended for %s", step(z, in->shm_other_rec), others(in));
    buf_printf(o, ") x 1.2 = %s, rounded up to a whole %s", step(z, mem12),
               budget_unit_word(b->rec_memory));
    uint64_t peaks = add_sat(add_sat(b->peak_app, b->peak_shm), b->shm_other);
    if (fits && b->shm_other)
        buf_printf(o,
                   "; the current %s fits: keep it, %s spare above the peaks and the %s now on %s)",
                   sz(z, b->limit), sz(z, sub0(b->limit, peaks)), step(z, b->shm_other),
                   others(in));
    else if (fits)
        buf_printf(o, "; the current %s fits: keep it, %s spare above the peaks)", sz(z, b->limit),
                   sz(z, sub0(b->limit, peaks)));
    else if (limited)
        buf_printf(o, "; the current %s is too small)", sz(z, b->limit));
    else
        buf_adds(o, ")");
}

static void recommend(const struct budget_input *in, struct budget *b, struct notes *ns,
                      struct sizes *z)
{
    b->peak_shm = in->peak_shm > b->shm_used ? in->peak_shm : b->shm_used;
    b->peak_app = in->peak_app > b->app ? in->peak_app : b->app;
    if (b->peak_shm == 0)
        return;
    uint64_t shm15;
    bool floored;
    b->rec_shm_size = budget_rec_shm(b->peak_shm, &shm15, &floored);
    /* The floor keeps a new /dev/shm at Docker's default at least; a current
     * one below it that holds peak x 1.5 is kept as it is (podman's default
     * 65536k is 62.5 MiB), and -m then counts all of it. */
    bool keep = floored && b->shm_size >= budget_round_up(shm15) && b->shm_size < b->rec_shm_size;
    if (keep)
        b->rec_shm_size = b->shm_size;
    uint64_t mem12;
    b->rec_memory =
        budget_rec_memory(add_sat(b->peak_app, in->shm_other_rec), b->rec_shm_size, &mem12);
    struct buf o;
    buf_init(&o);
    buf_adds(&o, "Recommended: ");
    recommend_shm(&o, b, shm15, floored, keep, z);
    buf_adds(&o, " and ");
    recommend_memory(&o, in, b, mem12, z);
    buf_adds(&o, ".");
    note(ns, VERDICT_OK, "%s", o.data);
    buf_free(&o);
}

void budget_compute(const struct budget_input *in, struct budget *out)
{
    memset(out, 0, sizeof(*out));
    const struct cgroup_info *cg = in->cg && in->cg->present ? in->cg : NULL;
    double warn_pct = in->warn_pct > 0 ? in->warn_pct : 80.0;
    double crit_pct = in->crit_pct > 0 ? in->crit_pct : 95.0;
    struct notes ns = {0};
    struct sizes z = {0};

    out->shm_size = in->shm_size;
    out->shm_used = in->shm_used;
    out->shm_other = in->shm_other;
    out->app = cg ? cg->anon : in->rss_anon_sum;
    choose_limit(in, cg, out, &ns, &z);
    out->headroom = sub0(sub0(sub0(out->limit, out->app), out->shm_used), out->shm_other);
    out->shm_effective = in->shm_avail < out->headroom ? in->shm_avail : out->headroom;

    recommend(in, out, &ns, &z); /* information, listed last; check_shm refers to it */
    check_oom(in, cg, out, &ns, &z); /* a kill that has happened comes before a risk */
    check_shm(in, out, warn_pct, crit_pct, &ns, &z);
    check_leftover(in, out, &ns, &z);
    check_memory(in, out, warn_pct, crit_pct, &ns, &z);

    /* Most important first: critical, then warnings, then information. */
    out->advice = ns.n ? xcalloc(ns.n, sizeof(*out->advice)) : NULL;
    for (int sev = VERDICT_CRITICAL; sev >= VERDICT_OK; sev--)
        for (size_t i = 0; i < ns.n; i++)
            if ((int)ns.sev[i] == sev)
                out->advice[out->nadvice++] = ns.text[i];
    for (size_t i = 0; i < ns.n; i++)
        if (ns.sev[i] > out->verdict)
            out->verdict = ns.sev[i];
}

void budget_free(struct budget *b)
{
    for (size_t i = 0; i < b->nadvice; i++)
        free(b->advice[i]);
    free(b->advice);
    memset(b, 0, sizeof(*b));
}

const char *verdict_name(enum verdict v)
{
    switch (v) {
    case VERDICT_WARN: return "warn";
    case VERDICT_CRITICAL: return "critical";
    default: return "ok";
    }
}
