/* cli_parse on an arbitrary command line (the input split at NUL bytes
 * into at most 16 arguments), for every command. A refusal must be one
 * line of valid UTF-8; the --help text is made too. */
#include "fuzz.h"

#include "cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[18] = {"shmwatch"};
    int argc = 1;
    while (size > 0 && argc < 17)
        argv[argc++] = fuzz_part(&data, &size);
    argv[argc] = NULL;
    for (int cmd = 0; cmd < CLI_NCMDS; cmd++) {
        struct options o;
        char *err = NULL;
        if (cli_parse((enum cli_cmd)cmd, argc, argv, &o, &err) != 0)
            fuzz_check_utf8_line(err);
        else if (o.mode == MODE_HELP)
            free(cli_usage((enum cli_cmd)cmd));
        options_free(&o);
    }
    for (int i = 1; i < argc; i++)
        free(argv[i]);
    return 0;
}
