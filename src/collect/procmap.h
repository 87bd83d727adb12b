/* PROCMAP_QUERY (linux/fs.h, Linux 6.11): one file-backed mapping of a
 * process per ioctl on its open maps file, spelled out for older headers;
 * and which way of reading a process's mappings, this ioctl or the maps
 * text, costs less on the machine shmwatch runs on.
 *
 * The two ways cost differently from machine to machine. The ioctl pays a
 * system call per file-backed mapping and formats nothing; the text pays a
 * system call per page of text and has the kernel format every line, a
 * path included. Where a system call is cheap (bare metal, a VM with
 * hardware-assisted paging) the ioctl costs about half as much; where it
 * is dear (a VM whose every system call passes through the hypervisor:
 * 1 us for getppid, against 0.1 us) a line of text costs a quarter of an
 * answer of the ioctl, and a PyTorch DataLoader's processes, with 1,600
 * mappings each, take three times as long to read through it
 * (doc/performance.md). So the scan asks the machine, once per program. */
#ifndef SHMWATCH_PROCMAP_H
#define SHMWATCH_PROCMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

struct procmap_query {
    uint64_t size, query_flags, query_addr;
    uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOCTL _IOWR('f', 17, struct procmap_query)
#define PQ_VMA_EXECUTABLE 0x04
#define PQ_COVERING_OR_NEXT 0x10
#define PQ_FILE_BACKED 0x20

enum procmap_way {
    PROCMAP_WAY_QUERY, /* PROCMAP_QUERY (the text where the kernel lacks it) */
    PROCMAP_WAY_TEXT,  /* the maps text */
};

/* The cheaper way, from one reading of a maps file each way: the text's
 * time and its lines, the ioctl's time and its calls (every answer and the
 * last ENOENT). The text when a line costs less than a call. */
enum procmap_way procmap_choose(uint64_t text_ns, size_t lines, uint64_t query_ns,
                                size_t calls);

/* The way every later procmap_way gives, measured or not: SHMWATCH_MAPS
 * (cli/settings.c), and the bench's instruction counts, which must not
 * depend on a timing. Before any scan starts. */
void procmap_force(enum procmap_way way);

/* Test hook: each reading's time replaced by these (the readings are still
 * made, so that a kernel without the ioctl is still found out); 0, 0: the
 * times measured. Before the first procmap_way. */
void procmap_set_test_times(uint64_t text_ns, uint64_t query_ns);

/* The cheaper way on this machine, measured on the first call (the best
 * of three readings each way, a few tens of microseconds in all) and kept:
 * PROCMAP_WAY_TEXT at once on a kernel without the ioctl, PROCMAP_WAY_QUERY
 * where nothing can be measured. It reads this program's own
 * /proc/self/maps, not through a sysroot: the cost is the machine's, and a
 * watched root's proc may be a fixture tree. Safe to call from any thread. */
enum procmap_way procmap_way(void);

#endif
