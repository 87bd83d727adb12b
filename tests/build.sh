#!/usr/bin/env bash
# Configures (once) and builds shmwatch: tests/build.sh [BUILDDIR [meson options...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$dir" "$@" # an existing directory gets the options asked for too
fi
ninja -C "$dir"
