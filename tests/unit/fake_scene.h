/* The shared in-memory scene of the unit tests:
 *  5 launcher (python) -> 10 main (python, pgid 10) -> 11, 12 workers (python)
 *  13 torch_shm_manag started by worker 11; 30 zombie child of 10
 *  20 orphan worker (python catching torch's worker signals, libtorch mapped,
 *  ppid 1), 40 some other holder (cat). 10-13 and 20 map libtorch.
 * Segments on one 64 MiB mount (device 0:45), 40 MiB used. */
#ifndef SHMWATCH_FAKE_SCENE_H
#define SHMWATCH_FAKE_SCENE_H

#include "collect/scan.h"
#include "model/model.h"
#include "util/buf.h"

#define MiB (1024ull * 1024ull)

struct scan *fake_scene(void);
/* Only the mount: 64 MiB, 40 MiB used, no process, no file. */
struct scan *fake_scene_empty(void);
/* Another tmpfs at /dev/shm of device 0:minor_no, its size read. */
struct shm_mount *fake_add_mount(struct scan *s, unsigned minor_no, uint64_t size, uint64_t used);
/* A v1 memory cgroup at path with that limit and anonymous memory (its
 * usage too), whose kernel counts 3 OOM kills. */
void fake_cgroup(struct cgroup_info *cg, const char *path, uint64_t limit, uint64_t anon);
void fake_add_file(struct scan *s, const char *name, ino_t ino, enum file_type type,
                   uint64_t size, uint64_t alloc);
void fake_add_holder(struct scan *s, pid_t pid, int fd, bool mapped, ino_t ino,
                     const char *path, bool deleted, uint64_t size, uint64_t alloc);
/* Adds a process; returns it so a test can set more fields (sigcatch...). */
struct proc *fake_add_proc(struct scan *s, pid_t pid, pid_t ppid, pid_t pgid, char state,
                           const char *comm, const char *exe);
/* Marks pid as having libtorch mapped (pids must come in ascending order). */
void fake_torch_loaded(struct scan *s, pid_t pid);

/* A cmocka fixture of the report tests: a scene, its model and a buffer
 * to write into. A setup function returns fake_fixture_setup(state,
 * scene) (the fixture owns the scene), the teardown is
 * fake_fixture_teardown. */
struct fake_fixture {
    struct scan *s;
    struct model m;
    struct buf out;
};
int fake_fixture_setup(void **state, struct scan *scene);
int fake_fixture_teardown(void **state);
/* The model of f's scene with the default options (again after model_free,
 * when a test has changed the scene). */
void fake_fixture_build(struct fake_fixture *f);

#endif
