/* Shared includes and helpers of the cmocka unit tests. */
#ifndef SHMWATCH_TESTUTIL_H
#define SHMWATCH_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The fixtures directory (tests/fixtures), from the FIXTURES variable. */
static inline const char *fixtures_dir(void)
{
    const char *d = getenv("FIXTURES");
    return d ? d : "tests/fixtures";
}

#endif
