#include "demo/demo.h"

#include <errno.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#define DEMO_SHM_SIZE (64ull << 20) /* the tmpfs's size=64m */

static __attribute__((format(printf, 3, 4))) int fail(char **err, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *err = str_vprintf(fmt, ap);
    va_end(ap);
    return rc;
}

/* The mount the scene will fill must be the fresh tmpfs: the scene deletes
 * its own leftovers there, and must never see anything else. */
static bool fresh_tmpfs(const char *dir)
{
    struct statfs st;
    if (statfs(dir, &st) != 0 || (unsigned long)st.f_type != TMPFS_MAGIC)
        return false;
    if ((unsigned long long)st.f_blocks * (unsigned long long)st.f_bsize != DEMO_SHM_SIZE)
        return false;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

int demo_start(struct demo *d, char **err)
{
    d->main = 0;
    if (geteuid() != 0)
        return fail(err, -EPERM,
                    "needs root: it makes a private mount namespace with its own 64 MiB "
                    "/dev/shm (try: sudo shmwatch --demo)");
    if (unshare(CLONE_NEWNS) != 0)
        return fail(err, -errno, "cannot make a private mount namespace: %s", strerror(errno));
    /* Nothing mounted from here on propagates back to the host. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fail(err, -errno, "cannot make the mounts private: %s", strerror(errno));
    if (mount("shmwatch-demo", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") !=
        0)
        return fail(err, -errno, "cannot mount a tmpfs on /dev/shm: %s", strerror(errno));
    if (!fresh_tmpfs("/dev/shm"))
        return fail(err, -EIO, "the demo's /dev/shm is not the fresh 64 MiB tmpfs it mounted");
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return fail(err, -errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0); /* shmwatch is already gone */
        demo_scene_main("/dev/shm");
    }
    setpgid(pid, pid); /* also here, so that demo_stop never races the child's own call */
    d->main = pid;
    return 0;
}

void demo_stop(struct demo *d)
{
    if (d->main <= 0)
        return;
    kill(-d->main, SIGKILL);
    kill(d->main, SIGKILL);
    while (waitpid(d->main, NULL, 0) < 0 && errno == EINTR)
        ;
    d->main = 0;
}
