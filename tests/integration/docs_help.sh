#!/usr/bin/env bash
# --help and doc/shmwatch.1 say the same: every long option that a
# command's --help names is documented in the man page, and every variable
# of the man page's ENVIRONMENT section is named in shmwatch --help.
. "$(dirname "$0")/lib.sh"
MANPAGE=$SRCDIR/doc/shmwatch.1
[ -r "$MANPAGE" ] || fail "cannot read $MANPAGE"

for cmd in "" clean reap plan record replay why; do
    # shellcheck disable=SC2086 # "" is the main command: no word at all
    help=$("$SHMWATCH" $cmd --help) || fail "shmwatch $cmd --help exited $?"
    opts=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
    [ -n "$opts" ] || fail "shmwatch $cmd --help names no option"
    missing=
    for o in $opts; do
        grep -qF -- "${o//-/\\-}" "$MANPAGE" || missing="$missing $o"
    done
    [ -z "$missing" ] || fail "shmwatch $cmd --help names options doc/shmwatch.1 does not document:$missing"
    ok "shmwatch${cmd:+ $cmd} --help: its $(wc -w <<<"$opts") options are in the man page"
done

# The tags (the line after each .TP) of ENVIRONMENT, up to the next section.
vars=$(awk '/^\.SH / { env = ($2 == "ENVIRONMENT"); next }
            env && /^\.TP/ { tag = 1; next }
            env && tag { print; tag = 0 }' "$MANPAGE" |
    grep -oE '\b[A-Z][A-Z0-9_]{2,}\b' | sort -u)
[ -n "$vars" ] || fail "no variable found in doc/shmwatch.1's ENVIRONMENT section"
help=$("$SHMWATCH" --help)
missing=
for v in $vars; do
    grep -qw -- "$v" <<<"$help" || missing="$missing $v"
done
[ -z "$missing" ] || fail "shmwatch --help does not name these variables of shmwatch(1)'s ENVIRONMENT:$missing"
ok "shmwatch --help names every variable of the man page's ENVIRONMENT: $(tr '\n' ' ' <<<"$vars")"

# --count's help names every option that runs snapshots at an interval:
# --interval, and --prometheus-file (every 15 s without --interval).
count_help=$("$SHMWATCH" --help | awk '/^  --count / { on = 1; print; next }
                                       on && /^  +-/ { exit } on')
[ -n "$count_help" ] || fail "shmwatch --help has no --count entry"
for o in --interval --prometheus-file; do
    grep -qF -- "$o" <<<"$count_help" || fail "--help's --count entry does not name $o: $count_help"
done
ok "--help's --count entry names --interval and --prometheus-file"
