#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/holders.h"
#include "collect/mapstext.h"
#include "collect/procs.h"
#include "collect/walk.h"
#include "util/buf.h"

static void test_maps_line(void **state)
{
    (void)state;
    char line[] = "7f2c3c000000-7f2c3c100000 rw-s 00001000 00:1a 12345                      "
                  "/dev/shm/torch_1_2 (deleted)";
    struct maps_entry e;
    assert_true(maps_parse_line(line, &e));
    assert_int_equal(e.start, 0x7f2c3c000000ull);
    assert_int_equal(e.end, 0x7f2c3c100000ull);
    assert_int_equal(e.offset, 0x1000);
    assert_int_equal(e.major, 0);
    assert_int_equal(e.minor, 0x1a);
    assert_int_equal(e.inode, 12345);
    assert_string_equal(e.path, "/dev/shm/torch_1_2");
    assert_true(e.deleted);
}

static void test_maps_line_spaces_and_anon(void **state)
{
    (void)state;
    char a[] = "00400000-00452000 r-xp 00000000 fd:01 3 /dev/shm/my segment 1";
    char b[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ";
    char c[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0";
    char d[] = "garbage line";
    char e_[] = "7ffd2000-7ffd1000 rw-p 00000000 00:00 0"; /* end before start */
    struct maps_entry e;
    assert_true(maps_parse_line(a, &e));
    assert_int_equal(e.major, 0xfd);
    assert_string_equal(e.path, "/dev/shm/my segment 1");
    assert_false(e.deleted);
    assert_true(maps_parse_line(b, &e));
    assert_int_equal(e.inode, 0);
    assert_string_equal(e.path, "");
    assert_true(maps_parse_line(c, &e));
    assert_false(maps_parse_line(d, &e));
    assert_false(maps_parse_line(e_, &e));
}

/* The fields are digits as the kernel writes them: nothing strtoull would
 * also take (a sign, a space, "0x"), and no value past 64 bits. */
static void test_maps_line_numbers(void **state)
{
    (void)state;
    char max[] = "ffffffffffffffff-ffffffffffffffff rw-s ffffffffffffffff 00:1a "
                 "18446744073709551615 /dev/shm/x";
    struct maps_entry e;
    assert_true(maps_parse_line(max, &e));
    assert_true(e.start == UINT64_MAX && e.offset == UINT64_MAX && e.inode == UINT64_MAX);
    assert_string_equal(e.path, "/dev/shm/x");
    const char *bad[] = {
        "10000000000000000-10000000000000001 rw-s 00000000 00:1a 1 /dev/shm/x", /* 65 bits */
        "1000-2000 rw-s 00000000 00:1a 18446744073709551616 /dev/shm/x",        /* 2^64 */
        "0x1000-2000 rw-s 00000000 00:1a 1 /dev/shm/x",
        "1000-2000 rw-s -1 00:1a 1 /dev/shm/x",
        "1000-2000 rw-s 00000000  00:1a 1 /dev/shm/x",
        "1000-2000 rw-s 00000000 00:1a +1 /dev/shm/x",
        "1000-2000 rw-s 00000000 00:1a 12x /dev/shm/x",
        "1000-2000 rw-s 00000000 100000000:1a 1 /dev/shm/x", /* a major past 32 bits */
        "1000-2000 rw-s 00000000 00:1a",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char line[128];
        snprintf(line, sizeof(line), "%s", bad[i]);
        assert_false(maps_parse_line(line, &e));
    }
}

static void test_strip_deleted(void **state)
{
    (void)state;
    char a[] = "/dev/shm/torch_1_2 (deleted)", b[] = "/dev/shm/torch_1_2", c[] = " (deleted)";
    char d[] = "/dev/shm/x (deleted) (deleted)";
    assert_true(strip_deleted(a));
    assert_string_equal(a, "/dev/shm/torch_1_2");
    assert_false(strip_deleted(b));
    assert_true(strip_deleted(c));
    assert_string_equal(c, "");
    assert_true(strip_deleted(d));
    assert_string_equal(d, "/dev/shm/x (deleted)");
}

static void test_nspid(void **state)
{
    (void)state;
    pid_t p = 0;
    assert_true(status_parse_nspid("Name:\tpython3\nTgid:\t4321\nNSpid:\t4321\t17\n", &p));
    assert_int_equal(p, 17);
    assert_true(status_parse_nspid("NSpid:\t99\n", &p));
    assert_int_equal(p, 99);
    assert_false(status_parse_nspid("Name:\tx\n", &p));
}

/* A /proc-like tree built in a temporary directory: pid 100 holds torch_1_2
 * by fd 3 and maps it, maps torch_3_4 only, and holds "torch_5_6 (deleted)";
 * pid 200 holds a file on another device; pid 300 has no fd directory. */
struct tree {
    char root[64];
    struct buf shm, proc;
    dev_t dev;
    ino_t ino12, ino34, ino56;
};

static ino_t make_file(struct tree *t, const char *name, size_t size)
{
    struct buf p;
    buf_init(&p);
    buf_printf(&p, "%s/%s", t->shm.data, name);
    int fd = open(p.data, O_CREAT | O_RDWR, 0600);
    assert_true(fd >= 0);
    char block[4096] = {1};
    for (size_t done = 0; done < size; done += sizeof(block))
        assert_true(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block));
    struct stat st;
    fstat(fd, &st);
    t->dev = st.st_dev;
    close(fd);
    buf_free(&p);
    return st.st_ino;
}

static void mk(const char *fmt, const char *a, const char *b)
{
    struct buf p;
    buf_init(&p);
    buf_printf(&p, fmt, a, b);
    assert_int_equal(mkdir(p.data, 0755), 0);
    buf_free(&p);
}

static void link_fd(struct tree *t, const char *pid, const char *fd, const char *target)
{
    struct buf l;
    buf_init(&l);
    buf_printf(&l, "%s/%s/fd/%s", t->proc.data, pid, fd);
    assert_int_equal(symlink(target, l.data), 0);
    buf_free(&l);
}

/* A /proc/PID/stat line: a sleeping python3, child of pid 1. */
static void put_stat(struct tree *t, const char *pid)
{
    struct buf p;
    buf_init(&p);
    buf_printf(&p, "%s/%s/stat", t->proc.data, pid);
    FILE *f = fopen(p.data, "w");
    assert_non_null(f);
    fprintf(f, "%s (python3) S 1 %s %s 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 "
               "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
            pid, pid, pid);
    fclose(f);
    buf_free(&p);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    snprintf(t->root, sizeof(t->root), "/tmp/shmwatch-holders-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    buf_init(&t->shm);
    buf_init(&t->proc);
    buf_printf(&t->shm, "%s/shm", t->root);
    buf_printf(&t->proc, "%s/proc", t->root);
    mkdir(t->shm.data, 0755);
    mkdir(t->proc.data, 0755);
    t->ino12 = make_file(t, "torch_1_2", 8192);
    t->ino34 = make_file(t, "torch_3_4", 4096);
    t->ino56 = make_file(t, "torch_5_6 (deleted)", 4096);
    mk("%s/%s", t->proc.data, "100");
    mk("%s/%s/fd", t->proc.data, "100");
    mk("%s/%s", t->proc.data, "200");
    mk("%s/%s/fd", t->proc.data, "200");
    mk("%s/%s", t->proc.data, "300");
    mk("%s/%s", t->proc.data, "self");
    put_stat(t, "100");
    put_stat(t, "200");
    put_stat(t, "300");
    struct buf target;
    buf_init(&target);
    buf_printf(&target, "%s/torch_1_2", t->shm.data);
    link_fd(t, "100", "3", target.data);
    buf_reset(&target);
    buf_printf(&target, "%s/torch_5_6 (deleted)", t->shm.data);
    link_fd(t, "100", "7", target.data);
    link_fd(t, "200", "4", "/dev/null"); /* another device */
    struct buf maps;
    buf_init(&maps);
    buf_printf(&maps, "%s/100/maps", t->proc.data);
    FILE *f = fopen(maps.data, "w");
    fprintf(f, "55d0a000-55d0b000 r-xp 00000000 fd:01 999 /usr/bin/python3\n");
    fprintf(f, "7f0000000000-7f0000002000 rw-s 00000000 %02x:%02x %lu %s/torch_1_2\n",
            major(t->dev), minor(t->dev), (unsigned long)t->ino12, t->shm.data);
    fprintf(f, "7f0000010000-7f0000011000 rw-s 00000000 %02x:%02x %lu %s/torch_3_4 (deleted)\n",
            major(t->dev), minor(t->dev), (unsigned long)t->ino34, t->shm.data);
    fprintf(f, "7f0000020000-7f0000021000 rw-s 00001000 %02x:%02x %lu %s/torch_3_4 (deleted)\n",
            major(t->dev), minor(t->dev), (unsigned long)t->ino34, t->shm.data);
    fprintf(f, "7ffd1000-7ffd2000 rw-p 00000000 00:00 0   [stack]\n");
    fclose(f);
    buf_free(&maps);
    buf_free(&target);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    struct buf cmd;
    buf_init(&cmd);
    buf_printf(&cmd, "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd.data), 0);
    buf_free(&cmd);
    buf_free(&t->shm);
    buf_free(&t->proc);
    free(t);
    return 0;
}

static const struct shm_holder *find(const struct holder_list *hl, pid_t pid, ino_t ino)
{
    for (size_t i = 0; i < hl->n; i++)
        if (hl->items[i].pid == pid && hl->items[i].ino == ino)
            return &hl->items[i];
    return NULL;
}

static void test_collect_tree(void **state)
{
    struct tree *t = *state;
    struct holder_list hl = {0};
    struct warnings w;
    warn_init(&w);
    struct proc_list pl = {0};
    struct sysroot sys = test_sysroot(t->proc.data, NULL);
    struct walk_opts o = {.sys = &sys, .devs = &t->dev, .ndevs = 1, .world_pid = 100};
    assert_int_equal(walk_run(&o, &pl, &hl, &w), 0);
    sysroot_close(&sys);
    assert_int_equal(pl.n, 3);
    assert_int_equal(hl.n, 3);

    const struct shm_holder *h = find(&hl, 100, t->ino12);
    assert_non_null(h);
    assert_int_equal(h->fd, 3);
    assert_true(h->mapped);
    assert_false(h->deleted);
    assert_true(h->stat_ok);
    assert_int_equal(h->size, 8192);
    assert_int_equal(h->map_bytes, 0x2000);

    h = find(&hl, 100, t->ino34);
    assert_non_null(h);
    assert_int_equal(h->fd, -1);
    assert_true(h->mapped);
    assert_true(h->deleted);
    assert_int_equal(h->map_bytes, 0x2000); /* offset 0x1000 + 0x1000 */
    assert_non_null(strstr(h->path, "/torch_3_4"));

    h = find(&hl, 100, t->ino56);
    assert_non_null(h);
    assert_int_equal(h->fd, 7);
    assert_true(h->deleted);
    assert_false(h->mapped);
    assert_non_null(strstr(h->path, "/torch_5_6"));
    assert_null(strstr(h->path, "(deleted)"));

    /* pid 300 has neither fd/ nor maps: it counts as gone, never fatal. */
    assert_true(w.vanished >= 1);
    holders_free(&hl);
    procs_free(&pl);
    warn_free(&w);
}

static void test_collect_no_devices(void **state)
{
    struct tree *t = *state;
    struct holder_list hl = {0};
    struct proc_list pl = {0};
    struct warnings w;
    warn_init(&w);
    struct sysroot sys = test_sysroot(t->proc.data, NULL);
    struct walk_opts o = {.sys = &sys, .world_pid = 100};
    assert_int_equal(walk_run(&o, &pl, &hl, &w), 0);
    assert_int_equal(pl.n, 3); /* the process table, but no holders */
    assert_int_equal(hl.n, 0);
    procs_free(&pl);
    sysroot_close(&sys); /* a seam whose proc is closed: nothing to walk */
    o.devs = &t->dev;
    o.ndevs = 1;
    assert_int_equal(walk_run(&o, &pl, &hl, &w), -EBADF);
    assert_int_equal(hl.n, 0);
    holders_free(&hl);
    procs_free(&pl);
    warn_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maps_line),
        cmocka_unit_test(test_maps_line_spaces_and_anon),
        cmocka_unit_test(test_maps_line_numbers),
        cmocka_unit_test(test_strip_deleted),
        cmocka_unit_test(test_nspid),
        cmocka_unit_test_setup_teardown(test_collect_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collect_no_devices, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
