/* The scan's holder records: one process's fds and mappings on the
 * watched devices (procfiles.h) made into records of struct holder_list,
 * matched by device number. A holder's name (a readlink, or a mapping's
 * path) and the stat of a mapped-only inode are taken once per inode per
 * scan, and never for inodes the mount listing already has: the model takes
 * those from the listing. */
#ifndef SHMWATCH_PIDSCAN_H
#define SHMWATCH_PIDSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/files.h"
#include "collect/holders.h"
#include "collect/procfiles.h"
#include "util/warn.h"

struct pidscan;

/* devs must outlive the pidscan. Every entry of files (or NULL; it must
 * outlive the walk too) is known, as by pidscan_known: taken in when the
 * first holder record is met, so that a mount of files nobody holds costs
 * no table of them. b (beacon.h, or NULL) is told which process, fd or
 * mappings the walk is reading. */
struct pidscan *pidscan_new(const dev_t *devs, size_t ndevs, const struct file_list *files,
                            struct holder_list *out, struct warnings *w, struct scan_beacon *b);
void pidscan_free(struct pidscan *ps);

/* An inode the mount listing has: its holders need no name or stat. */
void pidscan_known(struct pidscan *ps, dev_t dev, ino_t ino);

/* Appends pid's holder records to out (piddir is its /proc directory),
 * and pid to out->torch_pids when the process maps a libtorch library.
 * Returns how many records were added. A process is
 * counted once in w when the walk could not see all of it: as denied when
 * its fd list, any fd's target or its maps were refused (a refused fd
 * target hides a holder just as a refused fd list does), else as vanished
 * when it exited meanwhile; never fatal. */
size_t pidscan_run(struct pidscan *ps, int piddir, pid_t pid);

/* The executable of pid, as its exe link names it, from the maps text
 * this scan read last if it was pid's: the path of the line that maps
 * start_code (stat's startcode, where the executable's code is). NULL
 * when the last walk was another process's or read no text, or the line
 * names no plain path (escaped by the kernel, or on a watched mount):
 * then the caller reads the link. A readlink less for each listed process
 * where the text is read. The string lasts until the next walk. */
const char *pidscan_exe(struct pidscan *ps, pid_t pid, uint64_t start_code);
/* True once PROCMAP_QUERY has answered (Linux 6.11+); false on the text. */
bool pidscan_queried(const struct pidscan *ps);

#endif
