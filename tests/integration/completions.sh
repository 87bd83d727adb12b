#!/usr/bin/env bash
# The shell completions (completions/) offer exactly the options the program
# takes (each command's --help, made from the option table of
# src/cli/opttable.c, so a new option without its completion fails here),
# bash's completes words for real, zsh's parses, and `meson install` puts
# them, the man page, the themes and the examples where Debian looks for
# them.
. "$(dirname "$0")/lib.sh"
need bash zsh meson
_lib_tmp

bashc=$SRCDIR/completions/shmwatch.bash
zshc=$SRCDIR/completions/_shmwatch

# the long options of a command's --help: its option lines ("  --once",
# "  -n, --dry-run", "      --all-unheld"), not the usage or help text
help_opts() { # CMD (main: the dashboard)
    local sub=
    [ "$1" = main ] || sub=$1
    # shellcheck disable=SC2086 # no subcommand for main
    "$SHMWATCH" $sub --help | sed -n 's/^  \(-[a-z], \|    \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' |
        sort -u
}
# the bash completion's list for a case label (clean, reap, plan, or '*')
bash_opts() {
    awk -v c="$1" '
        $1 == c ")" || ($1 == "*)" && c == "*") { want = 1 }
        want && /opts="/ { sub(/.*opts="/, ""); sub(/".*/, ""); print; exit }' "$bashc" |
        tr ' ' '\n' | grep -- '^--' | sort -u
}
# the zsh completion's long options between "CMD)" and its "return" (the
# top level: after the last "esac")
zsh_opts() {
    if [ "$1" = '*' ]; then
        awk '/^ *esac/ { on = 1 } on' "$zshc"
    else
        awk -v c="$1" '$1 == c ")" { on = 1 } on && /return/ { exit } on' "$zshc"
    fi | grep -o -- "--[a-z][a-z-]*" | sort -u
}

for cmd in main clean reap plan record replay why; do
    case $cmd in
    main) src="shmwatch --help" label='*' ;;
    *) src="shmwatch $cmd --help" label=$cmd ;;
    esac
    want=$(help_opts "$cmd")
    [ "$(echo "$want" | wc -l)" -ge 5 ] || fail "$cmd: found too few options in $src"
    assert_eq "$(bash_opts "$label")" "$want" "bash completion of $cmd: the options of $src"
    assert_eq "$(zsh_opts "$label")" "$want" "zsh completion of $cmd: the options of $src"
    ok "$cmd: both completions offer exactly the $(echo "$want" | wc -l) options of $src"
done

# bash: the real completion function on real command lines.
complete_line() { # WORDS... (the last one is being completed)
    bash --noprofile --norc -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _shmwatch shmwatch "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"' bash "$bashc" "$@"
}
assert_eq "$(complete_line shmwatch --pro | sort | tr '\n' ' ')" "--prometheus --prometheus-file " \
    "bash completes --pro"
assert_eq "$(complete_line shmwatch cl)" "clean" "bash completes the subcommand clean"
assert_eq "$(complete_line shmwatch clean --all- | tr '\n' ' ')" "--all-unheld " "bash completes clean's options"
assert_eq "$(complete_line shmwatch plan --dtype bf)" "bfloat16" "bash completes plan's dtypes"
assert_eq "$(complete_line shmwatch rec)" "record" "bash completes the subcommand record"
assert_eq "$(complete_line shmwatch record --max- | tr '\n' ' ')" "--max-size --max-age " "bash completes record's options"
assert_eq "$(complete_line shmwatch rep)" "replay" "bash completes the subcommand replay"
assert_eq "$(complete_line shmwatch replay --a | sort | tr '\n' ' ')" "--ascii --at " \
    "bash completes replay's options"
mkdir -p "$SHMTEST_TMP/cfg/shmwatch/themes"
cp "$SRCDIR/themes/light.yaml" "$SHMTEST_TMP/cfg/shmwatch/themes/mine.yaml"
XDG_CONFIG_HOME=$SHMTEST_TMP/cfg complete_line shmwatch --theme m | grep -qx mine ||
    fail "bash does not offer the user's theme 'mine'"
complete_line shmwatch --pid "" | grep -qx 1 || fail "bash does not offer pid 1 after --pid"
ok "bash completes options, subcommands, dtypes, themes and pids"

zsh -n "$zshc" || fail "zsh cannot parse $zshc"
ok "zsh parses _shmwatch"

# meson install: Debian's places below the prefix.
build=$(dirname "$(dirname "$SHMWATCH")")
dest=$SHMTEST_TMP/dest
meson install -C "$build" --no-rebuild --destdir "$dest" >"$SHMTEST_TMP/install.log" 2>&1 ||
    fail "meson install failed: $(tail -n 5 "$SHMTEST_TMP/install.log")"
prefix=$(meson introspect "$build" --buildoptions |
    python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
for f in bin/shmwatch share/bash-completion/completions/shmwatch \
    share/zsh/vendor-completions/_shmwatch share/man/man1/shmwatch.1 \
    share/shmwatch/themes/default.yaml share/doc/shmwatch/examples/shmwatch.yaml \
    share/doc/shmwatch/examples/deploy/kubernetes-daemonset.yaml; do
    [ -f "$dest$prefix/$f" ] || fail "meson install did not install $prefix/$f"
done
cmp -s "$bashc" "$dest$prefix/share/bash-completion/completions/shmwatch" ||
    fail "the installed bash completion differs from completions/shmwatch.bash"
ok "meson install puts the binary, completions, man page, themes and examples in place"
