/* Whole-file reads: every file read to its end however the kernel hands it
 * out (a seq_file such as mountinfo gives a page per read, a pipe what was
 * written so far), and a file past its cap said as -EFBIG, its first bytes
 * kept; the node view says which mount namespaces it could not read whole. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/mounts.h"
#include "collect/node.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/sysroot.h"
#include "util/warn.h"

/* The file as stdio reads it, to its end. */
static size_t stdio_read(const char *path, struct buf *out)
{
    buf_reset(out);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char chunk[512];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_add(out, chunk, n);
    fclose(f);
    return out->len;
}

static void test_proc_file_whole(void **state)
{
    (void)state;
    /* A child with enough mappings that its maps pass a page, which stays
     * as it is while this process reads it (this one's own maps change
     * as its reads allocate, under a sanitizer most of all). */
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = test_fork();
    if (pid == 0) {
        for (size_t i = 0; i < 64; i++) {
            int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
            if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
                _exit(1);
            close(fd);
        }
        char c = 1;
        if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    struct buf got, want;
    buf_init(&got);
    buf_init(&want);
    assert_int_equal(read_file_at(AT_FDCWD, path, &got, READ_TEXT_MAX), 0);
    assert_true(stdio_read(path, &want) > 4096);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, got.len);
    assert_int_equal(write(done[1], &c, 1), 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        close(ready[i]);
        close(done[i]);
    }
    buf_free(&got);
    buf_free(&want);
}

static void test_pipe_in_pieces(void **state)
{
    (void)state;
    /* A writer that hands out three pieces with pauses between them: each
     * read returns less than asked, and only the end of file ends it. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = test_fork();
    if (pid == 0) {
        close(p[0]);
        for (int i = 0; i < 3; i++) {
            char piece[3000];
            memset(piece, 'a' + i, sizeof(piece));
            if (write(p[1], piece, sizeof(piece)) != (ssize_t)sizeof(piece))
                _exit(1);
            usleep(20000); /* the reader's read returns before the next piece */
        }
        _exit(0);
    }
    close(p[1]);
    char path[32];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
    struct buf got;
    buf_init(&got);
    assert_int_equal(read_file_at(AT_FDCWD, path, &got, READ_TEXT_MAX), 0);
    assert_int_equal(got.len, 9000);
    assert_int_equal(got.data[0], 'a');
    assert_int_equal(got.data[8999], 'c');
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    buf_free(&got);
}

/* A file read whole, one cut at the cap, a missing one, and an empty one:
 * into a fresh buffer that is the empty string, the buffer terminated
 * before anything is read (glibc's M_PERTURB, as ASan's fill, makes fresh
 * memory non-zero, so a missing terminator shows). */
static void test_cap(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "fileio");
    tree_file(&t, "ten", "0123456789");
    tree_file(&t, "empty", "");
    struct buf got;
    mallopt(M_PERTURB, 0x5a);
    buf_init(&got);
    assert_int_equal(read_file_at(AT_FDCWD, tree_path(&t, "empty"), &got, 10), 0);
    mallopt(M_PERTURB, 0);
    assert_int_equal(got.len, 0);
    assert_string_equal(got.data, "");
    assert_int_equal(read_file_at(AT_FDCWD, tree_path(&t, "ten"), &got, 10), 0);
    assert_string_equal(got.data, "0123456789");
    assert_int_equal(read_file_at(AT_FDCWD, tree_path(&t, "ten"), &got, 4), -EFBIG);
    assert_string_equal(got.data, "0123");
    assert_int_equal(read_file_at(AT_FDCWD, tree_path(&t, "missing"), &got, 4), -ENOENT);
    assert_string_equal(got.data, "");
    buf_free(&got);
    tree_remove(&t);
}

/* A fake /proc whose one other process is in a mount namespace whose
 * mountinfo passes the cap: the node view says so in a warning. */
static void test_node_mountinfo_cut(void **state)
{
    (void)state;
    struct test_tree t;
    tree_make(&t, "fileio-node");
    tree_dir(&t, "proc/self/ns");
    assert_int_equal(symlink("mnt:[4026531841]", tree_path(&t, "proc/self/ns/mnt")), 0);
    tree_dir(&t, "proc/100/ns");
    assert_int_equal(symlink("mnt:[4026532999]", tree_path(&t, "proc/100/ns/mnt")), 0);
    FILE *f = fopen(tree_path(&t, "proc/100/mountinfo"), "w");
    assert_non_null(f);
    const char *line = "25 1 0:22 / /var/lib/a-long-mount-point rw,relatime - ext4 /dev/vda rw\n";
    for (size_t n = 0; n <= READ_TEXT_MAX; n += strlen(line))
        fputs(line, f);
    assert_int_equal(fclose(f), 0);

    struct sysroot sys = test_sysroot(tree_path(&t, "proc"), NULL);
    struct scan_node n;
    memset(&n, 0, sizeof(n));
    struct mount_list ml;
    memset(&ml, 0, sizeof(ml));
    struct warnings w;
    warn_init(&w);
    pid_t pids[] = {100};
    struct nsmap map;
    nsmap_init(&map, NULL, 0);
    node_discover(&n, &sys, pids, 1, &map, NULL, 0, &ml, &w);
    bool said = false;
    for (size_t i = 0; i < w.n; i++)
        said |= strcmp(w.msg[i], "the mountinfo of 1 mount namespace is longer than 16 MiB: "
                                 "the shm mounts listed past that are not shown") == 0;
    assert_true(said);
    warn_free(&w);
    node_roots_close(&n);
    node_free(&n);
    nsmap_free(&map);
    mounts_free(&ml);
    sysroot_close(&sys);
    tree_remove(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proc_file_whole),
        cmocka_unit_test(test_pipe_in_pieces),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_node_mountinfo_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
