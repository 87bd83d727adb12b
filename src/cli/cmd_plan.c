/* shmwatch plan: how much /dev/shm a DataLoader needs, every step of the
 * arithmetic shown (model/capacity.c does the arithmetic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/scan.h"

#include "cli/subcommands.h"
#include "cli/options.h"
#include "model/budget.h"
#include "model/model.h"
#include "model/capacity.h"
#include "report/jsonw.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/units.h"

/* Rotating buffers so that one printf can show several figures. */
#define NBUFS 12
#define BUFLEN 40
static char bufs[NBUFS][BUFLEN];
static int nextbuf;

static char *next_buf(void)
{
    return bufs[nextbuf++ % NBUFS];
}

/* "19,267,584" */
static const char *G(uint64_t v)
{
    char *dst = next_buf();
    char digits[32];
    int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < BUFLEN; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            dst[o++] = ',';
        dst[o++] = digits[i];
    }
    dst[o] = '\0';
    return dst;
}

static const char *H(uint64_t v)
{
    return fmt_size(next_buf(), BUFLEN, v);
}

static const char *S(uint64_t v)
{
    return budget_fmt_step(next_buf(), BUFLEN, v);
}

static const char *F(uint64_t v)
{
    return budget_flag_size(next_buf(), BUFLEN, v);
}

/* A size the user gave, as a flag says it exactly (a recommendation is
 * rounded up, F; what was asked for is not): 2g, 512m, 15k or bytes. */
static const char *given(uint64_t v)
{
    char *d = next_buf();
    static const struct {
        uint64_t unit;
        char suffix;
    } units[] = {{1ull << 30, 'g'}, {1ull << 20, 'm'}, {1ull << 10, 'k'}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (v >= units[i].unit && v % units[i].unit == 0) {
            snprintf(d, BUFLEN, "%llu%c", (unsigned long long)(v / units[i].unit),
                     units[i].suffix);
            return d;
        }
    snprintf(d, BUFLEN, "%llu", (unsigned long long)v);
    return d;
}

static void text_samples(struct buf *b, const struct capacity_input *in, const struct capacity_result *r)
{
    buf_adds(b, "1. One sample\n");
    for (size_t i = 0; i < in->ntensors; i++) {
        const struct capacity_tensor *t = &in->tensors[i];
        const struct capacity_tensor_result *tr = &r->t[i];
        buf_printf(b, "   tensor %zu: ", i + 1);
        for (size_t d = 0; d < t->ndims; d++)
            buf_printf(b, "%s%llu", d ? " x " : "", (unsigned long long)t->dims[d]);
        if (t->ndims > 1)
            buf_printf(b, " = %s values", G(tr->elems));
        else
            buf_printf(b, " value%s", tr->elems == 1 ? "" : "s");
        buf_printf(b, " x %u byte%s (%s) = %s byte%s\n", t->elem_size, t->elem_size == 1 ? "" : "s",
                   t->dtype, G(tr->sample_bytes), tr->sample_bytes == 1 ? "" : "s");
    }
    if (in->ntensors > 1)
        buf_printf(b, "   one sample = %s bytes (%s)\n", G(r->sample_bytes), H(r->sample_bytes));

    buf_printf(b, "\n2. One batch (--batch-size %llu)\n", (unsigned long long)in->batch_size);
    buf_adds(b, "   A worker stacks the samples of a batch into one tensor per field, each in\n"
                "   its own shared-memory segment; /dev/shm hands out whole pages of ");
    buf_printf(b, "%s bytes.\n", G(r->page_size));
    for (size_t i = 0; i < in->ntensors; i++) {
        const struct capacity_tensor_result *tr = &r->t[i];
        buf_printf(b, "   tensor %zu: %llu x %s bytes = %s bytes", i + 1,
                   (unsigned long long)in->batch_size, G(tr->sample_bytes), G(tr->batch_bytes));
        if (tr->batch_shm_bytes != tr->batch_bytes)
            buf_printf(b, ", taking %s bytes in whole pages", G(tr->batch_shm_bytes));
        buf_printf(b, " (%s)\n", H(tr->batch_shm_bytes));
    }
    buf_printf(b, "   one batch = %s bytes of data", G(r->batch_bytes));
    if (r->batch_shm_bytes != r->batch_bytes)
        buf_printf(b, ", %s bytes in /dev/shm", G(r->batch_shm_bytes));
    buf_printf(b, " (%s)\n", H(r->batch_shm_bytes));
}

static void text_peak(struct buf *b, const struct capacity_input *in, const struct capacity_result *r)
{
    if (in->workers == 0) {
        buf_adds(b, "\n3. With --workers 0 the main process loads every batch itself: nothing\n"
                    "   passes through /dev/shm, and Docker's default of 64 MiB is enough.\n");
        return;
    }
    buf_adds(b, "\n3. Batches in /dev/shm at the busiest moment\n");
    buf_printf(b, "   %llu worker%s x %llu batches prepared ahead by each (--prefetch-factor) = %s\n",
               (unsigned long long)in->workers, in->workers == 1 ? "" : "s",
               (unsigned long long)r->prefetch, G(r->prefetched));
    buf_printf(b, "   + %llu held by the main process: the batch the training step is using,\n"
                  "     and the next one while it is received or copied to pinned memory\n",
               (unsigned long long)r->held);
    buf_printf(b, "   = %s batches\n", G(r->batches));
    buf_adds(b, "\n4. Peak /dev/shm use\n");
    if (r->peak_held)
        buf_printf(b,
                   "   %s batches x %s bytes is less than the loader holds now, %s bytes (%s):\n"
                   "   the peak is at least that (a sample with several tensors of the\n"
                   "   largest size counts each batch more than once)\n",
                   G(r->batches), G(r->batch_shm_bytes), G(r->shm_peak), S(r->shm_peak));
    else
        buf_printf(b, "   %s batches x %s bytes = %s bytes (%s)\n", G(r->batches),
                   G(r->batch_shm_bytes), G(r->shm_peak), S(r->shm_peak));
    buf_adds(b, "\n5. Recommended --shm-size\n");
    if (r->shm_floored) {
        buf_printf(b, "   %s x 1.5 (a safety margin) = %s, less than Docker's default 64 MiB,\n"
                      "   which is kept: --shm-size=%s\n",
                   S(r->shm_peak), S(r->shm_margin), F(r->rec_shm_size));
    } else {
        buf_printf(b, "   %s x 1.5 (a safety margin) = %s, rounded up to a whole %s: --shm-size=%s\n",
                   S(r->shm_peak), S(r->shm_margin), budget_unit_word(r->rec_shm_size),
                   F(r->rec_shm_size));
    }
    buf_printf(b, "   Docker's default of 64 MiB is %s for this loader.\n",
               r->rec_shm_size > DOCKER_DEFAULT_SHM ? "too small" : "enough");
}

static void text_limits(struct buf *b, const struct capacity_input *in, const struct capacity_result *r)
{
    int step = in->workers ? 6 : 4;
    if (in->has_shm_size) {
        buf_printf(b, "\n%d. Against --shm-size %s\n", step++, given(in->shm_size));
        if (r->shm_tight)
            buf_printf(b, "   fits, but tightly: the peak (%s) is within %s with %s to spare, less\n"
                          "   than the 1.5 x margin of --shm-size=%s.\n",
                       S(r->shm_peak), S(in->shm_size), S(in->shm_size - r->shm_peak),
                       F(r->rec_shm_size));
        else if (r->shm_fits)
            buf_printf(b, "   fits: the peak (%s) is within %s, with %s to spare.\n", S(r->shm_peak),
                       S(in->shm_size), S(in->shm_size - r->shm_peak));
        else
            buf_printf(b, "   does not fit: the peak (%s) is %s more than %s; workers would die with\n"
                          "   \"Bus error\" or \"No space left on device\".\n",
                       S(r->shm_peak), S(r->shm_peak - in->shm_size), S(in->shm_size));
    }
    if (!in->has_memory)
        return;
    buf_printf(b, "\n%d. Against --memory %s\n", step, given(in->memory));
    buf_adds(b, "   Pages in /dev/shm are charged to the container's memory, so -m must hold\n"
                "   the training process, its workers and /dev/shm together.\n");
    if (!r->memory_fits) {
        buf_printf(b, "   does not fit: the peak /dev/shm use (%s) alone reaches the %s limit;\n"
                      "   the OOM killer ends the job first.\n",
                   S(r->shm_peak), S(in->memory));
        return;
    }
    buf_printf(b, "   at the peak: %s - %s of shm = %s left for everything else.\n", S(in->memory),
               S(r->shm_peak), S(r->app_room_peak));
    if (r->shm_not_below_memory)
        buf_printf(b, "   %s /dev/shm size (%s) is not below -m: /dev/shm can never fill, the\n"
                      "   OOM killer fires first. Keep --shm-size well below -m.\n",
                   in->has_shm_size ? "The" : "The recommended", S(r->planned_shm));
    else if (r->planned_shm > 0)
        buf_printf(b, "   if /dev/shm filled up to %s size (%s): %s - %s = %s left.\n",
                   in->has_shm_size ? "its" : "the recommended", S(r->planned_shm), S(in->memory),
                   S(r->planned_shm), S(r->app_room_full));
}

/* What plan --observe saw of the running loader: its group's figures
 * (model/loader.c), kept past the model (no worker or manager lists). */
static void text_observed(struct buf *b, const struct group *ob)
{
    buf_printf(b, "1. What the DataLoader of pid %d holds now\n", (int)ob->main_pid);
    buf_printf(b, "   %zu segment%s, %s bytes (%s), with %zu worker%s\n", ob->batch_segments,
               ob->batch_segments == 1 ? "" : "s", G(ob->batch_segments_bytes),
               H(ob->batch_segments_bytes), ob->nworkers, ob->nworkers == 1 ? "" : "s");
    buf_printf(b,
               "\n2. One batch, as observed\n"
               "   Each batch in flight has one segment of the largest size (%s bytes,\n"
               "   its biggest tensor): %zu of them, so %zu batches are in flight (at\n"
               "   most: a sample with several tensors of that size counts each batch\n"
               "   once per tensor, and the batch below is then a floor).\n",
               G(ob->batch_segment_bytes), ob->batches_in_flight, ob->batches_in_flight);
    buf_printf(b, "   %s bytes / %zu batches = %s bytes per batch in /dev/shm (%s)\n",
               G(ob->batch_segments_bytes), ob->batches_in_flight, G(ob->batch_shm_bytes),
               H(ob->batch_shm_bytes));
}

static void print_text(struct buf *b, const struct capacity_input *in, const struct capacity_result *r,
                       const struct group *ob)
{
    buf_adds(b, "How much /dev/shm this DataLoader needs\n\n");
    if (ob)
        text_observed(b, ob);
    else
        text_samples(b, in, r);
    text_peak(b, in, r);
    text_limits(b, in, r);
    if (r->verdict == PLAN_FITS)
        buf_adds(b, "\nVerdict: fits.\n");
    else if (r->verdict == PLAN_DOES_NOT_FIT)
        buf_adds(b, "\nVerdict: does not fit.\n");
}

static void print_json(struct buf *b, const struct capacity_input *in, const struct capacity_result *r,
                       const struct group *ob)
{
    struct jsonw w;
    jw_init(&w, b);
    jw_obj(&w, NULL);
    jw_u64_or_null(&w, "batch_size", !ob, in->batch_size);
    jw_u64(&w, "workers", in->workers);
    jw_u64(&w, "prefetch_factor", r->prefetch);
    jw_u64(&w, "page_size", r->page_size);
    jw_arr(&w, "tensors");
    for (size_t i = 0; i < in->ntensors; i++) {
        const struct capacity_tensor *t = &in->tensors[i];
        const struct capacity_tensor_result *tr = &r->t[i];
        jw_obj(&w, NULL);
        jw_arr(&w, "shape");
        for (size_t d = 0; d < t->ndims; d++)
            jw_u64(&w, NULL, t->dims[d]);
        jw_arr_end(&w);
        jw_str(&w, "dtype", t->dtype);
        jw_u64(&w, "dtype_bytes", t->elem_size);
        jw_u64(&w, "sample_bytes", tr->sample_bytes);
        jw_u64(&w, "batch_bytes", tr->batch_bytes);
        jw_u64(&w, "batch_shm_bytes", tr->batch_shm_bytes);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_u64_or_null(&w, "sample_bytes", !ob, r->sample_bytes);
    jw_u64(&w, "batch_bytes", r->batch_bytes);
    jw_u64(&w, "batch_shm_bytes", r->batch_shm_bytes);
    jw_u64(&w, "prefetched_batches", r->prefetched);
    jw_u64(&w, "held_batches", r->held);
    jw_u64(&w, "batches_in_shm", r->batches);
    jw_u64(&w, "shm_peak_bytes", r->shm_peak);
    jw_u64(&w, "recommended_shm_size_bytes", r->rec_shm_size);
    jw_str(&w, "recommended_shm_size", r->rec_shm_size ? F(r->rec_shm_size) : NULL);
    jw_u64_or_null(&w, "memory_bytes", in->has_memory, in->memory);
    jw_u64_or_null(&w, "shm_size_bytes", in->has_shm_size, in->shm_size);
    jw_bool_or_null(&w, "shm_fits", in->has_shm_size, r->shm_fits);
    jw_bool_or_null(&w, "memory_fits", in->has_memory, r->memory_fits);
    bool room = in->has_memory && r->memory_fits;
    jw_u64_or_null(&w, "app_room_at_peak_bytes", room, r->app_room_peak);
    jw_u64_or_null(&w, "app_room_shm_full_bytes", room, r->app_room_full);
    jw_str(&w, "verdict", capacity_verdict_name(r->verdict));
    if (ob)
        report_json_observed(&w, ob);
    jw_obj_end(&w);
    buf_addc(b, '\n');
}

/* Scans as --pid PID does and reads the group whose main is PID into ob;
 * returns 0, or 2 with the error said. */
static int observe(pid_t pid, struct group *ob)
{
    struct sysroot sys;
    int rc = sysroot_open_system(&sys, pid);
    if (rc < 0) {
        fprintf(stderr, "shmwatch plan: cannot watch pid %d: %s\n", (int)pid,
                sysroot_pid_why(pid, rc, strerror(-rc)));
        return 2;
    }
    struct scan_opts so = {.sys = &sys};
    struct scan s;
    rc = scan_run(&so, &s);
    sysroot_close(&sys);
    if (rc < 0) {
        fprintf(stderr, "shmwatch plan: cannot watch pid %d: %s\n", (int)pid, strerror(-rc));
        scan_free(&s);
        return 2;
    }
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(&s, &mo, &m);
    const struct group *g = model_find_group(&m, pid);
    rc = 0;
    if (!g || !g->batch_shm_bytes) {
        fprintf(stderr, "shmwatch plan: pid %d is not the main process of a DataLoader %s\n",
                (int)pid, g ? "with a batch in shared memory now" : "group (no workers seen)");
        rc = 2;
    } else {
        *ob = *g; /* its figures; the lists go with the model */
        ob->workers = ob->managers = NULL;
        ob->workers_cap = ob->managers_cap = 0;
    }
    model_free(&m);
    scan_free(&s);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    struct options o;
    int prc;
    if (!usage_parse(CLI_PLAN, argc, argv, &o, &prc))
        return prc;
    options_free(&o); /* what plan keeps is in o's scalars and argv */
    struct capacity_input in = {
        .batch_size = (uint64_t)o.batch_size,
        .workers = (uint64_t)o.workers,
        .prefetch = (uint64_t)o.prefetch,
        .memory = o.memory,
        .has_memory = o.memory_set,
        .shm_size = o.shm_size,
        .has_shm_size = o.shm_size_set,
    };
    struct group ob = {0};
    if (o.observe) {
        if (o.batch_size_set || o.sample_shape || o.dtype_set)
            return usage_error("plan", "--observe takes the batch from the loader: no %s",
                               o.batch_size_set ? "--batch-size"
                               : o.sample_shape ? "--sample-shape"
                                                : "--dtype");
        int rc = observe((pid_t)o.observe, &ob);
        if (rc)
            return rc;
        in.observed_batch_shm = ob.batch_shm_bytes;
        in.observed_held = ob.batch_segments_bytes;
        if (!o.workers_set)
            in.workers = ob.nworkers;
        if (!o.prefetch_set)
            in.prefetch = loader_prefetch_of(&ob);
    } else if (!o.batch_size_set || !o.sample_shape || !o.workers_set) {
        return usage_error("plan", "%s is required",
                           !o.batch_size_set ? "--batch-size"
                           : !o.sample_shape ? "--sample-shape"
                                             : "--workers");
    }
    long page = sysconf(_SC_PAGESIZE);
    in.page_size = page > 0 ? (uint64_t)page : 0;

    /* capacity_parse_shapes checks the dtype of every tensor: --dtype, or its own. */
    char *cause = NULL;
    struct capacity_result r;
    if ((!o.observe && capacity_parse_shapes(o.sample_shape, o.dtype, &in, &cause) < 0) ||
        capacity_compute(&in, &r, &cause) < 0) {
        fprintf(stderr, "shmwatch plan: %s\n", cause);
        free(cause);
        return 2;
    }
    struct buf out;
    buf_init(&out);
    if (o.json)
        print_json(&out, &in, &r, o.observe ? &ob : NULL);
    else
        print_text(&out, &in, &r, o.observe ? &ob : NULL);
    output_write(&out);
    buf_free(&out);
    return output_status("plan", NULL);
}
