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
bad=0
# check FILE REGEX: the lines of FILE's code (its comments taken out; a
# line inside a comment block starts with "*") that match REGEX.
check() {
    local hits
    hits=$(sed -E 's#/\*.*(\*/|$)##; s#//.*##; s#^[[:space:]]*\*.*##' "$1" | grep -nE "$2" || true)
    if [ -n "$hits" ]; then
        sed "s#^#${1#"$src"/}:#" <<<"$hits" >&2
        bad=1
    fi
}
while IFS= read -r f; do
    [[ $f =~ $holders ]] || check "$f" 'struct scan\b([^_]|$)'
    [[ $f =~ $readers ]] || check "$f" '(->|\.)scan[[:space:]]*(->|\.|[;,)])'
done < <(find "$src/report" "$src/act" "$src/cli" "$src/ui" -name '*.[ch]' | sort)
if [ "$bad" != 0 ]; then
    echo "these lines hold or read a scan: use the model's accessors (src/model/model.h)" >&2
    exit 1
fi
echo "report, act, cli and ui read every scan through the model"
