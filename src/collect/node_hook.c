/* The node view's test hook (collect/node.h): a pointer that only
 * tests/helpers/shmwatch_hooked.c sets. */
#include "collect/node.h"

static node_member_hook member_hook;

void node_set_test_member_hook(node_member_hook fn)
{
    member_hook = fn;
}

void node_test_member(enum node_hook_at at, pid_t pid)
{
    if (member_hook)
        member_hook(at, pid);
}
