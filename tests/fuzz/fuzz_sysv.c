/* sysv_parse: the whole text of /proc/sysvipc/shm, header first. */
#include "fuzz.h"

#include "collect/sysv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct sysv_list sl = {0};
    (void)sysv_parse(text, &sl);
    sysv_free(&sl);
    free(text);
    return 0;
}
