/* A scan built in memory that the model and report tests share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "fake_scene.h"
#include "util/torchprint.h"
#include "util/xalloc.h"

#define DEV makedev(0, 45)

void fake_add_file(struct scan *s, const char *name, ino_t ino, enum file_type type,
                     uint64_t size, uint64_t alloc)
{
    struct shm_file *f = VEC_PUSH(s->files.items, s->files.n, s->files.cap);
    f->name = files_name(&s->files, name);
    f->dev = DEV;
    f->ino = ino;
    f->type = type;
    f->size = size;
    f->alloc = alloc;
    f->uid = 1000;
    f->mtime = 1000;
}

void fake_add_holder(struct scan *s, pid_t pid, int fd, bool mapped, ino_t ino,
                       const char *path, bool deleted, uint64_t size, uint64_t alloc)
{
    struct shm_holder *h = VEC_PUSH(s->holders.items, s->holders.n, s->holders.cap);
    h->pid = pid;
    h->fd = fd;
    h->mapped = mapped;
    h->dev = DEV;
    h->ino = ino;
    h->path = path ? strpool_dup(&s->holders.paths, path) : NULL;
    h->deleted = deleted;
    h->stat_ok = size > 0;
    h->size = size;
    h->alloc = alloc;
    h->map_bytes = mapped ? size : 0;
}

struct proc *fake_add_proc(struct scan *s, pid_t pid, pid_t ppid, pid_t pgid, char state,
                           const char *comm, const char *exe)
{
    struct proc *p = VEC_PUSH(s->procs.items, s->procs.n, s->procs.cap);
    p->pid = pid;
    p->ppid = ppid;
    p->pgid = pgid;
    p->sid = pgid;
    p->state = state;
    snprintf(p->comm, sizeof(p->comm), "%s", comm);
    p->cmdline = xstrdup(exe ? exe : comm);
    p->exe = exe ? xstrdup(exe) : NULL;
    p->nspid = pid;
    p->rss_anon = 10 * MiB;
    return p;
}

void fake_torch_loaded(struct scan *s, pid_t pid)
{
    struct holder_list *hl = &s->holders;
    xgrow((void **)&hl->torch_pids, &hl->torch_cap, hl->ntorch + 1, sizeof(pid_t));
    hl->torch_pids[hl->ntorch++] = pid;
}

#define PY "/usr/bin/python3.11"

/* The scene:
 *  5 launcher (python) -> 10 main (python, pgid 10) -> 11, 12 workers (python)
 *  13 torch_shm_manag started by worker 11; 30 zombie child of 10
 *  20 orphan worker (python catching torch's worker signals, libtorch mapped,
 *  ppid 1), 40 some other holder (cat).
 * Segments on one 64 MiB mount, 40 MiB used. */
struct scan *fake_scene_empty(void)
{
    struct scan *s = calloc(1, sizeof(*s));
    warn_init(&s->warn);
    s->time.tv_sec = 1600;
    s->holders_scanned = true;
    s->mem.total = 8192 * MiB;
    fake_add_mount(s, minor(DEV), 64 * MiB, 40 * MiB);
    return s;
}

struct shm_mount *fake_add_mount(struct scan *s, unsigned minor_no, uint64_t size, uint64_t used)
{
    struct shm_mount *m = VEC_PUSH(s->mounts.items, s->mounts.n, s->mounts.cap);
    memset(m, 0, sizeof(*m));
    m->path = xstrdup("/dev/shm");
    m->fstype = xstrdup("tmpfs");
    m->dev = makedev(0, minor_no);
    m->stat_ok = true;
    m->listed = true;
    m->size = size;
    m->used = used;
    m->avail = size - used;
    return m;
}

void fake_cgroup(struct cgroup_info *cg, const char *path, uint64_t limit, uint64_t anon)
{
    cg->present = true;
    cg->version = 1;
    cg->path = xstrdup(path);
    cg->has_limit = true;
    cg->limit = limit;
    cg->usage = anon;
    cg->anon = anon;
    cg->has_oom_kills = true;
    cg->oom_kills = 3;
}

struct scan *fake_scene(void)
{
    struct scan *s = fake_scene_empty();

    fake_add_proc(s, 5, 1, 5, 'S', "python3", PY);
    fake_add_proc(s, 10, 5, 10, 'S', "python3", PY);
    fake_add_proc(s, 11, 10, 10, 'S', "python3", PY);
    fake_add_proc(s, 12, 10, 10, 'S', "python3", PY);
    fake_add_proc(s, 13, 11, 13, 'S', "torch_shm_manag", "/usr/lib/torch_shm_manager");
    fake_add_proc(s, 20, 1, 19, 'S', "python3", PY)->sigcatch = TORCHPRINT_WORKER_SIGS;
    fake_add_proc(s, 30, 10, 10, 'Z', "python3", NULL);
    fake_add_proc(s, 40, 1, 40, 'S', "cat", "/usr/bin/cat");
    procs_sort(&s->procs);
    for (pid_t pid = 10; pid <= 13; pid++)
        fake_torch_loaded(s, pid);
    fake_torch_loaded(s, 20);

    /* Named, created by worker 11 and held by the main by fd: in use. */
    fake_add_file(s, "torch_11_100", 1, FT_REGULAR, 4 * MiB, 4 * MiB);
    fake_add_holder(s, 10, 5, false, 1, "/dev/shm/torch_11_100", false, 4 * MiB, 4 * MiB);
    fake_add_holder(s, 10, -1, true, 1, "/dev/shm/torch_11_100", false, 0, 0);
    /* Unlinked, created by worker 12, held by it (fd) and mapped by the main: hidden.
     * 8 MiB apparent, 6 MiB allocated: 2 MiB pending. */
    fake_add_holder(s, 12, 9, true, 2, "/dev/shm/torch_12_7_1", true, 8 * MiB, 6 * MiB);
    fake_add_holder(s, 10, -1, true, 2, "/dev/shm/torch_12_7_1", true, 8 * MiB, 6 * MiB);
    /* Named, creator 999 dead, nobody holds it: orphan. */
    fake_add_file(s, "torch_999_1", 3, FT_REGULAR, 2 * MiB, 2 * MiB);
    /* Named, creator 12 alive, nobody holds it: unheld. */
    fake_add_file(s, "torch_12_2", 4, FT_REGULAR, 1 * MiB, 1 * MiB);
    /* A symlink named like a dead creator's segment: never an orphan. */
    fake_add_file(s, "torch_1_2_3", 5, FT_SYMLINK, 11, 0);
    /* OpenMP registration of a dead pid: orphan; a semaphore: unheld. */
    fake_add_file(s, "__KMP_REGISTERED_LIB_888_0", 6, FT_REGULAR, 1024, 4096);
    fake_add_file(s, "sem.mp-abc", 7, FT_REGULAR, 32, 4096);
    /* Held by the orphaned worker, and an "other" segment held by cat. */
    fake_add_file(s, "torch_20_1", 8, FT_REGULAR, 1 * MiB, 1 * MiB);
    fake_add_holder(s, 20, 3, true, 8, "/dev/shm/torch_20_1", false, 1 * MiB, 1 * MiB);
    fake_add_file(s, "my segment\n1", 9, FT_REGULAR, 1 * MiB, 1 * MiB);
    fake_add_holder(s, 40, 4, false, 9, "/dev/shm/my segment\n1", false, 1 * MiB, 1 * MiB);
    /* A hidden segment only mapped, whose size could not be read. */
    fake_add_holder(s, 40, -1, true, 10, "/dev/shm/torch_40_1", true, 0, 0);
    s->holders.items[s->holders.n - 1].map_bytes = 2 * MiB;
    return s;
}


void fake_fixture_build(struct fake_fixture *f)
{
    struct model_opts o;
    model_opts_default(&o);
    model_build(f->s, &o, &f->m);
}

int fake_fixture_setup(void **state, struct scan *scene)
{
    struct fake_fixture *f = xcalloc(1, sizeof(*f));
    f->s = scene;
    fake_fixture_build(f);
    buf_init(&f->out);
    *state = f;
    return 0;
}

int fake_fixture_teardown(void **state)
{
    struct fake_fixture *f = *state;
    model_free(&f->m);
    scan_free(f->s);
    free(f->s);
    buf_free(&f->out);
    free(f);
    return 0;
}
