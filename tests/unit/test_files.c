/* The mount listing: entries never followed, subdirectories listed, and on
 * a tmpfs the top-level regular files stat'ed only when no holder has. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "collect/files.h"
#include "util/buf.h"

struct tree {
    char root[64];
    struct mount_list ml;
    struct shm_mount mount;
    struct sysroot sys; /* proc, host and root: the tree */
};

static void put(const char *root, const char *name, size_t size)
{
    struct buf p;
    buf_init(&p);
    buf_printf(&p, "%s/%s", root, name);
    int fd = open(p.data, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    close(fd);
    buf_free(&p);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    snprintf(t->root, sizeof(t->root), "/tmp/shmwatch-files-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    put(t->root, "held", 8192);
    put(t->root, "orphan", 4096);
    put(t->root, "going", 4096);
    char p[128];
    snprintf(p, sizeof(p), "%s/sub", t->root);
    assert_int_equal(mkdir(p, 0700), 0);
    put(p, "deep", 100);
    snprintf(p, sizeof(p), "%s/link", t->root);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    /* The tree is the watched root; the mount is its top. */
    assert_int_equal(sysroot_open(&t->sys, t->root, t->root, t->root), 0);
    t->mount.path = "/";
    t->mount.fstype = "tmpfs"; /* entries are trusted for their inode numbers */
    struct stat st;
    assert_int_equal(stat(t->root, &st), 0);
    t->mount.dev = st.st_dev; /* as mounts_collect records it */
    t->ml.items = &t->mount;
    t->ml.n = t->ml.cap = 1;
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    sysroot_close(&t->sys);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
    free(t);
    return 0;
}

static struct shm_file *find(struct file_list *fl, const char *name)
{
    for (size_t i = 0; i < fl->n; i++)
        if (strcmp(fl->items[i].name, name) == 0)
            return &fl->items[i];
    return NULL;
}

static void test_pending_filled_from_holder_or_stat(void **state)
{
    struct tree *t = *state;
    struct file_list fl = {0};
    struct warnings w;
    warn_init(&w);
    files_collect(&t->sys, &t->ml, &fl, &w);
    assert_int_equal(fl.n, 5); /* held, orphan, going, link, sub/deep */
    struct shm_file *held = find(&fl, "held");
    assert_non_null(held);
    assert_true(held->stat_pending);
    assert_true(find(&fl, "orphan")->stat_pending);
    /* A symlink and a file below the top are stat'ed at once, not followed. */
    assert_false(find(&fl, "link")->stat_pending);
    assert_int_equal(find(&fl, "link")->type, FT_SYMLINK);
    assert_false(find(&fl, "sub/deep")->stat_pending);
    assert_int_equal(find(&fl, "sub/deep")->size, 100);
    /* The directory at the top is recorded (for clean), not the symlink
     * nor the files. */
    assert_int_equal(fl.ndirs, 1);
    assert_string_equal(fl.dirs[0].name, "sub");
    assert_int_equal(fl.dirs[0].mount, 0);
    assert_int_equal(fl.dirs[0].dev, t->mount.dev);
    struct stat sub;
    char subpath[128];
    snprintf(subpath, sizeof(subpath), "%s/sub", t->root);
    assert_int_equal(lstat(subpath, &sub), 0);
    assert_int_equal(fl.dirs[0].ino, sub.st_ino);
    assert_int_equal(fl.dirs[0].mtime, (int64_t)sub.st_mtim.tv_sec);

    /* A holder's stat of "held" (figures no stat of the file would give)
     * stands in for the entry's own stat. */
    struct shm_holder h = {.pid = 42, .fd = 3, .dev = held->dev, .ino = held->ino,
                           .stat_ok = true, .size = 777, .alloc = 4096, .uid = 1234, .mtime = 5};
    struct holder_list hl = {.items = &h, .n = 1, .cap = 1};
    char gone[128];
    snprintf(gone, sizeof(gone), "%s/going", t->root);
    assert_int_equal(unlink(gone), 0);
    files_finish(&t->sys, &t->ml, &fl, &hl);

    assert_int_equal(fl.n, 4); /* "going" was removed after the listing */
    assert_null(find(&fl, "going"));
    held = find(&fl, "held");
    assert_false(held->stat_pending);
    assert_int_equal(held->size, 777);
    assert_int_equal(held->uid, 1234);
    struct shm_file *orphan = find(&fl, "orphan");
    assert_false(orphan->stat_pending);
    assert_int_equal(orphan->size, 4096);
    assert_int_equal(orphan->uid, getuid());
    assert_int_equal(orphan->type, FT_REGULAR);
    files_free(&fl);
    warn_free(&w);
}

static void test_other_fs_stated_at_once(void **state)
{
    struct tree *t = *state;
    t->mount.fstype = "ext4";
    struct file_list fl = {0};
    struct warnings w;
    warn_init(&w);
    files_collect(&t->sys, &t->ml, &fl, &w);
    for (size_t i = 0; i < fl.n; i++)
        assert_false(fl.items[i].stat_pending);
    assert_int_equal(find(&fl, "held")->size, 8192);
    files_finish(&t->sys, &t->ml, &fl, NULL);
    assert_int_equal(fl.n, 5);
    files_free(&fl);
    warn_free(&w);
}

/* One list filled by several calls (the node view lists one mount at a
 * time): each appends, and files_trim gives back the spare capacity once,
 * after the last, keeping every entry. */
static void test_appended_then_trimmed(void **state)
{
    struct tree *t = *state;
    struct file_list fl = {0};
    struct warnings w;
    warn_init(&w);
    files_collect(&t->sys, &t->ml, &fl, &w);
    size_t first = fl.n;
    assert_int_equal(first, 5);
    files_collect(&t->sys, &t->ml, &fl, &w);
    assert_int_equal(fl.n, 2 * first);
    assert_string_equal(fl.items[first].name, fl.items[0].name);
    files_trim(&fl);
    assert_int_equal(fl.cap, fl.n);
    assert_int_equal(fl.n, 2 * first);
    for (size_t i = 0; i < first; i++)
        assert_string_equal(fl.items[first + i].name, fl.items[i].name);
    files_trim(&fl); /* nothing left to give back */
    assert_int_equal(fl.cap, 2 * first);
    files_free(&fl);
    warn_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pending_filled_from_holder_or_stat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_fs_stated_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_appended_then_trimmed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
