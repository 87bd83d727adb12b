/* procs_join_cmdline: /proc/PID/cmdline, NUL-separated and not terminated.
 * The first byte picks the zombie flag and the comm's length. */
#include "fuzz.h"

#include "collect/procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool zombie = data[0] & 1;
    size_t clen = (data[0] >> 1) & 15; /* comm is at most 15 bytes */
    data++;
    size--;
    if (clen > size)
        clen = size;
    char comm[16];
    memcpy(comm, data, clen);
    comm[clen] = '\0';
    data += clen;
    size -= clen;
    /* An exact-size copy: a read past len is caught. */
    uint8_t *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    char *s = procs_join_cmdline((const char *)text, size, comm, zombie);
    if (!s)
        abort();
    free(s);
    free(text);
    return 0;
}
