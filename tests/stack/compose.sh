#!/usr/bin/env bash
# Fetches (once) and prints the path of Debian 13's ("trixie") Docker
# Compose v2, for the test that runs config/deploy/docker-compose.yaml as it
# is (tests/integration/deploy_compose.sh): Debian 12's docker-compose is 1.29,
# which knows neither `cgroup: host` nor `docker compose`.
#
#   dir=$(bash tests/stack/compose.sh)      # fetches it if needed, prints its path
#   "$dir/usr/libexec/docker/cli-plugins/docker-compose" version
#   bash tests/stack/compose.sh --check     # exit 0 if it is here, 1 if not
#
# The package is downloaded by apt-get with a private source list (trixie
# from the machine's Debian mirror, signed by debian-archive-keyring) and
# unpacked with dpkg-deb: nothing is installed on the machine. Its one
# dependency is libc6 (>= 2.34), which Debian 12 has. Cached at
# $SHMWATCH_COMPOSE_ROOT (default /var/cache/shmwatch-tests/trixie-compose)
# under the rules of root_lib.sh. Needs root and the network the first time.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/root_lib.sh"

ROOT=${SHMWATCH_COMPOSE_ROOT:-/var/cache/shmwatch-tests/trixie-compose}
NAME=compose.sh
SUITE=trixie
PACKAGE=docker-compose
# Bump when the recipe below changes in a way that needs a fetch again.
RECIPE=1
WANT="recipe=$RECIPE suite=$SUITE mirror=$(root_mirror) package=$PACKAGE"
BIN=usr/libexec/docker/cli-plugins/docker-compose
root_ready() { [ -x "$ROOT/$BIN" ]; }

root_begin "$@"
mkdir -p "$NEW/apt/lists/partial" "$NEW/deb"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(root_mirror) $SUITE main" \
    >"$NEW/apt/sources.list"
APT=(-q -o "Dir::Etc::sourcelist=$NEW/apt/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$NEW/apt/lists" -o APT::Sandbox::User=root)
echo "$NAME: fetching $SUITE's $PACKAGE into $ROOT; log: $LOG" >&2
if ! apt-get "${APT[@]}" update >>"$LOG" 2>&1 ||
    ! (cd "$NEW/deb" && apt-get "${APT[@]}" download "$PACKAGE") >>"$LOG" 2>&1; then
    tail -n 20 "$LOG" >&2
    die "downloading $SUITE's $PACKAGE failed (log: $LOG)"
fi
dpkg-deb -x "$NEW"/deb/"$PACKAGE"_*.deb "$NEW" || die "unpacking $PACKAGE failed"
rm -rf "$NEW/apt" "$NEW/deb" "$NEW/usr/share/doc"
version=$("$NEW/$BIN" version 2>>"$LOG") || die "the unpacked $PACKAGE does not run here (log: $LOG)"
root_finish "$version"
