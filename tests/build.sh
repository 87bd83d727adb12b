#!/usr/bin/env bash
# Configures (once) and builds shmwatch: tests/build.sh [BUILDDIR [meson options...]]
# Warnings are errors here (and so in CI), though not in meson.build's
# defaults: a release built with a newer compiler is not stopped by new ones.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" -Dwerror=true "$@"
elif [ $# -gt 0 ]; then
  meson configure "$dir" "$@" # an existing directory gets the options asked for too
fi
ninja -C "$dir"
