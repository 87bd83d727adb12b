/* name_facts and name_creator_pid: a segment's name (any bytes but NUL and
 * '/'), torch_<pid>_<n>[_<k>] and __KMP_REGISTERED_LIB_<pid>[_<uid>]. */
#include "fuzz.h"

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = fuzz_cstr(data, size);
    pid_t pid = -1;
    enum seg_kind k = name_facts(name, &pid);
    if (pid < 0)
        abort(); /* a creator pid is positive, or 0 for none */
    (void)seg_kind_name(k);
    pid_t pid2;
    if (name_creator_pid(name, &pid2) != (pid > 0) || pid2 != pid)
        abort();
    free(name);
    return 0;
}
