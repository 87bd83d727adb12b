#!/usr/bin/env bash
# Hostile entries: a symlink named like a torch segment pointing at a file
# outside the mount, directories and FIFOs with torch names (some named after
# a dead creator, so that they look exactly like orphans), and regular files
# whose names hold a newline, a tab, escape sequences and invalid UTF-8.
# Links are never followed, nothing but regular files is ever removed, every
# refusal is reported (exit 3), and names are printed escaped. Last, --mount
# by a symbolic link to the mount: the mount is named by its own path, and its
# orphans are removed there.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
test_ns 64m -- "$@"
_lib_tmp

scene_start --workers 1 --per-worker 1 --modes fd --evil
dead=$(dead_pid)
outside=$SHMTEST_TMP/outside
echo precious >"$outside"
sum0=$(md5sum <"$outside")
passwd0=$(md5sum </etc/passwd)
ln -s "$outside" "/dev/shm/torch_${dead}_1"
mkdir "/dev/shm/torch_${dead}_2"
mkfifo "/dev/shm/torch_${dead}_3"
# A dead creator's names inside an application's own directory: unheld, never
# orphans (an old file, so that only the directory keeps it from being one).
mkdir -p /dev/shm/myapp/cache
head -c 4096 /dev/zero >"/dev/shm/myapp/torch_${dead}_5"
head -c 4096 /dev/zero >"/dev/shm/myapp/cache/__KMP_REGISTERED_LIB_${dead}"
touch -d '2 hours ago' "/dev/shm/myapp/torch_${dead}_5" "/dev/shm/myapp/cache/__KMP_REGISTERED_LIB_${dead}"
log=$SHMTEST_TMP/actions.log

# Plain clean: the look-alikes of a dead creator are listed and refused.
rc=0
out=$(timeout 60 "$SHMWATCH" clean --yes --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 3 "clean exits 3: the look-alikes were refused"
grep -q "^refused .*torch_${dead}_1  a symbolic link (never followed or removed)$" <<<"$out" ||
    fail "symlink refusal"
grep -q "^refused .*torch_${dead}_2  a directory (never removed)$" <<<"$out" || fail "directory refusal"
grep -q "^refused .*torch_${dead}_3  a FIFO (never removed)$" <<<"$out" || fail "FIFO refusal"
[ -L "/dev/shm/torch_${dead}_1" ] && [ -d "/dev/shm/torch_${dead}_2" ] &&
    [ -p "/dev/shm/torch_${dead}_3" ] || fail "a look-alike was removed"
ok "symlink, directory and FIFO named like orphans are reported and kept"
[ -f "/dev/shm/myapp/torch_${dead}_5" ] && [ -f "/dev/shm/myapp/cache/__KMP_REGISTERED_LIB_${dead}" ] ||
    fail "plain clean removed a file inside a directory"
if grep -q 'myapp/' <<<"$out"; then fail "plain clean planned a file inside a directory: $out"; fi
ok "files inside a directory, named after a dead creator, are not orphans"

# Every unheld entry, at any age: the regular ones go, the others stay.
rc=0
out=$(timeout 60 "$SHMWATCH" clean --yes --all-unheld --min-age 0 --log "$log" 2>&1) || rc=$?
echo "$out"
assert_eq "$rc" 3 "clean --all-unheld exits 3: special files refused"
for name in torch_dir_1 torch_fifo_2 "torch_${dead}_1" "torch_${dead}_2" "torch_${dead}_3"; do
    [ -e "/dev/shm/$name" ] || [ -L "/dev/shm/$name" ] || fail "$name was removed"
    grep -q "^refused .*/dev/shm/$name  " <<<"$out" || fail "$name: no refusal reported"
done
# torch_1_2_3 names pid 1, which lives here: a live creator's, kept unplanned.
[ -L /dev/shm/torch_1_2_3 ] || fail "torch_1_2_3 was removed"
grep -q "torch_1_2_3" <<<"$out" && fail "torch_1_2_3, of a live creator, was planned: $out"
grep -q "^Kept: 1 unheld segment of a live creator: a live job's, a batch in flight\.$" <<<"$out" ||
    fail "the live creator's entry is not said kept: $out"
ok "no symlink, directory or FIFO is removed, each refusal reported; a live creator's kept"
assert_eq "$(md5sum <"$outside")" "$sum0" "the file outside the mount is untouched"
assert_eq "$(md5sum </etc/passwd)" "$passwd0" "/etc/passwd (the scene's link target) is untouched"
[ -e "$outside" ] || fail "the link target is gone"

# The hostile regular files are removed and printed escaped, never raw.
[ ! -e "$(printf '/dev/shm/torch_9_1\nfake')" ] || fail "the newline name was not removed"
[ ! -e "$(printf '/dev/shm/\e[31mRED\e[0m')" ] || fail "the escape-sequence name was not removed"
[ ! -e "$(printf '/dev/shm/torch_9_3_\xff\xfe')" ] || fail "the invalid UTF-8 name was not removed"
[ ! -e "/dev/shm/torch_dir_1/inner" ] || fail "the nested regular file was not removed"
[ ! -e "/dev/shm/myapp/torch_${dead}_5" ] || fail "--all-unheld kept an unheld file inside a directory"
grep -qF 'removed      /dev/shm/torch_9_1\nfake' <<<"$out" || fail "newline not escaped"
grep -qF 'removed      /dev/shm/torch_9_2\tfake' <<<"$out" || fail "tab not escaped"
grep -qF 'removed      /dev/shm/\e[31mRED\e[0m' <<<"$out" || fail "escape sequence not escaped"
grep -qF 'removed      /dev/shm/torch_9_3_\xff\xfe' <<<"$out" || fail "invalid UTF-8 not escaped"
if printf '%s' "$out" | grep -q $'\e'; then fail "a raw escape byte reached the output"; fi
assert_eq "$(awk -F'\t' 'NF != 7' "$log" | wc -l)" 0 "every log line has exactly 7 fields"
ok "hostile names are removed and printed escaped"

# An orphan with a second (hard) link: its torch name goes, the file stays
# under the other name, and the result says so rather than "freed".
head -c 65536 /dev/zero >"/dev/shm/torch_${dead}_4"
ln "/dev/shm/torch_${dead}_4" /dev/shm/kept-by-another-name
rc=0
out=$(timeout 60 "$SHMWATCH" clean --yes --log "$log" 2>&1) || rc=$?
assert_eq "$rc" 3 "clean exits 3: the look-alikes are still refused"
grep -q "^removed .*torch_${dead}_4  0 B freed  the name was removed but another name keeps the file$" \
    <<<"$out" || fail "no caveat for the hard-linked orphan: $out"
[ ! -e "/dev/shm/torch_${dead}_4" ] && [ -e /dev/shm/kept-by-another-name ] ||
    fail "the torch name should be gone and the other name kept"
ok "a hard-linked orphan loses its name and the result says another name keeps it"

# --mount by a link to the mount (/run/shm -> /dev/shm on some systems): the
# scan and the actions name the mount itself, where the actions, which follow
# no link, reach it.
mkdir -p "$SHMTEST_TMP/links"
ln -s /dev/shm "$SHMTEST_TMP/links/shm"
head -c 4096 /dev/zero >"/dev/shm/torch_${dead}_77"
touch -d '2 hours ago' "/dev/shm/torch_${dead}_77"
"$SHMWATCH" --mount "$SHMTEST_TMP/links/shm" --json >"$SHMTEST_TMP/linked.json" ||
    fail "--mount by a link exited $?"
json_check "$SHMTEST_TMP/linked.json" "[m['path'] for m in j['mounts']] == ['/dev/shm'] and any(s['name'] == 'torch_${dead}_77' for s in j['segments'])" \
    "--mount by a link lists the mount under its own path"
out=$(timeout 60 "$SHMWATCH" clean --mount "$SHMTEST_TMP/links/shm" --yes --min-age 0 2>&1) || true
grep -q "^removed .*/dev/shm/torch_${dead}_77  4.0 KiB freed" <<<"$out" ||
    fail "clean --mount by a link did not remove the orphan: $out"
[ ! -e "/dev/shm/torch_${dead}_77" ] || fail "the orphan is still there"
[ -L "$SHMTEST_TMP/links/shm" ] || fail "the link itself was touched"
ok "clean --mount by a link to the mount removes its orphans there"
