#include "util/torchprint.h"

#include <string.h>

const struct torch_comm_name torch_comm_names[] = {
    {"pt_data_worker", TORCH_COMM_WORKER},
    {"pt_multiprocess", TORCH_COMM_WORKER},
    {"pt_thread_data_", TORCH_COMM_WORKER},
    {"pt_data_pin", TORCH_COMM_PIN},
    {"torch_shm_manag", TORCH_COMM_MANAGER},
    {"pt_elastic", TORCH_COMM_LAUNCHER},
};
const size_t torch_ncomm_names = sizeof(torch_comm_names) / sizeof(torch_comm_names[0]);

/* The families' prefixes, "pt_" and "torch_", tested byte by byte (a
 * comm is NUL-terminated, so no test reads past its end). */
bool torchprint_comm_maybe(const char *c)
{
    if (c[0] == 'p')
        return c[1] == 't' && c[2] == '_';
    return c[0] == 't' && c[1] == 'o' && c[2] == 'r' && c[3] == 'c' && c[4] == 'h' && c[5] == '_';
}

/* Every name of the table is in a family (test_torchprint checks it): most
 * processes (python3, bash, kernel threads) are told apart by their first
 * bytes, without a strcmp per name of the table. */
enum torch_comm torchprint_comm(const char *comm)
{
    if (!torchprint_comm_maybe(comm))
        return TORCH_COMM_NONE;
    for (size_t i = 0; i < torch_ncomm_names; i++)
        if (strcmp(comm, torch_comm_names[i].comm) == 0)
            return torch_comm_names[i].what;
    return TORCH_COMM_NONE;
}

bool torchprint_signals_maybe(uint64_t sigcatch)
{
    return (sigcatch & TORCHPRINT_WORKER_SIGS) == TORCHPRINT_WORKER_SIGS;
}

bool torchprint_worker_signals(uint64_t sigcatch)
{
    return torchprint_signals_maybe(sigcatch) && !(sigcatch & TORCHPRINT_FAULTHANDLER_SIGS);
}

bool torchprint_libtorch(const char *text, size_t len)
{
    static const char lib[] = "/libtorch";
    return memmem(text, len, lib, sizeof(lib) - 1) != NULL;
}

bool torchprint_forkserver(const char *cmdline)
{
    static const char code[] = "from multiprocessing.forkserver import main";
    const char *word = cmdline ? strchr(cmdline, ' ') : NULL; /* after the interpreter */
    bool value = false; /* the word before was -X or -W */
    while (word) {
        word++;
        const char *end = strchr(word, ' ');
        size_t n = end ? (size_t)(end - word) : strlen(word);
        if (!value && n == 2 && word[0] == '-' && word[1] == 'c')
            return end && strncmp(end + 1, code, sizeof(code) - 1) == 0;
        if (!value && (n < 2 || word[0] != '-'))
            return false;
        value = !value && n == 2 && (word[1] == 'X' || word[1] == 'W');
        word = end;
    }
    return false;
}
