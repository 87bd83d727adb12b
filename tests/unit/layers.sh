#!/usr/bin/env bash
# The model is the boundary between what was read and what is shown or done
# (doc/design.md, "One scan"): src/report, src/act, src/cli and src/ui read a
# scan's mounts, processes, cgroups, node and its account of itself through
# the model's accessors (src/model/model.h), never through the scan's
# fields. Only the code that runs a scan for them holds one and reads it
# whole: src/cli/actcli.c (clean and reap) and src/ui/poller.c (the
# dashboard); main.c's snapshots and cmd_plan.c's --observe keep theirs in
# locals of their own, out of this check's sight.
# Fails naming every line elsewhere that reaches into a scan (comments aside).
set -euo pipefail
src=${SRCDIR:-$(dirname "$0")/../..}/src
[ -d "$src/model" ] || { echo "no source tree at $src" >&2; exit 1; }
owners='/(cli/actcli|ui/poller)\.c$'
bad=0
while IFS= read -r f; do
    [[ $f =~ $owners ]] && continue
    # The code of each line, its comments taken out (a line inside a
    # comment block starts with "*").
    hits=$(sed -E 's#/\*.*(\*/|$)##; s#//.*##; s#^[[:space:]]*\*.*##' "$f" |
        grep -nE '(->|\.)scan[[:space:]]*(->|\.|[;,)])' || true)
    if [ -n "$hits" ]; then
        sed "s#^#${f#"$src"/}:#" <<<"$hits" >&2
        bad=1
    fi
done < <(find "$src/report" "$src/act" "$src/cli" "$src/ui" -name '*.[ch]' | sort)
if [ "$bad" != 0 ]; then
    echo "these lines read a scan's fields: use the model's accessors (src/model/model.h)" >&2
    exit 1
fi
echo "report, act, cli and ui read every scan through the model"
