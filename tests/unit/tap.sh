#!/bin/bash
# Runs a cmocka test program and passes its TAP on with each skipped test
# written "ok N # SKIP", as TAP has it: cmocka writes "not ok N # SKIP",
# which meson counts as a failure. The exit status is the program's.
set -o pipefail
"$@" | sed -u 's/^not ok \([0-9]*\) # SKIP/ok \1 # SKIP/'
