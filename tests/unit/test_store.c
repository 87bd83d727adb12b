/* store/store.c on real files in a fresh temporary directory: records
 * written and read back, rotation and the size and age limits under churn,
 * a file dropped after it was indexed, a store cut in the middle of a
 * record, a foreign file, a second writer (a real child holding the lock),
 * a planted link or file in place of the directory, and a full disk (a real
 * 1 MiB tmpfs in a private mount namespace, as root). */
#include "testutil.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/rfc3339.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

struct tdir {
    char path[64];
    char store[96];
};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    struct tdir *d = calloc(1, sizeof(*d));
    snprintf(d->path, sizeof(d->path), "/tmp/test_store.XXXXXX");
    if (!mkdtemp(d->path))
        return -1;
    snprintf(d->store, sizeof(d->store), "%s/rec", d->path);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct tdir *d = *state;
    nftw(d->path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
    return 0;
}

/* The bytes of the store's record files, and how many there are. */
static uint64_t store_bytes(const char *dir, size_t *nfiles)
{
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    uint64_t total = 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        struct stat st;
        if (!strstr(e->d_name, ".jsonl") || fstatat(dirfd(dh), e->d_name, &st, 0) != 0)
            continue;
        total += (uint64_t)st.st_size;
        n++;
    }
    closedir(dh);
    if (nfiles)
        *nfiles = n;
    return total;
}

/* An event record of time t, number seq, padded to about pad bytes. */
static size_t event_line(char *out, size_t n, double t, unsigned seq, size_t pad)
{
    char when[RFC3339_LEN];
    rfc3339_format(when, sizeof(when), t);
    int w = snprintf(out, n, "{\"event\":\"segments\",\"time\":\"%s\",\"seq\":%u,\"pad\":\"", when, seq);
    size_t len = (size_t)w;
    while (len < pad && len + 3 < n)
        out[len++] = 'x';
    out[len++] = '"';
    out[len++] = '}';
    out[len] = '\0';
    return len;
}

/* The seq member of a record line. */
static unsigned line_seq(const char *line)
{
    const char *p = strstr(line, "\"seq\":");
    assert_non_null(p);
    return (unsigned)strtoul(p + 6, NULL, 10);
}

static const double T0 = 1796000000.0; /* 2026-11-30T00:53:20Z */

static void test_default_dir(void **state)
{
    (void)state;
    char buf[256];
    if (geteuid() == 0) {
        assert_string_equal(store_default_dir(buf, sizeof(buf)), "/var/lib/shmwatch");
        return;
    }
    setenv("XDG_STATE_HOME", "/x/state", 1);
    assert_string_equal(store_default_dir(buf, sizeof(buf)), "/x/state/shmwatch");
    setenv("XDG_STATE_HOME", "relative", 1);
    setenv("HOME", "/home/u", 1);
    assert_string_equal(store_default_dir(buf, sizeof(buf)), "/home/u/.local/state/shmwatch");
    unsetenv("HOME");
    unsetenv("XDG_STATE_HOME");
    assert_null(store_default_dir(buf, sizeof(buf)));
}

static void test_round_trip(void **state)
{
    struct tdir *d = *state;
    char msg[256];
    struct store *st;
    struct store_limits lim = {0, 0};
    assert_int_equal(store_open(d->store, &lim, "\"hostname\":\"h\",\"interval_s\":10", &st, msg,
                             sizeof(msg)),
                     0);
    const char *lines[] = {
        "{\"schema\":1,\"time\":\"2026-11-30T00:53:20Z\",\"reason\":\"interval\"}",
        "{\"event\":\"exit\",\"time\":\"2026-11-30T00:53:25.500Z\",\"pid\":7,\"signal\":\"SIGBUS\"}",
        "{\"schema\":1,\"time\":\"2026-11-30T00:53:25Z\",\"reason\":\"event\"}",
    };
    double times[] = {T0, T0 + 5.5, T0 + 5};
    for (int i = 0; i < 3; i++)
        assert_int_equal(store_write(st, times[i], lines[i], strlen(lines[i]), msg, sizeof(msg)), 0);
    assert_string_equal(msg, "");

    /* The directory 0700, the lock the caller's pid, the file 0600 and
     * named by its first record's time, its header first. */
    struct stat sb;
    assert_int_equal(stat(d->store, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0700);
    char path[160], text[256];
    snprintf(path, sizeof(path), "%s/lock", d->store);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_int_equal(atol(text), getpid());
    snprintf(path, sizeof(path), "%s/20261130T005320Z.jsonl", d->store);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    f = fopen(path, "r");
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_string_equal(text, "{\"recording\":1,\"time\":\"2026-11-30T00:53:20Z\",\"hostname\":\"h\","
                              "\"interval_s\":10}\n");
    store_close(st);

    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 0);
    assert_int_equal(ix.nfiles, 1);
    assert_int_equal(ix.n, 3);
    /* In time order: the snapshot at +5 before the event at +5.5. */
    int order[] = {0, 2, 1};
    for (size_t i = 0; i < 3; i++) {
        assert_true(ix.items[i].t == times[order[i]]);
        char *line = store_index_read(&ix, i, msg, sizeof(msg));
        assert_non_null(line);
        assert_string_equal(line, lines[order[i]]);
        free(line);
    }
    assert_int_equal(ix.items[0].kind, STORE_SNAPSHOT);
    assert_string_equal(ix.items[0].event, "");
    assert_int_equal(ix.items[2].kind, STORE_EVENT);
    assert_string_equal(ix.items[2].event, "exit");
    store_index_free(&ix);

    /* A window: from and to. */
    assert_int_equal(store_index_load(d->store, T0 + 1, T0 + 5.2, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 1);
    assert_true(ix.items[0].t == T0 + 5);
    store_index_free(&ix);

    /* A second run begins a file of its own; the first is read too. */
    assert_int_equal(store_open(d->store, &lim, "", &st, msg, sizeof(msg)), 0);
    const char *later = "{\"schema\":1,\"time\":\"2026-11-30T00:54:20Z\",\"reason\":\"interval\"}";
    assert_int_equal(store_write(st, T0 + 60, later, strlen(later), msg, sizeof(msg)), 0);
    store_close(st);
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nfiles, 2);
    assert_int_equal(ix.n, 4);
    assert_int_equal(ix.nwarnings, 0);

    /* A record that cannot be read back says why alone: its reader names
     * the file and offset (why's warning, replay's line). */
    assert_null(store_index_read(&ix, 4, msg, sizeof(msg)));
    assert_string_equal(msg, "no record 4 in the index");
    snprintf(path, sizeof(path), "%s/%s", d->store, ix.files[ix.items[3].file]);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "x", 1, (off_t)ix.items[3].offset), 1);
    close(fd);
    assert_null(store_index_read(&ix, 3, msg, sizeof(msg)));
    assert_string_equal(msg, "the record changed since it was read (dropped?)");
    assert_int_equal(unlink(path), 0);
    assert_null(store_index_read(&ix, 3, msg, sizeof(msg)));
    assert_string_equal(msg, strerror(ENOENT));
    store_index_free(&ix);
}

/* A file the recorder drops after the index was made: its records cannot
 * be read back, and a reader of many is told once, with the directory and
 * the file; the other files' records are read as before. */
static void test_dropped_after_index(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512];
    struct store *st;
    for (unsigned run = 0; run < 2; run++) { /* each run begins a file */
        assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), 0);
        for (unsigned i = 0; i < 4; i++) {
            double t = T0 + run * 60 + i;
            size_t len = event_line(line, sizeof(line), t, run * 4 + i, 100);
            assert_int_equal(store_write(st, t, line, len, msg, sizeof(msg)), 0);
        }
        store_close(st);
    }
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_true(ix.nfiles == 2 && ix.n == 8);
    char path[160]; /* the first run's file, dropped */
    snprintf(path, sizeof(path), "%s/%s", d->store, ix.files[0]);
    assert_int_equal(unlink(path), 0);
    size_t nwarnings = 0;
    for (size_t i = 0; i < ix.n; i++) {
        char *warning = (char *)"unset";
        char *l = store_index_read_once(&ix, i, &warning);
        if (ix.items[i].file == 0) {
            assert_null(l);
        } else {
            assert_non_null(l);
            assert_int_equal(line_seq(l), i);
            assert_null(warning);
        }
        if (warning) {
            char want[256];
            snprintf(want, sizeof(want), "%s: offset %llu: cannot be read: %s", path,
                     (unsigned long long)ix.items[i].offset, strerror(ENOENT));
            assert_string_equal(warning, want);
            nwarnings++;
        }
        free(l);
        free(warning);
    }
    assert_int_equal(nwarnings, 1);
    store_index_free(&ix);
}

static void test_empty_and_missing(void **state)
{
    struct tdir *d = *state;
    char msg[256];
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), -ENOENT);
    assert_non_null(strstr(msg, d->store));
    assert_int_equal(mkdir(d->store, 0700), 0);
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), -ENOENT);
    assert_non_null(strstr(msg, "nothing recorded"));
    /* A hostile name stays escaped in the message. */
    char evil[128];
    snprintf(evil, sizeof(evil), "%s/\x1b[31mred\n", d->path);
    assert_int_equal(store_index_load(evil, 0, 0, &ix, msg, sizeof(msg)), -ENOENT);
    assert_null(strchr(msg, '\x1b'));
    assert_null(strchr(msg, '\n'));
    assert_non_null(strstr(msg, "\\e[31mred\\n"));
}

/* Churn under a small limit: the store stays under it and keeps the newest
 * records, whole and in order. */
static void test_rotate_size(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[2048];
    struct store *st;
    struct store_limits lim = {256 << 10, 0};
    assert_int_equal(store_open(d->store, &lim, "\"hostname\":\"h\"", &st, msg, sizeof(msg)), 0);
    unsigned last = 0;
    for (unsigned i = 0; i < 3000; i++) {
        size_t len = event_line(line, sizeof(line), T0 + i, i, 300 + (i * 37) % 1200);
        assert_int_equal(store_write(st, T0 + i, line, len, msg, sizeof(msg)), 0);
        last = i;
        if (i % 50 == 0)
            assert_true(store_bytes(d->store, NULL) <= lim.max_size);
    }
    size_t nfiles;
    uint64_t total = store_bytes(d->store, &nfiles);
    assert_true(total <= lim.max_size);
    assert_true(total > lim.max_size / 2);
    assert_true(nfiles >= 2);
    store_close(st);

    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 0);
    assert_true(ix.n > 100);
    for (size_t i = 0; i < ix.n; i++) {
        char *l = store_index_read(&ix, i, msg, sizeof(msg));
        assert_non_null(l);
        assert_int_equal(line_seq(l), last - (ix.n - 1 - i));
        free(l);
    }
    store_index_free(&ix);
}

/* The share of a large limit: max_size / 32, at least 1 MiB. */
static void test_rotate_share(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[2048];
    struct store *st;
    struct store_limits lim = {32ull << 20, 0};
    assert_int_equal(store_open(d->store, &lim, "", &st, msg, sizeof(msg)), 0);
    size_t nfiles = 0, len = 0;
    for (unsigned i = 0; nfiles < 2; i++) {
        len = event_line(line, sizeof(line), T0 + i, i, 1000);
        assert_int_equal(store_write(st, T0 + i, line, len, msg, sizeof(msg)), 0);
        store_bytes(d->store, &nfiles);
    }
    store_close(st);
    /* The first file ended where the next record would pass 1 MiB. */
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nfiles, 2);
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", d->store, ix.files[0]);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true((uint64_t)sb.st_size <= 1u << 20);
    assert_true((uint64_t)sb.st_size + len + 1 > 1u << 20);
    store_index_free(&ix);
}

/* An hour per file; files whose successor began before max_age go. */
static void test_max_age(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512];
    struct store *st;
    struct store_limits lim = {0, 2 * 3600};
    assert_int_equal(store_open(d->store, &lim, "", &st, msg, sizeof(msg)), 0);
    for (unsigned i = 0; i <= 60; i++) { /* ten hours, every ten minutes */
        size_t len = event_line(line, sizeof(line), T0 + i * 600.0, i, 100);
        assert_int_equal(store_write(st, T0 + i * 600.0, line, len, msg, sizeof(msg)), 0);
    }
    store_close(st);
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    /* Now is 10 h: the file begun at 7 h is kept (its successor began at 8 h). */
    assert_int_equal(ix.nfiles, 4);
    assert_true(ix.items[0].t == T0 + 7 * 3600.0);
    assert_true(ix.items[ix.n - 1].t == T0 + 10 * 3600.0);
    store_index_free(&ix);

    /* A window's start skips the files that end before it, unread: a file
     * made unreadable there gives no warning. */
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", d->store, "20261130T075320Z.jsonl");
    assert_int_equal(truncate(path, 10), 0);
    assert_int_equal(store_index_load(d->store, T0 + 9 * 3600.0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 0);
    assert_true(ix.items[0].t == T0 + 9 * 3600.0);
    store_index_free(&ix);
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 1);
    store_index_free(&ix);
}

/* An age below two hours: a file spans at most half of it, so that no
 * record outlives max_age by more than half of it. */
static void test_max_age_short(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512];
    struct store *st;
    struct store_limits lim = {0, 120};
    assert_int_equal(store_open(d->store, &lim, "", &st, msg, sizeof(msg)), 0);
    double t = T0;
    for (unsigned i = 0; i <= 240; i++) { /* twenty minutes, every five seconds */
        t = T0 + i * 5.0;
        size_t len = event_line(line, sizeof(line), t, i, 100);
        assert_int_equal(store_write(st, t, line, len, msg, sizeof(msg)), 0);
    }
    store_close(st);
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 0);
    assert_true(ix.nfiles >= 2);
    assert_true(ix.items[0].t >= t - 1.5 * lim.max_age_s);
    assert_true(ix.items[ix.n - 1].t == t);
    store_index_free(&ix);
}

/* A reader beside a writer that begins a file at every other record: a
 * file it lists holds its header already, never read as damage. */
static void test_rotate_while_read(void **state)
{
    struct tdir *d = *state;
    char msg[256];
    static char line[200 << 10];
    struct store *st;
    struct store_limits lim = {1 << 20, 0}; /* files of 512 KiB: two records each */
    assert_int_equal(store_open(d->store, &lim, "", &st, msg, sizeof(msg)), 0);
    size_t len = event_line(line, sizeof(line), T0, 0, sizeof(line) - 8);
    assert_int_equal(store_write(st, T0, line, len, msg, sizeof(msg)), 0);
    pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        for (unsigned i = 1; i < 6000; i++) {
            len = event_line(line, sizeof(line), T0 + i, i, sizeof(line) - 8);
            if (store_write(st, T0 + i, line, len, msg, sizeof(msg)) != 0)
                _exit(1);
        }
        _exit(0);
    }
    unsigned damaged = 0;
    char first[256] = "";
    int status;
    while (waitpid(writer, &status, WNOHANG) == 0) {
        struct store_index ix;
        if (store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)) != 0)
            continue;
        for (size_t k = 0; k < ix.nwarnings; k++)
            if (!strstr(ix.warnings[k], "a record cut short") && !damaged++)
                snprintf(first, sizeof(first), "%s", ix.warnings[k]);
        store_index_free(&ix);
    }
    store_close(st);
    if (damaged)
        fprintf(stderr, "# %u warnings, the first: %s\n", damaged, first);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(damaged, 0);
}

/* A store whose directory is removed under the recorder: the failure to
 * begin the next file is said once, not at every record. */
static void test_dir_removed(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512], path[200];
    struct store *st;
    assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), 0);
    size_t len = event_line(line, sizeof(line), T0, 0, 100);
    assert_int_equal(store_write(st, T0, line, len, msg, sizeof(msg)), 0);
    nftw(d->store, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof(path), "%s/lock", d->store);
    assert_int_equal(access(path, F_OK), -1);
    unsigned said = 0;
    for (unsigned i = 1; i <= 5; i++) { /* an hour later: each a new file */
        double t = T0 + 3600.0 + i;
        len = event_line(line, sizeof(line), t, i, 100);
        assert_int_equal(store_write(st, t, line, len, msg, sizeof(msg)), -ENOENT);
        said += msg[0] != '\0';
    }
    store_close(st);
    assert_int_equal(said, 1);
}

/* A store cut in the middle of a record: one warning with the file and the
 * offset, the records before it still read. */
static void test_cut_short(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512];
    struct store *st;
    assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), 0);
    for (unsigned i = 0; i < 5; i++) {
        size_t len = event_line(line, sizeof(line), T0 + i, i, 200);
        assert_int_equal(store_write(st, T0 + i, line, len, msg, sizeof(msg)), 0);
    }
    store_close(st);
    char path[160];
    snprintf(path, sizeof(path), "%s/20261130T005320Z.jsonl", d->store);
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 5);
    uint64_t off = ix.items[3].offset;
    store_index_free(&ix);
    assert_int_equal(truncate(path, (off_t)off + 57), 0);

    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 3);
    assert_int_equal(ix.nwarnings, 1);
    char want[256];
    snprintf(want, sizeof(want), "%s: offset %llu: a record cut short (57 bytes)", path,
             (unsigned long long)off);
    assert_string_equal(ix.warnings[0], want);
    for (size_t i = 0; i < 3; i++) {
        char *l = store_index_read(&ix, i, msg, sizeof(msg));
        assert_non_null(l);
        assert_int_equal(line_seq(l), i);
        free(l);
    }
    store_index_free(&ix);

    /* Damage inside a file: that line named, the lines around it used. */
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)off), 0);
    const char junk[] = "\0\0\0garbage\n";
    assert_int_equal(write(fd, junk, sizeof(junk) - 1), (ssize_t)sizeof(junk) - 1);
    size_t len = event_line(line, sizeof(line), T0 + 9, 9, 100);
    line[len++] = '\n';
    assert_int_equal(write(fd, line, len), (ssize_t)len);
    close(fd);
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 4);
    assert_int_equal(ix.nwarnings, 1);
    snprintf(want, sizeof(want), "%s: offset %llu: not a shmwatch record", path,
             (unsigned long long)off);
    assert_string_equal(ix.warnings[0], want);
    store_index_free(&ix);

    /* Both in one file: said in the order of the file, the bad line first. */
    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, line, 20), 20);
    close(fd);
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 2);
    assert_string_equal(ix.warnings[0], want);
    snprintf(want, sizeof(want), "%s: offset %llu: a record cut short (20 bytes)", path,
             (unsigned long long)off + sizeof(junk) - 1 + len);
    assert_string_equal(ix.warnings[1], want);
    store_index_free(&ix);
}

/* A file with a store's name but no header is named and skipped. */
static void test_foreign(void **state)
{
    struct tdir *d = *state;
    char msg[256], line[512];
    struct store *st;
    assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), 0);
    size_t len = event_line(line, sizeof(line), T0, 0, 100);
    assert_int_equal(store_write(st, T0, line, len, msg, sizeof(msg)), 0);
    store_close(st);
    char path[160];
    snprintf(path, sizeof(path), "%s/20200101T000000Z.jsonl", d->store);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schema\":1,\"time\":\"2020-01-01T00:00:00Z\"}\nhello\n", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/notes.txt", d->store);
    f = fopen(path, "w");
    fputs("not ours\n", f);
    fclose(f);
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 1);
    assert_int_equal(ix.nwarnings, 1);
    char want[256];
    snprintf(want, sizeof(want), "%s/20200101T000000Z.jsonl: not a recording (no header)", d->store);
    assert_string_equal(ix.warnings[0], want);
    store_index_free(&ix);
}

/* File name in d's store, holding text. */
static void put_file(const struct tdir *d, const char *name, const char *text)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", d->store, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* An empty file (the recorder died before its header) and a recording of
 * another version are named and skipped; a store of nothing else is no
 * recording, as an empty directory is not. */
static void test_unreadable_files(void **state)
{
    struct tdir *d = *state;
    char msg[512];
    assert_int_equal(mkdir(d->store, 0700), 0);
    put_file(d, "20200101T000000Z.jsonl", "");
    struct store_index ix;
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), -ENOENT);
    char want[256];
    snprintf(want, sizeof(want), "%s/20200101T000000Z.jsonl: not a recording (empty)", d->store);
    assert_string_equal(msg, want);

    put_file(d, "20200101T010000Z.jsonl",
             "{\"recording\":2,\"time\":\"2020-01-01T01:00:00Z\"}\n"
             "{\"event\":\"exit\",\"time\":\"2020-01-01T01:00:01Z\",\"pid\":7}\n");
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), -ENOENT);
    assert_non_null(strstr(msg, "(and more files that cannot be read)"));

    put_file(d, "20200101T020000Z.jsonl",
             "{\"recording\":1,\"time\":\"2020-01-01T02:00:00Z\"}\n"
             "{\"event\":\"exit\",\"time\":\"2020-01-01T02:00:01Z\",\"pid\":7}\n");
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 1);
    assert_int_equal(ix.nwarnings, 2);
    assert_string_equal(ix.warnings[0], want);
    assert_non_null(strstr(ix.warnings[1], "/20200101T010000Z.jsonl: a recording of version 2, "
                                           "not 1 (a newer shmwatch's): skipped"));
    store_index_free(&ix);
}

/* Files recorded on two machines, copied into one directory: read as one
 * recording, and said once, the names escaped. */
static void test_two_hosts(void **state)
{
    struct tdir *d = *state;
    assert_int_equal(mkdir(d->store, 0700), 0);
    static const char *const hosts[] = {"a", "b\\u001b[31m", "a"};
    for (int i = 0; i < 3; i++) {
        char name[32], text[256];
        snprintf(name, sizeof(name), "20200101T0%d0000Z.jsonl", i);
        snprintf(text, sizeof(text),
                 "{\"recording\":1,\"time\":\"2020-01-01T0%d:00:00Z\",\"hostname\":\"%s\"}\n"
                 "{\"event\":\"exit\",\"time\":\"2020-01-01T0%d:00:01Z\",\"pid\":7}\n",
                 i, hosts[i], i);
        put_file(d, name, text);
    }
    struct store_index ix;
    char msg[256];
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.n, 3);
    assert_int_equal(ix.nwarnings, 1);
    assert_non_null(strstr(ix.warnings[0], "/20200101T010000Z.jsonl: recorded on host b\\e[31m, "
                                           "the files before it on a: read as one"));
    store_index_free(&ix);
}

/* A recording's file copied beside it under another name: each record is
 * in the index once, as from the one file; two records of one time that
 * differ are both there, and so are two alike in one file. */
static void test_copied_file(void **state)
{
    struct tdir *d = *state;
    assert_int_equal(mkdir(d->store, 0700), 0);
    const char *text = "{\"recording\":1,\"time\":\"2020-01-01T00:00:00Z\",\"hostname\":\"a\"}\n"
                       "{\"event\":\"exit\",\"time\":\"2020-01-01T00:00:01Z\",\"pid\":7}\n"
                       "{\"event\":\"exit\",\"time\":\"2020-01-01T00:00:01Z\",\"pid\":8}\n"
                       "{\"event\":\"exit\",\"time\":\"2020-01-01T00:00:01Z\",\"pid\":8}\n"
                       "{\"schema\":1,\"time\":\"2020-01-01T00:00:02Z\"}\n";
    put_file(d, "20200101T000000Z.jsonl", text);
    put_file(d, "20200101T000000Z-1.jsonl", text);
    struct store_index ix;
    char msg[256];
    assert_int_equal(store_index_load(d->store, 0, 0, &ix, msg, sizeof(msg)), 0);
    assert_int_equal(ix.nwarnings, 0);
    assert_int_equal(ix.n, 4);
    for (size_t i = 0; i < ix.n; i++)
        assert_int_equal(ix.items[i].file, ix.items[0].file);
    assert_int_equal(ix.items[3].kind, STORE_SNAPSHOT);
    store_index_free(&ix);
}

/* str_hash, which tells a copied record: FNV-1a's published values, and one
 * string hashed in two parts as in one. */
static void test_str_hash(void **state)
{
    (void)state;
    assert_true(str_hash(STR_HASH_START, "", 0) == 0xcbf29ce484222325ULL);
    assert_true(str_hash(STR_HASH_START, "a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(str_hash(STR_HASH_START, "foobar", 6) == 0x85944171f73967e8ULL);
    assert_true(str_hash(str_hash(STR_HASH_START, "foo", 3), "bar", 3) ==
                str_hash(STR_HASH_START, "foobar", 6));
}

/* A second writer is refused with the first one's pid, a real child's. */
static void test_second_writer(void **state)
{
    struct tdir *d = *state;
    char msg[256];
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = test_fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct store *st;
        char cmsg[256];
        char ok = store_open(d->store, NULL, "", &st, cmsg, sizeof(cmsg)) == 0 ? 'y' : 'n';
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char ok = 0;
    assert_int_equal(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    assert_int_equal(ok, 'y');
    struct store *st;
    int rc = store_open(d->store, NULL, "", &st, msg, sizeof(msg));
    char want[256];
    snprintf(want, sizeof(want), "%s is being recorded by pid %ld", d->store, (long)child);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(rc, -EBUSY);
    assert_string_equal(msg, want);
    /* Its death frees the lock. */
    assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), 0);
    store_close(st);
}

/* What is not the caller's own directory is refused, and left as it is. */
static void test_refused_dirs(void **state)
{
    struct tdir *d = *state;
    char msg[256], other[128];
    struct store *st;
    snprintf(other, sizeof(other), "%s/elsewhere", d->path);
    assert_int_equal(mkdir(other, 0700), 0);

    /* The empty path names no directory (and is read no further than its
     * end: the sanitizer build checks). */
    assert_true(store_open("", NULL, "", &st, msg, sizeof(msg)) < 0);

    assert_int_equal(symlink(other, d->store), 0);
    assert_true(store_open(d->store, NULL, "", &st, msg, sizeof(msg)) < 0);
    assert_non_null(strstr(msg, "symbolic link"));
    assert_int_equal(unlink(d->store), 0);

    FILE *f = fopen(d->store, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(store_open(d->store, NULL, "", &st, msg, sizeof(msg)) < 0);
    assert_non_null(strstr(msg, "not a directory"));
    assert_int_equal(unlink(d->store), 0);

    assert_int_equal(mkdir(d->store, 0700), 0);
    assert_int_equal(chmod(d->store, 0770), 0);
    assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), -EPERM);
    assert_non_null(strstr(msg, "writable by group or others"));
    assert_int_equal(chmod(d->store, 0700), 0);

    /* A lock planted as a link to another file. */
    char lock[160], target[160];
    snprintf(lock, sizeof(lock), "%s/lock", d->store);
    snprintf(target, sizeof(target), "%s/victim", other);
    assert_int_equal(symlink(target, lock), 0);
    assert_true(store_open(d->store, NULL, "", &st, msg, sizeof(msg)) < 0);
    assert_non_null(strstr(msg, "symbolic link"));
    struct stat sb;
    assert_int_equal(lstat(target, &sb), -1);
    assert_int_equal(unlink(lock), 0);

    if (geteuid() == 0) {
        assert_int_equal(chown(d->store, 65534, 65534), 0);
        assert_int_equal(store_open(d->store, NULL, "", &st, msg, sizeof(msg)), -EPERM);
        assert_non_null(strstr(msg, "owned by another user"));
    }
}

/* A store at mnt/rec (into dir) on a 1 MiB tmpfs mounted at mnt in a
 * private mount namespace (root only): 0, 77 when there is none, 10 when
 * the store does not open. */
static int store_on_tmpfs(const char *mnt, const struct store_limits *lim, char *dir, size_t n,
                          struct store **st)
{
    char msg[256];
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0700") != 0)
        return 77;
    snprintf(dir, n, "%s/rec", mnt);
    return store_open(dir, lim, "", st, msg, sizeof(msg)) == 0 ? 0 : 10;
}

/* A full disk: a real 1 MiB tmpfs in a private mount namespace (root
 * only). Every write comes out whole, the oldest files dropped for room. */
static int full_disk_child(const char *mnt)
{
    char dir[160], msg[256], line[2048];
    struct store *st;
    struct store_limits lim = {64ull << 20, 1e9};
    int rc = store_on_tmpfs(mnt, &lim, dir, sizeof(dir), &st);
    if (rc)
        return rc;
    unsigned dropped = 0;
    unsigned i;
    for (i = 0; i < 6000; i++) {
        double t = T0 + i * 60.0; /* a new file each hour, some 50 KiB */
        size_t len = event_line(line, sizeof(line), t, i, 300 + (i * 53) % 1400);
        if (store_write(st, t, line, len, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "# write %u failed: %s\n", i, msg);
            return 11;
        }
        if (msg[0]) {
            if (!strstr(msg, "disk full: dropped the oldest file, 2026"))
                return 12;
            dropped++;
        }
    }
    store_close(st);
    if (dropped < 10)
        return 13;
    struct store_index ix;
    if (store_index_load(dir, 0, 0, &ix, msg, sizeof(msg)) != 0 || ix.nwarnings || ix.n < 200)
        return 14;
    for (size_t k = 0; k < ix.n; k++) {
        char *l = store_index_read(&ix, k, msg, sizeof(msg));
        if (!l || line_seq(l) != i - 1 - (ix.n - 1 - k))
            return 15;
        free(l);
    }
    store_index_free(&ix);
    return 0;
}

/* A disk smaller than a file's share: every record falls in one hour, the
 * 1 MiB tmpfs fills while the current file is the only one. That file goes,
 * the files after it take half its size, and every write comes out whole. */
static int small_disk_child(const char *mnt)
{
    char dir[160], msg[256], line[2048];
    struct store *st;
    struct store_limits lim = {256ull << 20, 1e9}; /* a file's share: 8 MiB */
    int rc = store_on_tmpfs(mnt, &lim, dir, sizeof(dir), &st);
    if (rc)
        return rc;
    unsigned dropped = 0, i;
    for (i = 0; i < 3000; i++) {
        double t = T0 + i * 0.5;
        size_t len = event_line(line, sizeof(line), t, i, 1500);
        if (store_write(st, t, line, len, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "# write %u failed: %s\n", i, msg);
            return 11;
        }
        if (msg[0])
            dropped++;
    }
    store_close(st);
    size_t nfiles;
    if (dropped < 2 || store_bytes(dir, &nfiles) > (1u << 20) || nfiles < 2)
        return 12;
    struct store_index ix;
    if (store_index_load(dir, 0, 0, &ix, msg, sizeof(msg)) != 0 || ix.nwarnings || ix.n < 100)
        return 13;
    char *last = store_index_read(&ix, ix.n - 1, msg, sizeof(msg));
    rc = last && line_seq(last) == i - 1 ? 0 : 14;
    free(last);
    store_index_free(&ix);
    return rc;
}

/* A disk that others filled: the store's one file holds only its header.
 * The lost records are said once, not once each, until a write finds
 * room again; a disk full after that is said again. */
static int filled_disk_child(const char *mnt)
{
    char dir[160], filler[160], msg[256], line[2048];
    struct store *st;
    int rc = store_on_tmpfs(mnt, NULL, dir, sizeof(dir), &st);
    if (rc)
        return rc;
    snprintf(filler, sizeof(filler), "%s/filler", mnt);
    size_t len = event_line(line, sizeof(line), T0, 0, 1500);
    if (store_write(st, T0, line, len, msg, sizeof(msg)) != 0)
        return 11;
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    while (fd >= 0 && write(fd, line, len) > 0)
        ;
    if (fd < 0)
        return 12;
    /* The store file's last page may hold a record or two more. */
    unsigned said = 0, failed = 0;
    for (unsigned i = 1; i <= 24; i++) {
        len = event_line(line, sizeof(line), T0 + i, i, 1500);
        if (store_write(st, T0 + i, line, len, msg, sizeof(msg)) == 0 && failed)
            return 13;
        failed += msg[0] != '\0' || failed;
        said += msg[0] != '\0';
    }
    if (failed < 20)
        return 13;
    if (said != 1 || ftruncate(fd, 0) != 0)
        return 14;
    len = event_line(line, sizeof(line), T0 + 30, 30, 1500);
    if (store_write(st, T0 + 30, line, len, msg, sizeof(msg)) != 0 || msg[0])
        return 15;
    lseek(fd, 0, SEEK_SET);
    while (write(fd, line, len) > 0)
        ;
    rc = 0;
    for (unsigned i = 31; i < 35 && rc == 0; i++) {
        len = event_line(line, sizeof(line), T0 + i, i, 1500);
        rc = store_write(st, T0 + i, line, len, msg, sizeof(msg));
    }
    if (rc == 0 || !strstr(msg, "disk full, and no older file to drop"))
        return 16;
    close(fd);
    store_close(st);
    return 0;
}

/* child in a forked process: its status, 77 a skip. */
static void run_disk_child(struct tdir *d, int (*child)(const char *))
{
    if (geteuid() != 0) {
        fprintf(stderr, "# skipped: a private tmpfs needs root\n");
        skip();
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child(d->path));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) {
        fprintf(stderr, "# skipped: no private mount namespace with a tmpfs here\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_full_disk(void **state)
{
    run_disk_child(*state, full_disk_child);
}

static void test_small_disk(void **state)
{
    run_disk_child(*state, small_disk_child);
}

static void test_filled_disk(void **state)
{
    run_disk_child(*state, filled_disk_child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_dir),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropped_after_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotate_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotate_share, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_age, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_age_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotate_while_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_hosts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copied_file, setup, teardown),
        cmocka_unit_test(test_str_hash),
        cmocka_unit_test_setup_teardown(test_second_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filled_disk, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
