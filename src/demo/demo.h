/* The demo scene behind `shmwatch --demo`: a private mount namespace with
 * a fresh 64 MiB tmpfs at /dev/shm, and in it a synthetic training job (a
 * main process, a torch_shm_manager and DataLoader workers) that fills the
 * mount, leaks, crashes and starts over, in a loop. Nothing outside the
 * namespace is touched, and everything ends with shmwatch: the processes
 * die with their parent and the tmpfs with the namespace. No ncurses. */
#ifndef SHMWATCH_DEMO_H
#define SHMWATCH_DEMO_H

#include <sys/types.h>

struct demo {
    pid_t main; /* the scene's main process, leader of its process group */
};

/* Moves this process (which must have no threads yet) into the private
 * namespace and starts the scene. Returns 0; -EPERM when not root; or
 * -errno; then *err is a malloc'd one-line message. */
int demo_start(struct demo *d, char **err);

/* Ends the scene's processes and waits for its main. */
void demo_stop(struct demo *d);

/* scene.c: the scene's main process; never returns. */
__attribute__((noreturn)) void demo_scene_main(const char *shm_dir);

#endif
