/* The plan calculator. A DataLoader worker collates each batch into one
 * tensor per field of the sample, allocated in shared memory, and hands it to
 * the main process through a queue; every such tensor is its own /dev/shm
 * segment, and tmpfs allocates whole pages. At the busiest moment the
 * workers have prefetch_factor batches each in flight and the main process
 * holds PLAN_MAIN_HELD more. */
#include "model/capacity.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/budget.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/xalloc.h"

static const struct {
    const char *name;
    const char *canonical;
    unsigned size;
} dtypes[] = {
    {"float32", "float32", 4}, {"float", "float32", 4},     {"float64", "float64", 8},
    {"double", "float64", 8},  {"float16", "float16", 2},   {"half", "float16", 2},
    {"bfloat16", "bfloat16", 2}, {"uint8", "uint8", 1},     {"int8", "int8", 1},
    {"int16", "int16", 2},     {"short", "int16", 2},       {"int32", "int32", 4},
    {"int", "int32", 4},       {"int64", "int64", 8},       {"long", "int64", 8},
    {"bool", "bool", 1},
};

bool capacity_dtype(const char *name, const char **canonical, unsigned *size)
{
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        if (strcasecmp(name, dtypes[i].name) == 0) {
            *canonical = dtypes[i].canonical;
            *size = dtypes[i].size;
            return true;
        }
    }
    return false;
}

/* Sets *cause to the message, escaped: it quotes the user's text, whose
 * newlines or escape sequences must not split the line or reach the
 * terminal (the fixed text is printable ASCII, which escaping keeps). */
__attribute__((format(printf, 2, 3))) static int fail(char **cause, const char *fmt, ...)
{
    if (cause) {
        va_list ap;
        va_start(ap, fmt);
        char *raw = str_vprintf(fmt, ap);
        va_end(ap);
        *cause = esc_term_dup(raw);
        free(raw);
    }
    return -EINVAL;
}

static int unknown_dtype(char **cause, const char *name)
{
    return fail(cause,
                "unknown dtype '%s' (known: float32, float64, float16, bfloat16, uint8, int8, "
                "int16, int32, int64, bool)",
                name);
}

/* One dimension: a whole number above zero, digits only. Returns 0,
 * -EINVAL or -EOVERFLOW. */
static int parse_dim(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return -EINVAL;
    uint64_t v = 0;
    bool big = false;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -EINVAL;
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
            big = true;
    }
    if (big)
        return -EOVERFLOW;
    *out = v;
    return v > 0 ? 0 : -EINVAL;
}

static int parse_tensor(char *spec, const char *default_dtype, struct capacity_tensor *t,
                        char **cause)
{
    const char *dtype = default_dtype;
    char *colon = strchr(spec, ':');
    if (colon) {
        *colon = '\0';
        dtype = colon + 1;
    }
    if (!capacity_dtype(dtype, &t->dtype, &t->elem_size))
        return unknown_dtype(cause, dtype);
    t->ndims = 0;
    for (char *p = spec;;) {
        size_t len = strcspn(p, "xX*");
        if (t->ndims == PLAN_MAX_DIMS)
            return fail(cause, "sample shape '%s' has more than %d dimensions", spec,
                        PLAN_MAX_DIMS);
        int rc = parse_dim(p, len, &t->dims[t->ndims++]);
        if (rc < 0) {
            if (rc == -EOVERFLOW) /* the dimension is all digits */
                fail(cause, "sample shape '%s': the dimension %.*s does not fit in 64 bits", spec,
                     (int)len, p);
            else
                fail(cause,
                     "bad sample shape '%s': each dimension must be a whole number above 0, "
                     "dimensions separated by 'x' (e.g. 3x224x224)",
                     spec);
            return rc;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return 0;
}

int capacity_parse_shapes(const char *spec, const char *default_dtype, struct capacity_input *in,
                      char **cause)
{
    in->ntensors = 0;
    const char *canonical;
    unsigned size;
    if (!capacity_dtype(default_dtype, &canonical, &size))
        return unknown_dtype(cause, default_dtype); /* even when every tensor names its own */
    if (!spec || !*spec)
        return fail(cause, "the sample shape is empty (e.g. --sample-shape 3x224x224,1)");
    if (spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,"))
        return fail(cause, "bad sample shape '%s': an empty tensor between commas", spec);
    char *copy = xstrdup(spec);
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        for (size_t n = strlen(tok); n > 0 && tok[n - 1] == ' '; n--)
            tok[n - 1] = '\0';
        if (in->ntensors == PLAN_MAX_TENSORS) {
            rc = fail(cause, "more than %d tensors per sample", PLAN_MAX_TENSORS);
            break;
        }
        rc = parse_tensor(tok, default_dtype, &in->tensors[in->ntensors], cause);
        if (rc < 0)
            break;
        in->ntensors++;
    }
    free(copy);
    return rc;
}

static int overflow(char **cause, const char *what)
{
    fail(cause, "the %s does not fit in 64 bits: the figures are too large", what);
    return -EOVERFLOW;
}

static int tensor_sizes(const struct capacity_input *in, struct capacity_result *r, char **cause)
{
    for (size_t i = 0; i < in->ntensors; i++) {
        const struct capacity_tensor *t = &in->tensors[i];
        struct capacity_tensor_result *tr = &r->t[i];
        tr->elems = 1;
        for (size_t d = 0; d < t->ndims; d++)
            if (__builtin_mul_overflow(tr->elems, t->dims[d], &tr->elems))
                return overflow(cause, "sample shape");
        if (__builtin_mul_overflow(tr->elems, t->elem_size, &tr->sample_bytes) ||
            __builtin_add_overflow(r->sample_bytes, tr->sample_bytes, &r->sample_bytes))
            return overflow(cause, "sample size");
        uint64_t pages;
        if (__builtin_mul_overflow(tr->sample_bytes, in->batch_size, &tr->batch_bytes) ||
            __builtin_add_overflow(tr->batch_bytes, r->page_size - 1, &pages) ||
            __builtin_mul_overflow(pages / r->page_size, r->page_size, &tr->batch_shm_bytes) ||
            __builtin_add_overflow(r->batch_bytes, tr->batch_bytes, &r->batch_bytes) ||
            __builtin_add_overflow(r->batch_shm_bytes, tr->batch_shm_bytes, &r->batch_shm_bytes))
            return overflow(cause, "batch size in bytes");
    }
    return 0;
}

static void check_limits(const struct capacity_input *in, struct capacity_result *r)
{
    if (in->has_shm_size) {
        r->shm_fits = r->shm_peak <= in->shm_size;
        r->shm_tight = r->shm_fits && in->shm_size < budget_round_up(r->shm_margin);
    }
    if (in->has_memory) {
        r->planned_shm = in->has_shm_size ? in->shm_size : r->rec_shm_size;
        r->memory_fits = r->shm_peak < in->memory;
        r->shm_not_below_memory = r->planned_shm >= in->memory;
        r->app_room_peak = r->memory_fits ? in->memory - r->shm_peak : 0;
        r->app_room_full = r->shm_not_below_memory ? 0 : in->memory - r->planned_shm;
    }
    bool fits = (!in->has_shm_size || r->shm_fits) && (!in->has_memory || r->memory_fits);
    if (!in->has_shm_size && !in->has_memory)
        r->verdict = PLAN_UNCHECKED;
    else
        r->verdict = fits ? PLAN_FITS : PLAN_DOES_NOT_FIT;
}

int capacity_compute(const struct capacity_input *in, struct capacity_result *r, char **cause)
{
    memset(r, 0, sizeof(*r));
    bool observed = in->observed_batch_shm > 0;
    if (in->batch_size == 0 && !observed)
        return fail(cause, "the batch size must be at least 1");
    if (in->ntensors == 0 && !observed)
        return fail(cause, "the sample has no tensors");
    r->prefetch = in->prefetch ? in->prefetch : PLAN_DEFAULT_PREFETCH;
    r->page_size = in->page_size ? in->page_size : PLAN_DEFAULT_PAGE;
    if (observed) {
        r->batch_bytes = r->batch_shm_bytes = in->observed_batch_shm;
    } else {
        int rc = tensor_sizes(in, r, cause);
        if (rc < 0)
            return rc;
    }
    if (in->workers > 0) {
        r->held = PLAN_MAIN_HELD;
        if (__builtin_mul_overflow(in->workers, r->prefetch, &r->prefetched) ||
            __builtin_add_overflow(r->prefetched, r->held, &r->batches))
            return overflow(cause, "number of batches in flight");
        if (__builtin_mul_overflow(r->batches, r->batch_shm_bytes, &r->shm_peak))
            return overflow(cause, "peak shared memory");
    }
    if (in->observed_held > r->shm_peak) {
        r->shm_peak = in->observed_held;
        r->peak_held = true;
    }
    /* Every recommendation is at least Docker's default, that of no workers
     * (a peak of 0) too: not 0, which a script would pass on as --shm-size 0. */
    r->rec_shm_size = budget_rec_shm(r->shm_peak, &r->shm_margin, &r->shm_floored);
    if (r->rec_shm_size == UINT64_MAX)
        return overflow(cause, "recommended --shm-size");
    check_limits(in, r);
    return 0;
}

const char *capacity_verdict_name(enum capacity_verdict v)
{
    switch (v) {
    case PLAN_FITS: return "fits";
    case PLAN_DOES_NOT_FIT: return "does_not_fit";
    default: return "unchecked";
    }
}
