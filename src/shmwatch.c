/* The program's entry point: everything is shmwatch_main (src/main.c), which
 * a test-only executable (tests/helpers/shmwatch_hooked.c) also runs with
 * its test hooks set; this one sets none. */
#include "cli/subcommands.h"

int main(int argc, char **argv)
{
    return shmwatch_main(argc, argv);
}
