/* The shared in-memory scene of the unit tests:
 *  5 launcher (python) -> 10 main (python, pgid 10) -> 11, 12 workers (python)
 *  13 torch_shm_manag started by worker 11; 30 zombie child of 10
 *  20 orphan worker (python, ppid 1, pgid 19 gone), 40 some other holder (cat).
 * Segments on one 64 MiB mount (device 0:45), 40 MiB used. */
#ifndef SHMWATCH_FAKE_SCENE_H
#define SHMWATCH_FAKE_SCENE_H

#include "collect/scan.h"

#define MiB (1024ull * 1024ull)

struct scan *fake_scene(void);

#endif
