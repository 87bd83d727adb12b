/* One process's holders of the watched devices: its fd/ entries (one stat
 * each) and its mappings, through PROCMAP_QUERY where the kernel has it
 * (Linux 6.11+: no text to format or parse) and else through the maps text,
 * each line rejected on its device field before anything else is parsed.
 * A holder's name (a readlink, or a mapping's path) and the stat of a
 * mapped-only inode are taken once per inode per scan, and never for inodes
 * the mount listing already has: the model takes those from the listing. */
#ifndef SHMWATCH_PIDSCAN_H
#define SHMWATCH_PIDSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/holders.h"
#include "util/warn.h"

struct pidscan;

/* devs must outlive the pidscan. */
struct pidscan *pidscan_new(const dev_t *devs, size_t ndevs, struct holder_list *out,
                            struct warnings *w);
void pidscan_free(struct pidscan *ps);

/* An inode the mount listing has: its holders need no name or stat. */
void pidscan_known(struct pidscan *ps, dev_t dev, ino_t ino);
/* Sizes the inode table for about this many inodes (no rehash while it fills). */
void pidscan_expect(struct pidscan *ps, size_t inodes);

/* Appends pid's holder records to out (piddir is its /proc directory).
 * With want_torch it also notes in out->torch_pids whether the process maps
 * a libtorch library. Returns how many records were added; a process that
 * vanishes or refuses is counted in w, never fatal. */
size_t pidscan_run(struct pidscan *ps, int piddir, pid_t pid, bool want_torch);

/* Forces the maps text instead of PROCMAP_QUERY (tests of the fallback). */
void pidscan_force_text(struct pidscan *ps);
/* True once PROCMAP_QUERY has answered (Linux 6.11+); false on the text. */
bool pidscan_queried(const struct pidscan *ps);

#endif
