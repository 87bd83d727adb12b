#!/usr/bin/env bash
# --help and doc/shmwatch.1 say the same: every long option that a
# command's --help names is documented in the man page, every variable of
# the man page's ENVIRONMENT section is named in shmwatch --help and the
# other way round, every default path --help names is in its FILES, each
# subcommand's SYNOPSIS line has the options of its usage, and the range a
# refused value's message names is in both.
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
# and the other way: each variable of --help's Environment paragraph is one
# of the ENVIRONMENT section's tags.
help_vars=$(awk '/^Environment:/ { on = 1 } on && /^$/ { exit } on' <<<"$help" |
    grep -oE '\b[A-Z][A-Z0-9_]{2,}\b' | sort -u)
[ -n "$help_vars" ] || fail "shmwatch --help has no Environment paragraph"
missing=$(comm -23 <(echo "$help_vars") <(echo "$vars") | tr '\n' ' ')
[ -z "$missing" ] || fail "doc/shmwatch.1's ENVIRONMENT has no entry for these variables of --help: $missing"
ok "every variable of --help's Environment has its entry in the man page"

# Each default path a command's --help names ($XDG_STATE_HOME/shmwatch,
# /var/lib/shmwatch, ...) is a tag of the man page's FILES section.
files=$(awk '/^\.SH / { on = ($2 == "FILES"); next }
             on && /^\.TP/ { tag = 1; next }
             on && tag { print; tag = 0 }' "$MANPAGE" | sed 's/\\-/-/g')
[ -n "$files" ] || fail "doc/shmwatch.1 has no FILES section"
for cmd in "" clean reap record replay why; do
    # shellcheck disable=SC2086,SC2016 # "" is the main command; $XDG_ is the help's text
    for path in $("$SHMWATCH" $cmd --help | grep -oE '(\$XDG_[A-Z_]+|/var|/etc)(/[A-Za-z0-9._-]+)+' | sort -u); do
        grep -qF -- "$path" <<<"$files" ||
            fail "shmwatch${cmd:+ $cmd} --help names $path, which shmwatch(1)'s FILES does not list"
    done
done
ok "every default path of the commands' --help is in the man page's FILES"

# --count's help names every option that runs snapshots at an interval:
# --interval, and --prometheus-file (every 15 s without --interval).
count_help=$("$SHMWATCH" --help | awk '/^  --count / { on = 1; print; next }
                                       on && /^  +-/ { exit } on')
[ -n "$count_help" ] || fail "shmwatch --help has no --count entry"
for o in --interval --prometheus-file; do
    grep -qF -- "$o" <<<"$count_help" || fail "--help's --count entry does not name $o: $count_help"
done
ok "--help's --count entry names --interval and --prometheus-file"

# Each subcommand's line of the man page's SYNOPSIS names the options of its
# --help's usage lines, no more and no fewer.
for cmd in clean reap record replay why; do
    man_syn=$(awk -v c="$cmd" '/^\.SH / { on = ($2 == "SYNOPSIS"); next }
        on && $0 == ".B shmwatch " c { cmd = 1; next }
        on && /^\.(br|B shmwatch)/ { cmd = 0 }
        on && cmd' "$MANPAGE" | sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
    help_syn=$("$SHMWATCH" "$cmd" --help | awk '/^$/ { exit } 1' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
    [ -n "$man_syn" ] || fail "doc/shmwatch.1's SYNOPSIS has no line for shmwatch $cmd"
    [ "$man_syn" = "$help_syn" ] || fail "shmwatch $cmd: the man page's SYNOPSIS names" \
        "$(tr '\n' ' ' <<<"$man_syn")but its --help's usage $(tr '\n' ' ' <<<"$help_syn")"
done
ok "each subcommand's SYNOPSIS line names the options of its --help usage"

# An option whose value is refused out of a range says the range, and so do
# its --help entry and the man page: a bad value of each, the range its
# message names (0.05 s to 1 day, at most 3600, 1m to 3650d, ...), looked for
# in both.
_lib_tmp
man_text=$(sed 's/\\-/-/g' "$MANPAGE" | tr -s ' \n' '  ')
range_re='from [0-9.]+ s to [0-9]+ days?|[0-9]+[a-z]+ to [0-9]+[a-z]+|at (least|most) [0-9.]+( s|[a-z]+)?'
# CMD|OPTION|BAD VALUE|MORE ARGUMENTS (words that keep the command off this
# machine's /dev/shm and processes, should the value be taken after all)
nowhere="--mount $SHMTEST_TMP/none"
for t in "|--interval|0.01|--json $nowhere" "reap|--timeout|3601|--dry-run --pid 2147483647" \
    "record|--interval|0.01|--dir $SHMTEST_TMP/rec" "record|--max-size|1k|--dir $SHMTEST_TMP/rec" \
    "record|--max-age|5|--dir $SHMTEST_TMP/rec" "why|--since|0|--dir $SHMTEST_TMP/rec" \
    "|--orphan-min-age|400d|--json $nowhere" "clean|--orphan-min-age|400d|--dry-run $nowhere"; do
    IFS='|' read -r cmd opt bad more <<<"$t"
    rc=0
    # shellcheck disable=SC2086 # "" is the main command: no word at all; more is words
    "$SHMWATCH" $cmd "$opt" "$bad" $more </dev/null >/dev/null 2>"$SHMTEST_TMP/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "shmwatch${cmd:+ $cmd} $opt $bad: status $rc, expected 2 ($(cat "$SHMTEST_TMP/err"))"
    range=$(grep -oE "$range_re" "$SHMTEST_TMP/err" | head -n 1)
    [ -n "$range" ] || fail "shmwatch${cmd:+ $cmd} $opt $bad: the message names no range: $(cat "$SHMTEST_TMP/err")"
    # shellcheck disable=SC2086 # as above
    entry=$("$SHMWATCH" $cmd --help | awk -v o="$opt" '
        on && /^  (-[a-z], |    )?--/ { exit }
        $0 ~ "^  (-[a-z], |    )?" o " " { on = 1 } on' | tr -s ' \n' '  ')
    [ -n "$entry" ] || fail "shmwatch${cmd:+ $cmd} --help has no $opt entry"
    grep -qF -- "$range" <<<"$entry" ||
        fail "shmwatch${cmd:+ $cmd} --help's $opt entry does not say its range ($range):$entry"
    grep -qF -- "$range" <<<"$man_text" || fail "doc/shmwatch.1 does not say $opt's range ($range)"
    ok "shmwatch${cmd:+ $cmd} $opt: its range ($range) is in --help and the man page"
done
