/* options_parse on an arbitrary command line (the input split at NUL bytes
 * into at most 16 arguments). A refusal must be one line of valid UTF-8. */
#include "fuzz.h"

#include "cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[18] = {"shmwatch"};
    int argc = 1;
    while (size > 0 && argc < 17)
        argv[argc++] = fuzz_part(&data, &size);
    argv[argc] = NULL;
    struct options o;
    char *err = NULL;
    if (options_parse(argc, argv, &o, &err) != 0)
        fuzz_check_utf8_line(err);
    options_free(&o);
    for (int i = 1; i < argc; i++)
        free(argv[i]);
    return 0;
}
