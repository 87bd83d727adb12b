/* Shared includes and helpers of the cmocka unit tests. */
#ifndef SHMWATCH_TESTUTIL_H
#define SHMWATCH_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

#endif
