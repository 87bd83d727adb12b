/* Compiled terminfo entries carried in the binary (generated at build time
 * by src/ui/terminfo_gen.sh), for terminals the system has no entry for. */
#ifndef SHMWATCH_UI_TERMINFO_DATA_H
#define SHMWATCH_UI_TERMINFO_DATA_H

#include <stddef.h>

struct terminfo_entry {
    const char *name; /* the terminal's primary name, as in TERM */
    const unsigned char *data;
    size_t len;
};

extern const struct terminfo_entry terminfo_entries[];
extern const size_t terminfo_nentries;

#endif
