/* Shared includes and helpers of the cmocka unit tests. */
#ifndef SHMWATCH_TESTUTIL_H
#define SHMWATCH_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "util/sysroot.h"

/* The fixtures directory (tests/fixtures), from the FIXTURES variable. */
static inline const char *fixtures_dir(void)
{
    const char *d = getenv("FIXTURES");
    return d ? d : "tests/fixtures";
}

/* A config or theme fixture: tests/fixtures/config/REL, into buf. */
static inline const char *fixture(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/config/%s", fixtures_dir(), rel);
    return buf;
}

/* A file of the source tree (fixtures are at <src>/tests/fixtures). */
static inline const char *source(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/../../%s", fixtures_dir(), rel);
    return buf;
}

/* A root seam on proc (a fixture tree, or the real "/proc") with host
 * and root (NULL: "/"); the test closes it with sysroot_close. */
static inline struct sysroot test_sysroot(const char *proc, const char *root)
{
    struct sysroot r;
    assert_int_equal(sysroot_open(&r, proc, root ? root : "/", root ? root : "/"), 0);
    return r;
}

/* Linux 6.11 or later: PROCMAP_QUERY answers on a maps file. */
static inline bool kernel_has_query(void)
{
    struct utsname u;
    unsigned major = 0, minor = 0;
    return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
           (major > 6 || (major == 6 && minor >= 11));
}

#endif
