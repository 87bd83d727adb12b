#include "ui/terminfo.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <term.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/xalloc.h"

const struct terminfo_entry *terminfo_carried(const char *term)
{
    if (!term || !*term)
        return NULL;
    for (size_t i = 0; i < terminfo_nentries; i++)
        if (strcmp(terminfo_entries[i].name, term) == 0)
            return &terminfo_entries[i];
    return NULL;
}

/* Whether curses knows term; if so, *cannot_address says whether its entry
 * lacks cup. Whatever was current before stays current. */
static bool lookup(const char *term, bool *cannot_address)
{
    TERMINAL *old = cur_term;
    int err = 0;
    if (setupterm(term, STDOUT_FILENO, &err) != OK)
        return false;
    const char *cup = tigetstr("cup");
    *cannot_address = !cup || cup == (const char *)-1;
    TERMINAL *t = set_curterm(old);
    if (t && t != old)
        del_curterm(t);
    return true;
}

bool terminfo_system_has(const char *term)
{
    bool cannot;
    return lookup(term, &cannot);
}

bool terminfo_cannot_address(const char *term)
{
    bool cannot;
    return lookup(term, &cannot) && cannot; /* unknown: newterm says so */
}

/* mkdtemp below $TMPDIR, else /tmp. */
static int make_dir(char *dir, size_t n)
{
    const char *bases[] = {getenv("TMPDIR"), "/tmp"};
    int rc = -ENOENT;
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        if (!bases[i] || bases[i][0] != '/')
            continue;
        if ((size_t)snprintf(dir, n, "%s/shmwatch-terminfo.XXXXXX", bases[i]) >= n) {
            rc = -ENAMETOOLONG;
            continue;
        }
        if (mkdtemp(dir))
            return 0;
        rc = -errno;
    }
    dir[0] = '\0';
    return rc;
}

static void remove_files(struct terminfo_fallback *f)
{
    int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        int lfd = openat(dfd, f->leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (lfd >= 0) {
            if (f->name)
                unlinkat(lfd, f->name, 0);
            close(lfd);
        }
        unlinkat(dfd, f->leaf, AT_REMOVEDIR);
        close(dfd);
    }
    rmdir(f->dir);
}

int terminfo_fallback_begin(struct terminfo_fallback *f, const char *term,
                            bool (*has)(const char *term))
{
    memset(f, 0, sizeof(*f));
    const struct terminfo_entry *e = terminfo_carried(term);
    if (!e || has(term))
        return 0;
    int rc = make_dir(f->dir, sizeof(f->dir));
    if (rc < 0)
        return rc;
    /* Everything below the new directory by fd, nothing followed: it is
     * ours (mkdtemp made it 0700), and stays so. */
    f->leaf[0] = e->name[0];
    f->leaf[1] = '\0';
    int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int lfd = -1, fd = -1;
    if (dfd < 0 || mkdirat(dfd, f->leaf, 0700) != 0 ||
        (lfd = openat(dfd, f->leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        (fd = openat(lfd, e->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) <
            0) {
        rc = -errno;
    } else {
        f->name = e->name;
        rc = write_all(fd, e->data, e->len);
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = -errno;
    if (lfd >= 0)
        close(lfd);
    if (dfd >= 0)
        close(dfd);
    if (rc < 0) {
        remove_files(f);
        memset(f, 0, sizeof(*f));
        return rc;
    }
    const char *old = getenv("TERMINFO");
    f->saved = old ? xstrdup(old) : NULL;
    setenv("TERMINFO", f->dir, 1);
    f->active = true;
    return 1;
}

void terminfo_fallback_end(struct terminfo_fallback *f)
{
    if (!f->active)
        return;
    remove_files(f);
    if (f->saved)
        setenv("TERMINFO", f->saved, 1);
    else
        unsetenv("TERMINFO");
    free(f->saved);
    memset(f, 0, sizeof(*f));
}
