#!/usr/bin/env bash
# The model is the boundary between what was read and what is shown or done
# (doc/design.md, "One scan"): src/report, src/act, src/cli and src/ui read a
# scan's mounts, processes, cgroups, node and its account of itself through
# the model's accessors (src/model/model.h), never through the scan's
# fields. Only the code that runs a scan for them holds one: cli/actcli.[ch]
# (clean and reap), cli/cmd_plan.c (plan --observe), ui/poller.[ch] (the
# dashboard) and ui/replay.c (a recorded snapshot read back into a scan for
# the dashboard); of those, actcli.c, poller.c and replay.c read theirs
# through a struct's scan member. main.c's snapshots sit above every layer.
# Fails naming every line elsewhere that declares a struct scan or reaches
# into one (comments aside).
set -euo pipefail
src=${SRCDIR:-$(dirname "$0")/../..}/src
[ -d "$src/model" ] || { echo "no source tree at $src" >&2; exit 1; }
holders='/(cli/actcli\.[ch]|cli/cmd_plan\.c|ui/poller\.[ch]|ui/replay\.c)$'
readers='/(cli/actcli|ui/poller|ui/replay)\.c$'
# One awk over every file: the lines of code (comments taken out; a line
# inside a comment block starts with "*") that hold or read a scan.
hits=$(find "$src/report" "$src/act" "$src/cli" "$src/ui" -name '*.[ch]' | sort |
    xargs awk -v holders="$holders" -v readers="$readers" -v src="$src/" '
    {
        line = $0
        sub(/\/\*.*(\*\/|$)/, "", line)
        sub(/\/\/.*/, "", line)
        if (line ~ /^[[:space:]]*\*/)
            line = ""
        name = substr(FILENAME, length(src) + 1)
        if (FILENAME !~ holders && line ~ /struct scan([^A-Za-z0-9_]|$)/)
            print name ":" FNR ":" $0
        else if (FILENAME !~ readers && line ~ /(->|\.)scan[[:space:]]*(->|\.|[;,)])/)
            print name ":" FNR ":" $0
    }')
if [ -n "$hits" ]; then
    echo "$hits" >&2
    echo "these lines hold or read a scan: use the model's accessors (src/model/model.h)" >&2
    exit 1
fi
echo "report, act, cli and ui read every scan through the model"
