/* PROCMAP_QUERY (linux/fs.h, Linux 6.11): one file-backed mapping of a
 * process per ioctl on its open maps file, spelled out for older headers;
 * and the way every walk reads mappings (SHMWATCH_MAPS; a kernel without
 * the ioctl: procfiles_new). */
#ifndef SHMWATCH_PROCMAP_H
#define SHMWATCH_PROCMAP_H

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
    PROCMAP_WAY_QUERY, /* PROCMAP_QUERY, the text where the kernel lacks it */
    PROCMAP_WAY_TEXT,  /* the maps text */
};

/* The way every later walk takes: SHMWATCH_MAPS (cli/settings.c), and the
 * bench's instruction counts. Before any scan starts. */
void procmap_force(enum procmap_way way);
/* PROCMAP_WAY_QUERY unless procmap_force said otherwise. */
enum procmap_way procmap_way(void);

#endif
