#!/usr/bin/env bash
# Runs a test as on a machine booted a minute ago: in a time namespace whose
# CLOCK_BOOTTIME reads 60 s (unshare --boottime), as CI's fresh machine
# reads soon after it starts. What the test makes of processes' start times
# must not depend on how long the machine has been up.
set -euo pipefail
up=$(cut -d. -f1 /proc/uptime)
offset=$((up > 60 ? 60 - up : 0))
if ! unshare --time --boottime "$offset" true 2>/dev/null; then
  echo "SKIP: no time namespace here (unshare --time needs root and CONFIG_TIME_NS)" >&2
  exit 77
fi
exec unshare --time --boottime "$offset" "$@"
