/* capacity_parse_shapes (--sample-shape, --dtype) and capacity_compute on what it
 * parses. The input is "shape spec" NUL "default dtype" NUL, then up to 8
 * bytes each of batch size, workers, prefetch, memory and shm size. */
#include "fuzz.h"

#include "model/capacity.h"

static uint64_t take_u64(const uint8_t **data, size_t *size)
{
    uint64_t v = 0;
    size_t n = *size < 8 ? *size : 8;
    memcpy(&v, *data, n);
    *data += n;
    *size -= n;
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = fuzz_part(&data, &size), *dtype = fuzz_part(&data, &size);
    struct capacity_input in;
    memset(&in, 0, sizeof(in));
    char *cause = NULL;
    int rc = capacity_parse_shapes(spec, *dtype ? dtype : "float32", &in, &cause);
    if (rc < 0) {
        fuzz_check_one_line(cause);
        free(cause);
    } else {
        in.batch_size = take_u64(&data, &size);
        in.workers = take_u64(&data, &size);
        in.prefetch = take_u64(&data, &size);
        in.memory = take_u64(&data, &size);
        in.has_memory = in.memory & 1;
        in.shm_size = take_u64(&data, &size);
        in.has_shm_size = in.shm_size & 1;
        struct capacity_result r;
        cause = NULL;
        if (capacity_compute(&in, &r, &cause) < 0)
            fuzz_check_one_line(cause);
        free(cause);
    }
    free(spec);
    free(dtype);
    return 0;
}
