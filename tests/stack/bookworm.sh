#!/usr/bin/env bash
# Builds (once) and prints the path of a minimal Debian 12 ("bookworm") root,
# a bare system to install the .deb into (tests/integration/package.sh):
#
#   root=$(bash tests/stack/bookworm.sh)      # builds it if needed, prints its path
#   bash tests/stack/bookworm.sh --check      # exit 0 if it is built, 1 if not
#
# debootstrap --variant=minbase, nothing added, documentation kept (the test
# checks what the package installs there). Cached at $SHMWATCH_BOOKWORM_ROOT
# (default /var/cache/shmwatch-tests/bookworm) under the rules of
# root_lib.sh. Tests use it read-only (an overlay on top), so it stays bare.
# Needs root, debootstrap and the network the first time.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/root_lib.sh"

ROOT=${SHMWATCH_BOOKWORM_ROOT:-/var/cache/shmwatch-tests/bookworm}
NAME=bookworm.sh
SUITE=bookworm
# Bump when the recipe below changes in a way that needs a rebuild.
RECIPE=1
WANT="recipe=$RECIPE suite=$SUITE variant=minbase mirror=$(root_mirror)"
root_ready() { [ -x "$ROOT/usr/bin/apt-get" ]; }

root_begin "$@"
root_debootstrap "$SUITE"
rm -rf "$NEW"/var/cache/apt/archives/*.deb
root_finish
