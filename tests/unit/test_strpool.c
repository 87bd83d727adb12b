/* The string pool: copies are exact and terminated, keep their addresses
 * while the pool grows, a string longer than a block has room of its own,
 * and a freed pool is empty and usable again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/strpool.h"

static void test_many_and_long(void **state)
{
    (void)state;
    struct strpool p = STRPOOL_INIT;
    enum { N = 30000 };
    char **got = malloc(N * sizeof(*got));
    assert_non_null(got);
    char want[32];
    for (size_t i = 0; i < N; i++) {
        snprintf(want, sizeof(want), "torch_%zu_x", i);
        got[i] = strpool_dup(&p, want);
    }
    size_t big = 200000; /* more than a block */
    char *long_in = malloc(big + 1);
    assert_non_null(long_in);
    memset(long_in, 'a', big);
    long_in[big] = '\0';
    char *long_out = strpool_dup(&p, long_in);
    char *after = strpool_ndup(&p, "unterminated here", 12); /* fills the block before */
    for (size_t i = 0; i < N; i++) { /* nothing moved as the pool grew */
        snprintf(want, sizeof(want), "torch_%zu_x", i);
        assert_string_equal(got[i], want);
    }
    assert_memory_equal(long_out, long_in, big + 1);
    assert_string_equal(after, "unterminated");
    assert_true(after < long_out || after >= long_out + big + 1); /* no overlap */
    strpool_free(&p);
    assert_null(p.head);
    assert_string_equal(strpool_dup(&p, ""), ""); /* usable again */
    strpool_free(&p);
    free(long_in);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_and_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
