/* scan_run tested whole on recorded systems: for each scene under
 * tests/fixtures/scan (NAME.scene, the description; NAME.json, the golden
 * snapshot), the scene's tree is built (scene_tree.c), scan_run reads it as
 * it reads the real /proc and /dev/shm, the model is built with the default
 * options, and the JSON snapshot, one member per line, must equal the golden
 * file; a mismatch prints `diff -u golden actual` and keeps the actual file
 * (NAME.actual.json in the working directory).
 *
 * Regenerate every golden file (after a change that is meant to change the
 * snapshot; read the diff before committing it) with one command:
 *     meson compile -C build update-golden
 * (the run target runs this test with SHMWATCH_GOLDEN_UPDATE=1, which
 * writes the golden files instead of comparing).
 *
 * What is normalized, and why (everything else is scan_run's own reading):
 * - the scan's time and duration: the clock. The scene declares "now"; the
 *   files' mtimes are set relative to it, so ages are exact.
 * - the boot: the processes' start ticks count from a boot a day before
 *   "now" (SCENE_UPTIME_S), not from the machine's, so their start times do
 *   not depend on how long the machine has been up. A file's ctime is the
 *   real clock's (it cannot be set), later than every start: no segment of
 *   a scene is of an earlier run of its mount's processes.
 * - the device: the tree lies on whatever file system TMPDIR (or /tmp) is
 *   on, and the scan must read that file system's device (see below). The
 *   scene declares the device its snapshot shows ("device 0:4000"); every
 *   device the scan read as the tree's (the mounts, their ids, the files,
 *   the holders) becomes the declared one, so the golden files hold the
 *   fixture's device, not the machine's.
 * - each mount's statvfs figures (size, used, avail): the tree lives on the
 *   test's file system, whose figures are not the scene's. scan_run must
 *   have read them (size_known), then the declared ones replace them, and
 *   the budget is computed from those. Its inode counts read as 0 (no
 *   limit known): a scene declares none.
 * - meminfo: read host-wide through libproc2, not from the tree.
 * - inode numbers: the file system hands them out; each file of a scene
 *   declares its number, and every inode the scan reports must be one of
 *   the scene's files (else the test fails).
 * - the owner of the files, when the test does not run as root and cannot
 *   chown them: the runner's uid reads as the scene's owner.
 * Nothing else: warnings name /proc as the seam shows it
 * (sysroot_proc_shown), never the tree's temporary path.
 *
 * What the tree cannot fake, and what it does instead:
 * - the device: the watched mount's device in the recorded mountinfo is the
 *   device of the test's file system (@DEV@), so the walk's match by device
 *   number, the mount's statvfs and the listing all work on real files;
 *   the snapshot then shows the declared one (above). Its fstype says
 *   tmpfs, as a real /dev/shm's does.
 * - fd/N links: in /proc a link's text is the file's path and stat follows
 *   it through to the file even when it is unlinked. Here fd/N is a
 *   relative link to a real file of the tree: a named segment is
 *   root/dev/shm/NAME; an unlinked one ("gone") is root/.unlinked/NAME
 *   (deleted), a file outside the listed directory whose name carries the
 *   kernel's " (deleted)" suffix, so that the link's text ends as the
 *   kernel's does and the scan strips it as it would; the segment's name
 *   is then taken from the text's last component, as for a link whose
 *   text is not below the mount's path (model.c hidden_name).
 * - map_files/START-END (root only in /proc): links to the same files,
 *   whose inode the maps line carries (the real one, put in at build time).
 * - maps: a regular file, so PROCMAP_QUERY fails with ENOTTY and the scan
 *   reads the maps text, as on kernels before 6.11.
 * - fd/ lists in the file system's order, not ascending as /proc does: no
 *   scene has one process hold one inode by two fds, whose order would
 *   show in the holders.
 * - one root: the tree's root/ is the watcher's own (where its mountinfo's
 *   cgroup2 mount is read) and every process's (proc/PID/root links to
 *   it), a container's included; a scene's files below it are what that
 *   scene's watched mountinfo mounts at /dev/shm.
 * - pid 1 is of the init pid namespace in every scene, so creator pids
 *   are sound evidence (the mount's birth time, the real tree's, is never
 *   consulted).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "scene_tree.h"
#include "collect/scan.h"
#include "model/model.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/sysroot.h"
#include "util/xalloc.h"

#define UPDATE_ENV "SHMWATCH_GOLDEN_UPDATE"

extern char **environ;

struct golden {
    char *name; /* the scene's name: NAME.scene */
    struct scene sc;
    bool built;
};

static char *scene_file(const char *name, const char *ext)
{
    return str_printf("%s/scan/%s%s", fixtures_dir(), name, ext);
}

/* Prints diff -u of the two files on stderr. */
static void show_diff(const char *golden, const char *actual)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    char *argv[] = {"diff", "-u", (char *)golden, (char *)actual, NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "diff", &fa, NULL, argv, environ) == 0) {
        int st;
        waitpid(pid, &st, 0);
    } else {
        fprintf(stderr, "(diff could not be run: compare %s with %s)\n", golden, actual);
    }
    posix_spawn_file_actions_destroy(&fa);
}

static int teardown(void **state)
{
    struct golden *g = *state;
    if (g->built)
        scene_free(&g->sc);
    g->built = false;
    return 0;
}

static void run_scene(void **state)
{
    struct golden *g = *state;
    char err[512];
    char *desc = scene_file(g->name, ".scene");
    int rc = scene_build(&g->sc, desc, err, sizeof(err));
    g->built = g->sc.tree != NULL;
    free(desc);
    if (rc < 0)
        fail_msg("%s: %s", g->name, err);

    /* The seam on the tree: its proc, and its root both as the watcher's
     * own (the cgroup hierarchies) and as the watched one; with a --pid
     * scene, that process's view through the tree's proc (its root link). */
    char *root = str_printf("%s/root", g->sc.tree);
    struct sysroot host = SYSROOT_NONE, view = SYSROOT_NONE;
    rc = sysroot_open(&host, g->sc.proc, root, root);
    free(root);
    if (rc == 0 && g->sc.watch)
        rc = sysroot_open_pid(&view, &host, g->sc.watch);
    if (rc < 0) {
        sysroot_close(&host);
        fail_msg("%s: cannot open the seam on the tree: %s", g->name, strerror(-rc));
    }
    struct scan_opts o = {.sys = g->sc.watch ? &view : &host};
    struct scan s;
    rc = scan_run(&o, &s);
    sysroot_close(&view);
    sysroot_close(&host);
    if (rc < 0) {
        scan_free(&s);
        fail_msg("%s: scan_run: %s", g->name, strerror(-rc));
    }
    if (scene_normalize(&g->sc, &s, err, sizeof(err)) < 0) {
        scan_free(&s);
        fail_msg("%s: %s", g->name, err);
    }
    struct model_opts mo;
    model_opts_default(&mo);
    struct model m;
    model_build(&s, &mo, &m);
    struct buf out;
    buf_init(&out);
    report_json(&out, &m);
    char *pretty = scene_json_pretty(out.data);
    buf_free(&out);
    model_free(&m);
    scan_free(&s);

    char *golden = scene_file(g->name, ".json");
    const char *update = getenv(UPDATE_ENV);
    if (update && *update && strcmp(update, "0") != 0) {
        FILE *f = fopen(golden, "w");
        assert_non_null(f);
        assert_true(fputs(pretty, f) >= 0);
        assert_int_equal(fclose(f), 0);
        fprintf(stderr, "# wrote %s\n", golden);
        free(golden);
        free(pretty);
        return;
    }
    struct buf want;
    buf_init(&want);
    rc = read_file(golden, &want, 16u << 20);
    bool same = rc == 0 && strcmp(want.data, pretty) == 0;
    buf_free(&want);
    if (!same) {
        char *actual = str_printf("%s.actual.json", g->name);
        FILE *f = fopen(actual, "w");
        if (f) {
            fputs(pretty, f);
            fclose(f);
        }
        if (rc < 0)
            fprintf(stderr, "# %s: no golden file %s (%s); regenerate with: meson compile -C "
                            "build update-golden\n",
                    g->name, golden, strerror(-rc));
        else
            show_diff(golden, actual);
        char msg[512];
        snprintf(msg, sizeof(msg), "%s: the snapshot differs from its golden file (actual: %s)",
                 g->name, actual);
        free(actual);
        free(golden);
        free(pretty);
        fail_msg("%s", msg);
    }
    free(golden);
    free(pretty);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    char *dir = str_printf("%s/scan", fixtures_dir());
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len > 6 && strcmp(de->d_name + len - 6, ".scene") == 0)
            *VEC_PUSH(names, n, cap) = xstrndup(de->d_name, len - 6);
    }
    closedir(d);
    free(dir);
    if (n == 0) {
        fprintf(stderr, "no scene in tests/fixtures/scan: a test that tests nothing\n");
        return 1;
    }
    qsort(names, n, sizeof(*names), by_name);
    struct CMUnitTest *tests = xcalloc(n, sizeof(*tests));
    struct golden *g = xcalloc(n, sizeof(*g));
    for (size_t i = 0; i < n; i++) {
        g[i].name = names[i];
        tests[i].name = names[i];
        tests[i].test_func = run_scene;
        tests[i].teardown_func = teardown;
        tests[i].initial_state = &g[i];
    }
    int rc = _cmocka_run_group_tests("scan_golden", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(tests);
    free(g);
    return rc;
}
