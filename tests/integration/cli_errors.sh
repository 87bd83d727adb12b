#!/usr/bin/env bash
# Bad input gets one clear line on stderr and a non-zero status (2 for usage
# and configuration), never a crash, a hang or output on stdout; and a full
# /dev/shm is only something to report.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need setsid
# A private pid namespace: reap --yes must see only this test's processes.
test_ns 64m --pid -- "$@"

# expect STATUS PATTERN ARGS...: shmwatch ARGS exits STATUS within 10 s,
# prints nothing on stdout and exactly one line on stderr matching PATTERN.
expect() {
    local want=$1 pattern=$2 rc=0
    shift 2
    timeout 10 "$SHMWATCH" "$@" </dev/null >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
    [ "$rc" -ne 124 ] || fail "shmwatch $* hung"
    [ "$rc" -eq "$want" ] || fail "shmwatch $*: status $rc, expected $want ($(cat "$SHMTEST_TMP/err"))"
    [ ! -s "$SHMTEST_TMP/out" ] || fail "shmwatch $*: wrote to stdout: $(head -c 200 "$SHMTEST_TMP/out")"
    [ "$(wc -l <"$SHMTEST_TMP/err")" -eq 1 ] ||
        fail "shmwatch $*: expected one line on stderr, got: $(cat "$SHMTEST_TMP/err")"
    grep -Eq -- "$pattern" "$SHMTEST_TMP/err" ||
        fail "shmwatch $*: stderr does not match /$pattern/: $(cat "$SHMTEST_TMP/err")"
    ok "shmwatch $* -> $want: $(cat "$SHMTEST_TMP/err")"
}

expect 2 "unknown option '--bogus'" --bogus
expect 2 "--interval: 'x' is not a duration" --json --interval x
# A duration is a plain decimal number with a documented unit: strtod's
# hexadecimal and exponent forms are refused, wherever a duration is read,
# and the message says it is the form (1e1 is within --interval's range).
not_plain='is not a plain decimal duration \(such as'
expect 2 "^shmwatch: --interval: '0x10' $not_plain 2, 0.5s or 10m\)$" --json --interval 0x10
expect 2 "^shmwatch: --interval: '1e1' $not_plain 2, 0.5s or 10m\)$" --json --interval 1e1
expect 2 "^shmwatch clean: --min-age: '1E3' $not_plain 2, 0.5s or 10m\) \(see shmwatch clean --help\)$" clean --min-age 1E3
expect 2 "^shmwatch reap: --timeout: '1e1' $not_plain 2, 0.5s or 10m\) \(see shmwatch reap --help\)$" reap --timeout 1e1
expect 2 "^shmwatch: --orphan-min-age: '0x3c' $not_plain 500ms, 2s or 10m\)$" --json --orphan-min-age 0x3c
expect 2 "^shmwatch clean: --orphan-min-age: '6e1' $not_plain 500ms, 2s or 10m\)" clean --orphan-min-age 6e1
expect 2 "--count: '-1'" --json --interval 1 --count -1
expect 2 "--count needs --interval" --json --count 3
# --once and --prometheus print one snapshot: --interval is for streams
# (else --once never ended, and --prometheus wrote expositions one after
# another, each HELP and TYPE line twice).
expect_interval() { # MODE ARGS...
    local mode=$1
    shift
    expect 2 "^shmwatch: --interval goes with --json, --prometheus-file and the dashboard, not $mode \\(one snapshot\\)$" "$mode" "$@"
}
expect_interval --once --interval 1
expect_interval --once --interval 0.05 --count 2
expect_interval --prometheus --interval 1 --count 2
expect_interval --prometheus --interval 1 --count 0
expect 2 "--count needs --interval" --once --count 2
expect 2 "--count needs --interval" --prometheus --count 2
expect 2 "^shmwatch: --prometheus-file needs a file name, not an empty string$" --prometheus-file "" --count 1
# --demo is the dashboard on a scene of its own: a snapshot would have shown
# the real /dev/shm as if it were the demo's.
for mode in --once --json --prometheus "--prometheus-file $SHMTEST_TMP/demo.prom"; do
    # shellcheck disable=SC2086 # mode is one or two words
    expect 2 "^shmwatch: --demo opens the dashboard on its own scene: it excludes --once, --json, --prometheus and --prometheus-file$" --demo $mode
done
[ ! -e "$SHMTEST_TMP/demo.prom" ] || fail "--demo --prometheus-file wrote its file"
# --record is the dashboard's: a snapshot mode with it is a usage error, and
# nothing is recorded.
for mode in --once --json --prometheus; do
    expect 2 "^shmwatch: --record is the dashboard's; a recorder without it is shmwatch record$" --record "$SHMTEST_TMP/rec" $mode
    expect 2 "^shmwatch: --record is the dashboard's; a recorder without it is shmwatch record$" $mode --record
done
expect 2 "^shmwatch: --demo shows a scene of its own: it is not recorded \\(--record\\)$" --demo --record
expect 2 "^shmwatch: --record needs a directory name, not an empty string$" --record=
[ ! -e "$SHMTEST_TMP/rec" ] || fail "--record with a snapshot mode made its store"
expect 2 "--mount: 'relative' is not an absolute path" --once --mount relative
expect 2 "--pid: 'abc' is not a process id" --json --pid abc
expect 2 "^shmwatch: --orphan-min-age: expected a duration .* got 'soon'" --json --orphan-min-age soon
expect 2 "^shmwatch clean: --orphan-min-age: expected a duration .* got '-5'" clean --orphan-min-age -5
expect 2 "exclude each other" --once --json
expect 2 "needs a value" --json --interval
expect 2 "unexpected argument 'extra'" --once extra
# SHMWATCH_MAPS (how mappings are read) takes text or query, nothing else;
# its value is shown escaped.
SHMWATCH_MAPS=$'sideways\e[2J' expect 2 '^shmwatch: SHMWATCH_MAPS is "sideways\\e\[2J": text or query$' --json
SHMWATCH_MAPS=TEXT expect 2 '^shmwatch clean: SHMWATCH_MAPS is "TEXT": text or query' clean
expect 2 "malformed.yaml:3:9: did not find expected" --once --config "$FIXTURES/config/bad/malformed.yaml"
expect 2 "unknown_key.yaml:3:1: unknown key 'scan_intervall'" --json --config "$FIXTURES/config/bad/unknown_key.yaml"
expect 2 "/nonexistent.yaml: No such file or directory" --json --config /nonexistent.yaml
expect 2 "theme" --theme 'no such theme!'
# A FIFO that no process writes to is said at once (a plain open would wait
# for a writer forever, with nothing said); a shell's <(...) is read as a file,
# also when its writer is still on its way.
mkfifo "$SHMTEST_TMP/fifo.yaml"
expect 2 "^shmwatch: $SHMTEST_TMP/fifo.yaml: a FIFO or pipe that no process writes to$" --once --config "$SHMTEST_TMP/fifo.yaml"
expect 2 "^shmwatch clean: $SHMTEST_TMP/fifo.yaml: a FIFO or pipe that no process writes to$" clean --config "$SHMTEST_TMP/fifo.yaml"
expect 2 "^shmwatch: /dev/fd/[0-9]+:1:11: warn_pct: 500 is out of range" --json --config <(echo 'warn_pct: 500')
expect 2 "^shmwatch: /dev/fd/[0-9]+:1:11: warn_pct: 500 is out of range" --json --config <(sleep 0.5; echo 'warn_pct: 500')
timeout 10 "$SHMWATCH" --json --config <(echo 'warn_pct: 50') >"$SHMTEST_TMP/subst.json" ||
    fail "--config <(echo 'warn_pct: 50') exited $?"
json_check "$SHMTEST_TMP/subst.json" "j['schema'] == 1" "--config <(...) is read as a file"
# A file that waits for more instead of ending (/proc/kmsg) is refused once
# it has given what it holds, never read forever; a terminal (--config
# /dev/stdin, typed up to Ctrl-D) is still read to its end.
expect 2 "^shmwatch: /proc/kmsg: cannot read: it waits for more instead of ending$" --json --config /proc/kmsg
expect 2 "^shmwatch clean: /proc/kmsg: cannot read: it waits for more instead of ending$" clean --config /proc/kmsg
timeout 10 /usr/bin/python3 -c '
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE)
os.close(slave)
os.write(master, b"warn_pct: 50\n\x04")
out = p.communicate()[0]
sys.stdout.buffer.write(out)
sys.exit(p.returncode)' "$SHMWATCH" --json --config /dev/stdin >"$SHMTEST_TMP/tty.json" ||
    fail "--config /dev/stdin from a terminal exited $?"
json_check "$SHMTEST_TMP/tty.json" "j['schema'] == 1" "--config /dev/stdin from a terminal is read to its end"
expect 2 "needs a terminal" 
expect 1 "cannot watch pid" --json --pid 2147483647
# A zombie is said to be one (it has exited, not yet reaped), not "no such
# process" while ps still lists it.
zombie_parent "$SHMTEST_TMP/sigchld"
zombie_why="the process is a zombie \\(it has exited; its parent has not reaped it yet\\)"
expect 1 "^shmwatch: cannot watch pid $ZOMBIE: $zombie_why$" --json --pid "$ZOMBIE"
expect 1 "^shmwatch clean: cannot act in pid $ZOMBIE: $zombie_why$" clean --pid "$ZOMBIE" --dry-run
expect 1 "^shmwatch reap: cannot act in pid $ZOMBIE: $zombie_why$" reap --pid "$ZOMBIE" --dry-run
expect 2 "^shmwatch plan: cannot watch pid $ZOMBIE: $zombie_why$" plan --observe "$ZOMBIE"
kill -KILL "$ZOMBIE_PARENT"
expect 2 "shmwatch plan: " plan --batch-size 0 --sample-shape 3x224x224 --workers 2
expect 2 "shmwatch plan: .*does not fit in 64 bits" plan --batch-size 4294967296 --sample-shape 4294967296x4294967296 --workers 2
expect 2 "shmwatch plan: .*--batch-size" plan --sample-shape 3x8x8 --workers 2
# --observe measures the batch: what would describe it is refused, not ignored.
expect 2 "^shmwatch plan: --observe takes the batch from the loader: no --batch-size " plan --observe 1 -b 4
expect 2 "^shmwatch plan: --observe takes the batch from the loader: no --sample-shape " plan --observe 1 -s 3
expect 2 "^shmwatch plan: --observe takes the batch from the loader: no --dtype " plan --observe 1 --dtype float64
# The sizes given are said as given, not rounded up to MiB as advice is.
out=$("$SHMWATCH" plan -b 1 -s 1 -w 1 --shm-size 15k --memory 3000000) || fail "plan exited $?"
grep -q '^6\. Against --shm-size 15k$' <<<"$out" && grep -q '^7\. Against --memory 3000000$' <<<"$out" ||
    fail "plan does not name the sizes as given: $(grep Against <<<"$out")"
ok "plan names --shm-size 15k and --memory 3000000 as given"
expect 2 "shmwatch clean: .*--min-age" clean --min-age soon
# why: bad input, and a recording that is not there or not one.
expect 2 "^shmwatch why: --pid and --container exclude each other \(see shmwatch why --help\)$" why --pid 1 --container x
expect 2 "^shmwatch why: --since: expected a duration of at least 1 s .* got 'yesterday'" why --since yesterday
expect 2 "^shmwatch why: --since: expected a duration .* got '0' " why --since 0
expect 2 "^shmwatch why: --pid: '0' is not a process id" why --pid 0
expect 2 "^shmwatch why: --container needs a name" why --container ''
expect 2 "^shmwatch why: --dir needs a directory" why --dir ''
expect 2 "^shmwatch why: unexpected argument 'now'" why now
expect 2 "^shmwatch why: unknown option '--all'" why --all
expect 1 "^shmwatch why: cannot read the recording /nonexistent: No such file or directory$" why --dir /nonexistent
mkdir -p "$SHMTEST_TMP/empty-store"
expect 1 "^shmwatch why: $SHMTEST_TMP/empty-store: nothing recorded" why --dir "$SHMTEST_TMP/empty-store"
mkdir -p "$SHMTEST_TMP/bad"$'\033'"[31m"
expect 1 "^shmwatch why: .*bad\\\\e\[31m: nothing recorded" why --dir "$SHMTEST_TMP/bad"$'\033'"[31m"
expect 2 "shmwatch reap: .*--timeout" reap --timeout never

# --mount takes the root of a tmpfs mount only: a path that is not there,
# another file system (else every file its processes hold would be listed
# as segments, and clean --all-unheld would plan to remove ordinary files),
# a ramfs or a directory inside a tmpfs is a usage error that says what it is.
mkdir -p "$SHMTEST_TMP/ramfs" /dev/shm/sub
mount -t ramfs ramfs "$SHMTEST_TMP/ramfs" || fail "cannot mount a ramfs"
on_exit "umount -l '$SHMTEST_TMP/ramfs' 2>/dev/null"
expect 2 "^shmwatch: --mount /nonexistent: No such file or directory$" --once --mount /nonexistent
expect 2 "^shmwatch: --mount /proc: not a tmpfs \(it is on proc\)$" --json --mount /proc
expect 2 "^shmwatch: --mount $SHMTEST_TMP/ramfs: not a tmpfs \(it is on ramfs\)$" --prometheus --mount "$SHMTEST_TMP/ramfs"
expect 2 "^shmwatch: --mount /dev/shm/sub: a directory inside a tmpfs, not the root of its mount$" --once --mount /dev/shm/sub
expect 2 "^shmwatch: --mount /proc/self/status: not a directory$" --once --mount /proc/self/status
expect 2 "^shmwatch: --mount /nonexistent: No such file or directory$" --once --mount /dev/shm --mount /nonexistent
expect 2 "^shmwatch clean: --mount /nonexistent: No such file or directory$" clean --mount /nonexistent --yes
expect 2 "^shmwatch clean: --mount /proc: not a tmpfs \(it is on proc\)$" clean --mount /proc --all-unheld --dry-run
expect 2 "^shmwatch: --mount /nonexistent \(in the root of pid 1\): No such file or directory$" --json --pid 1 --mount /nonexistent
expect 2 "^shmwatch clean: --mount /proc \(in the root of pid 1\): not a tmpfs \(it is on proc\)$" clean --pid 1 --mount /proc --dry-run
cfg=$SHMTEST_TMP/mounts.yaml
printf 'mounts: [/proc]\n' >"$cfg"
expect 2 "^shmwatch: $cfg:1:10: mounts: /proc: not a tmpfs \(it is on proc\)$" --json --config "$cfg"
# In a block list the item's own line and column; --mount replaces the list.
printf 'theme: default\nmounts:\n  - /dev/shm\n  - /proc\n' >"$cfg"
expect 2 "^shmwatch: $cfg:4:5: mounts: /proc: not a tmpfs \(it is on proc\)$" --json --config "$cfg"
expect 2 "^shmwatch: --mount /nonexistent: No such file or directory$" --json --config "$cfg" --mount /nonexistent
# The file's name in that place is escaped like every other error's.
hostile=$SHMTEST_TMP/$'m\e[1m.yaml'
cp "$cfg" "$hostile"
err=$("$SHMWATCH" --json --config "$hostile" 2>&1 >/dev/null) && fail "a bad mount in $hostile was taken"
[[ $err == *$'\e'* ]] && fail "the config's name reached the terminal raw: $err"
[[ $err == *'m\e[1m.yaml:4:5: mounts: /proc: not a tmpfs'* ]] || fail "escaped place expected: $err"
ok "a hostile config name is escaped in a mount's place"
# The root of a tmpfs is taken (/dev/shm, and one mounted anywhere).
"$SHMWATCH" --json --mount "$SHMTEST_TMP" >"$SHMTEST_TMP/own.json" || fail "--mount of a tmpfs exited $?"
json_check "$SHMTEST_TMP/own.json" "[m['path'] for m in j['mounts']] == [env['SHMTEST_TMP']]" \
    "--mount of a tmpfs's root is watched"
# The node view matches --mount against every namespace's mounts: only a
# tmpfs is shown, and a path that is one in no namespace is said.
"$SHMWATCH" --all --json --mount /proc >"$SHMTEST_TMP/all.json" 2>"$SHMTEST_TMP/err" ||
    fail "--all --mount /proc exited $?"
json_check "$SHMTEST_TMP/all.json" "j['mounts'] == [] and any(w == '--mount /proc: no tmpfs is mounted there in any mount namespace read' for w in j['warnings'])" \
    "--all --mount /proc: no mount shown, and said"
# One mount named twice (a bind of it elsewhere) is found under each name.
mkdir -p "$SHMTEST_TMP/shmbind"
mount --bind /dev/shm "$SHMTEST_TMP/shmbind" || fail "cannot bind /dev/shm"
on_exit "umount -l '$SHMTEST_TMP/shmbind' 2>/dev/null"
"$SHMWATCH" --all --json --mount /dev/shm --mount "$SHMTEST_TMP/shmbind" >"$SHMTEST_TMP/all.json" ||
    fail "--all --mount twice exited $?"
json_check "$SHMTEST_TMP/all.json" "len(j['mounts']) == 1 and not [w for w in j['warnings'] if w.startswith('--mount ')]" \
    "--all: a mount named under two paths is shown once, and neither path is said to be no tmpfs"
umount "$SHMTEST_TMP/shmbind"
rm -rf /dev/shm/sub

# expect_line STATUS LINE ARGS...: as expect, and stderr is exactly LINE.
expect_line() {
    local want=$1 line=$2
    shift 2
    expect "$want" "" "$@"
    assert_eq "$(cat "$SHMTEST_TMP/err")" "$line" "shmwatch $*: the exact message"
}
# The user's text in an error is escaped: a newline or an escape sequence in
# an argument or a file name neither splits the line nor reaches the terminal.
expect_line 2 "shmwatch: --count: '5\\n\\e[31m' is not a whole number >= 0" --count $'5\n\e[31m'
expect_line 2 "shmwatch clean: unexpected argument 'x\\ny' (see shmwatch clean --help)" clean $'x\ny'
# A whole number takes no sign but a minus, as a duration or a size takes
# none: "+5" is refused on the command line and in the configuration file.
expect_line 2 "shmwatch: --count: '+5' is not a whole number >= 0" --json --interval 1 --count +5
expect_line 2 "shmwatch plan: --workers needs a whole number from 0 to 2^40, not '+2'" \
    plan --batch-size 8 --sample-shape 3x8x8 --workers +2
# A number above the bound is refused with the bound said.
expect_line 2 "shmwatch plan: --prefetch-factor needs a whole number from 1 to 2^40, not '99999999999999'" \
    plan --batch-size 8 --sample-shape 3x8x8 --prefetch-factor 99999999999999
expect_line 2 "shmwatch: --pid: '+1' is not a process id" --json --pid +1
printf 'warn_pct: +50\n' >"$SHMTEST_TMP/plus.yaml"
expect_line 2 "shmwatch: $SHMTEST_TMP/plus.yaml:1:11: warn_pct: expected a whole number, got '+50'" \
    --json --config "$SHMTEST_TMP/plus.yaml"
expect_line 2 "shmwatch plan: unknown option '--a\\e[2Jb' (see shmwatch plan --help)" plan $'--a\e[2Jb'
expect_line 2 "shmwatch: /nonexistent\\n\\e[31m.yaml: No such file or directory" --config $'/nonexistent\n\e[31m.yaml' --once
# A long option may be cut to any prefix that names one; a prefix of
# several is ambiguous, and the message names them.
expect_line 2 "shmwatch: option '--o' is ambiguous: --once, --orphan-min-age (see --help)" --o
expect_line 2 "shmwatch clean: option '--m=1' is ambiguous: --min-age, --mount (see shmwatch clean --help)" clean --m=1
# The subcommands' usage errors, word for word.
expect_line 2 "shmwatch clean: unknown option '--bogus' (see shmwatch clean --help)" clean --bogus
expect_line 2 "shmwatch clean: --min-age needs a value (see shmwatch clean --help)" clean --min-age
expect_line 2 "shmwatch clean: --mount needs an absolute path, got 'rel' (see shmwatch clean --help)" clean --mount rel
expect_line 2 "shmwatch clean: unexpected argument 'extra' (see shmwatch clean --help)" clean extra
expect_line 2 "shmwatch clean: --min-age: expected a duration such as 10m, 1h or 90, got 'soon' (see shmwatch clean --help)" clean --min-age soon
# An empty value is shown quoted, as every value refused is.
expect_line 2 "shmwatch clean: --min-age: expected a duration such as 10m, 1h or 90, got '' (see shmwatch clean --help)" clean --min-age ''
expect_line 2 "shmwatch reap: unknown option '--bogus' (see shmwatch reap --help)" reap --bogus
expect_line 2 "shmwatch reap: --timeout needs a value (see shmwatch reap --help)" reap --timeout
expect_line 2 "shmwatch reap: unexpected argument 'extra' (see shmwatch reap --help)" reap extra
expect_line 2 "shmwatch reap: --timeout: expected seconds (at most 3600), got '4000' (see shmwatch reap --help)" reap -t 4000
expect_line 2 "shmwatch record: unknown option '--bogus' (see shmwatch record --help)" record --bogus
expect_line 2 "shmwatch record: --dir needs a value (see shmwatch record --help)" record --dir
expect_line 2 "shmwatch record: unexpected argument 'extra' (see shmwatch record --help)" record extra
expect_line 2 "shmwatch record: --interval: '0' is not a duration from 0.05 s to 1 day (see shmwatch record --help)" record --interval 0
expect_line 2 "shmwatch record: --max-size: expected a size such as 256m or 2g, got 'lots'" record --max-size lots
expect_line 2 "shmwatch record: --max-size: '1e9' is not a plain decimal size (such as 256m or 2g)" record --max-size 1e9
expect_line 2 "shmwatch record: --max-age: 5 is out of range (1m to 3650d)" record --max-age 5
expect_line 2 "shmwatch record: --all and --pid exclude each other (see shmwatch record --help)" record --all --pid 1
# An empty --dir or --config names no file: said so, not read as the path "".
expect_line 2 "shmwatch record: --dir needs a directory, not an empty string (see shmwatch record --help)" record --dir ''
expect_line 2 "shmwatch replay: --dir needs a directory, not an empty string (see shmwatch replay --help)" replay --dir ''
expect_line 2 "shmwatch: --config needs a file name, not an empty string" --once --config ''
expect_line 2 "shmwatch clean: --config needs a file name, not an empty string (see shmwatch clean --help)" clean --config ''
expect_line 2 "shmwatch record: --config needs a file name, not an empty string (see shmwatch record --help)" record --config ''
expect_line 2 "shmwatch replay: --config needs a file name, not an empty string (see shmwatch replay --help)" replay --config ''
expect_line 2 "shmwatch: --theme needs a theme name or a file, not an empty string" --theme ''
expect_line 2 "shmwatch replay: --theme needs a theme name or a file, not an empty string (see shmwatch replay --help)" replay --theme ''
expect_line 2 "shmwatch: --log needs a file name, not an empty string" --once --log ''
expect_line 2 "shmwatch clean: --log needs a file name, not an empty string (see shmwatch clean --help)" clean --log ''
expect_line 2 "shmwatch reap: --log needs a file name, not an empty string (see shmwatch reap --help)" reap --log ''
# A store that is no directory, or one others may write into: refused, status 1.
expect_line 1 "shmwatch record: /dev/null: refused: not a directory" record --dir /dev/null
# The store's message names the directory escaped once (\e, not \\e), for
# shmwatch record and for the dashboard's --record, which says it before the
# terminal is touched.
: >"$SHMTEST_TMP/store"$'\e[1m'
expect_line 1 "shmwatch record: $SHMTEST_TMP/store\\e[1m: refused: not a directory" \
    record --dir "$SHMTEST_TMP/store"$'\e[1m'
rc=0
timeout 10 /usr/bin/python3 -c '
import os, pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.run(sys.argv[1:], stdin=slave, stdout=slave, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
sys.exit(p.returncode)' "$SHMWATCH" --record "$SHMTEST_TMP/store"$'\e[1m' 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 1 "--record into a file that is no directory exits 1"
assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch: --record: $SHMTEST_TMP/store\\e[1m: refused: not a directory" \
    "--record names the store escaped once"
mkdir -m 0777 "$SHMTEST_TMP/open-store"
chmod 0777 "$SHMTEST_TMP/open-store"
expect_line 1 "shmwatch record: $SHMTEST_TMP/open-store: refused: writable by group or others (chmod go-w)" \
    record --dir "$SHMTEST_TMP/open-store"
expect_line 2 "shmwatch plan: unknown option '--bogus' (see shmwatch plan --help)" plan --bogus
expect_line 2 "shmwatch plan: --batch-size needs a value (see shmwatch plan --help)" plan --batch-size
expect_line 2 "shmwatch plan: unexpected argument 'extra' (see shmwatch plan --help)" plan extra
expect_line 2 "shmwatch plan: --sample-shape is required (see shmwatch plan --help)" plan --batch-size 1 --workers 1
expect_line 2 "shmwatch plan: unknown dtype 'float7' (known: float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64, bool)" \
    plan --batch-size 8 --sample-shape 3x8x8 --workers 2 --dtype float7
expect_line 2 "shmwatch plan: unknown dtype 'long64' (known: float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64, bool)" \
    plan --batch-size 8 --sample-shape 3x8x8,1:long64 --workers 2
expect_line 2 "shmwatch plan: unknown dtype 'float7' (known: float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64, bool)" \
    plan --batch-size 8 --sample-shape 3x8x8:uint8 --workers 2 --dtype float7
expect_line 2 "shmwatch replay: unknown option '--all' (see shmwatch replay --help)" replay --all
expect_line 2 "shmwatch replay: --dir needs a value (see shmwatch replay --help)" replay --dir
expect_line 2 "shmwatch replay: unexpected argument 'extra' (see shmwatch replay --help)" replay extra
expect_line 2 "shmwatch replay: --at: '3 a.m.\\e[2J' is not a time: RFC 3339 (2026-12-05T03:12:07Z), HH:MM[:SS] today or -DUR ago (-10m) (see shmwatch replay --help)" \
    replay --at $'3 a.m.\e[2J'
expect_line 2 "shmwatch replay: --at: '25:00' is not a time: RFC 3339 (2026-12-05T03:12:07Z), HH:MM[:SS] today or -DUR ago (-10m) (see shmwatch replay --help)" \
    replay --at 25:00
expect_line 1 "shmwatch replay: cannot read the recording /nonexistent\\n\\e[31m: No such file or directory" \
    replay --dir $'/nonexistent\n\e[31m'
mkdir -p "$SHMTEST_TMP/empty-recording"
expect_line 1 "shmwatch replay: $SHMTEST_TMP/empty-recording: nothing recorded (no YYYYMMDDTHHMMSSZ.jsonl files)" \
    replay --dir "$SHMTEST_TMP/empty-recording"
# A first snapshot at 03:12:07.5 is named in whole seconds ("the recording
# has 03:12:07 to ..."): --at 03:12:07 opens it (and so reaches the terminal
# check), the second before is refused.
frac=$SHMTEST_TMP/frac-recording
mkdir -m 0700 "$frac"
printf '%s\n' '{"recording":1,"time":"2026-12-05T03:12:07.500Z","hostname":"h","interval_s":1,"watch":"host","version":"test"}' \
    '{"schema":1,"time":"2026-12-05T03:12:07.500Z","mounts":[],"reason":"interval"}' >"$frac/20261205T031207Z.jsonl"
chmod 0600 "$frac/20261205T031207Z.jsonl"
expect 2 "^shmwatch replay: the dashboard needs a terminal" replay --dir "$frac" --at 2026-12-05T03:12:07Z
expect 1 "^shmwatch replay: $frac: no snapshot at .*: the recording has " replay --dir "$frac" --at 2026-12-05T03:12:06Z

# A full /dev/shm: every output still works and says so.
dd if=/dev/zero of=/dev/shm/filler bs=1M count=80 2>/dev/null || true
avail=$(stat -f -c '%a' /dev/shm)
assert_eq "$avail" 0 "the tmpfs is full"
"$SHMWATCH" --json >"$SHMTEST_TMP/full.json" || fail "--json on a full mount exited $?"
json_check "$SHMTEST_TMP/full.json" "j['mounts'][0]['avail_bytes'] == 0 and j['mounts'][0]['used_pct'] == 100 and j['budget']['verdict'] == 'critical' and j['budget']['shm_effective_bytes'] == 0" \
    "a full mount: 100 %, critical, nothing more can be written"
"$SHMWATCH" --once >/dev/null || fail "--once on a full mount exited $?"
"$SHMWATCH" --prometheus >/dev/null || fail "--prometheus on a full mount exited $?"
ok "text and Prometheus snapshots of a full mount"

# Output that cannot be written is an error, said in one line; a reader that
# closes the pipe early is not.
for mode in --json --once --prometheus; do
    rc=0
    "$SHMWATCH" "$mode" >/dev/full 2>"$SHMTEST_TMP/err" || rc=$?
    assert_eq "$rc" 1 "shmwatch $mode >/dev/full exits 1"
    grep -qx "shmwatch: cannot write the output: No space left on device" "$SHMTEST_TMP/err" ||
        fail "shmwatch $mode >/dev/full: $(cat "$SHMTEST_TMP/err")"
done
{
    rc=0
    "$SHMWATCH" --json --count 0 --interval 0.05 2>"$SHMTEST_TMP/err" || rc=$?
    echo "$rc" >"$SHMTEST_TMP/rc"
} | head -c 1 >/dev/null
assert_eq "$(cat "$SHMTEST_TMP/rc")" 0 "a stream whose reader goes away ends with status 0"
assert_eq "$(cat "$SHMTEST_TMP/err")" "" "and says nothing"
ok "unwritable output exits 1 with one line; a closed pipe ends a stream quietly"

# plan, clean and reap too, and --help and --version: status 1 and one line.
rm -f /dev/shm/filler
while read -r sub args; do
    [ "$sub" = - ] && sub=
    rc=0
    # shellcheck disable=SC2086 # args is a list of words
    "$SHMWATCH" $sub $args </dev/null >/dev/full 2>"$SHMTEST_TMP/err" || rc=$?
    assert_eq "$rc" 1 "shmwatch $sub $args >/dev/full exits 1"
    assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch${sub:+ $sub}: cannot write the output: No space left on device" \
        "shmwatch $sub $args >/dev/full says so in one line"
done <<'EOF'
plan --batch-size 8 --sample-shape 3x8x8 --workers 2
plan --batch-size 8 --sample-shape 3x8x8 --workers 2 --json
plan --help
clean --dry-run
clean
clean --yes
clean --help
reap --dry-run
reap --yes
reap --help
record --help
- --help
- --version
EOF

# Told --yes, clean and reap still carry out every action when their output
# cannot be written: it is only the report, and the action log has each one.
# They do not stop halfway.
log=$SHMTEST_TMP/actions.log
dead=$(dead_pid)
for i in 0 1 2; do head -c 8192 /dev/urandom >"/dev/shm/torch_${dead}_$i"; done
rc=0
"$SHMWATCH" clean --yes --log "$log" </dev/null >/dev/full 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 1 "clean --yes >/dev/full exits 1"
assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch clean: cannot write the output: No space left on device; every action was still carried out and logged in $log" \
    "clean --yes >/dev/full says the removals were done, and where they are logged"
left=$(ls /dev/shm | grep "^torch_${dead}_") && fail "clean --yes >/dev/full left: $left"
assert_eq "$(grep -c "	unlink	/dev/shm/torch_${dead}_[012]	.*	removed	" "$log")" 3 \
    "every orphan was removed and logged"

SCENE_PREFIX=setsid scene_start --workers 1 --per-worker 1 --stuck-orphan
stuck=$(manifest_pids stuck)
[ -n "$stuck" ] || fail "the scene has no stuck worker"
kill -KILL "$SCENE_PID"
wait_reparented "$stuck" "$SCENE_PID" || fail "the stuck worker was not re-parented"
rc=0
"$SHMWATCH" reap --yes --timeout 0.2 --log "$log" </dev/null >/dev/full 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 1 "reap --yes >/dev/full exits 1"
assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch reap: cannot write the output: No space left on device; every action was still carried out and logged in $log" \
    "reap --yes >/dev/full says the signals were sent, and where they are logged"
grep -q "	signal TERM,KILL	pid $stuck (shmscene)	owner=0	bytes=0	killed	" "$log" ||
    fail "the kill is not in the action log"
ok "reap --yes >/dev/full ends the orphaned worker and logs it"
scene_stop

# An action log that stops taking writes (a full disk): clean --yes still
# removes every orphan and says that not every action is logged.
full=$SHMTEST_TMP/full/actions.log
full_file "$full"
for i in 0 1; do head -c 8192 /dev/urandom >"/dev/shm/torch_${dead}_$i"; done
rc=0
"$SHMWATCH" clean --yes --log "$full" </dev/null >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 0 "clean --yes --log FULL exits 0: everything asked was done"
left=$(ls /dev/shm | grep "^torch_${dead}_") && fail "clean --yes --log FULL left: $left"
assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch clean: note: cannot write the action log $full: No space left on device; not every action is logged" \
    "clean --yes --log FULL says the actions are not logged"

# A log that is not a regular file (a device: /dev/full) is refused when
# opened, like any other unwritable log: the removals still happen.
for i in 0 1; do head -c 8192 /dev/urandom >"/dev/shm/torch_${dead}_$i"; done
rc=0
"$SHMWATCH" clean --yes --log /dev/full </dev/null >"$SHMTEST_TMP/out" 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 0 "clean --yes --log /dev/full exits 0: everything asked was done"
left=$(ls /dev/shm | grep "^torch_${dead}_") && fail "clean --yes --log /dev/full left: $left"
assert_eq "$(cat "$SHMTEST_TMP/err")" "shmwatch clean: note: cannot write the action log /dev/full: refused: not a regular file; actions are not logged" \
    "clean --yes --log /dev/full says the log is refused"

# A reader that has closed the pipe before anything is written: clean --yes
# still removes every orphan and, as for a stream, ends quietly with 0.
for i in 0 1 2; do head -c 8192 /dev/urandom >"/dev/shm/torch_${dead}_$i"; done
rc=0
/usr/bin/python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=w))' \
    "$SHMWATCH" clean --yes --log "$log" 2>"$SHMTEST_TMP/err" || rc=$?
assert_eq "$rc" 0 "clean --yes into a closed pipe exits 0"
assert_eq "$(cat "$SHMTEST_TMP/err")" "" "and says nothing"
left=$(ls /dev/shm | grep "^torch_${dead}_") && fail "clean --yes into a closed pipe left: $left"
ok "clean --yes into a closed pipe removes every orphan"
