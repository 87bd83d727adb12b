#!/usr/bin/env bash
# libproc2 is linked from its archive (meson.build, -Dproc2_archive): the
# program does not load libproc2.so, nor libsystemd and the libraries that
# one brings, at each start; and meminfo, the part of libproc2 shmwatch
# uses, still answers (MemTotal in the JSON's budget). ncursesw, tinfo and
# libyaml come from their archives too (-Dlib_archives): a start loads no
# shared library but glibc's, and the dashboard still finds its terminal's
# description (the tui-* tests drive it). Nor libm: the program itself
# calls none of its functions (a sanitizer's runtime may bring it).
. "$(dirname "$0")/lib.sh"
need ldd readelf python3
libs=$(ldd "$SHMWATCH") || fail "ldd $SHMWATCH failed"
for lib in libproc2.so libsystemd.so libgcrypt.so libncursesw.so libtinfo.so libyaml; do
    if grep -q "$lib" <<<"$libs"; then fail "$SHMWATCH loads $lib: $(grep "$lib" <<<"$libs")"; fi
done
ok "shmwatch loads none of libproc2, libsystemd, ncursesw, tinfo, libyaml ($(grep -c '=>' <<<"$libs") shared libraries)"
dynamic=$(readelf -d "$SHMWATCH") || fail "readelf -d $SHMWATCH failed"
needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$dynamic")
[ -n "$needed" ] || fail "readelf -d $SHMWATCH lists no NEEDED library at all"
if grep -q '^libm\.so' <<<"$needed"; then
    fail "$SHMWATCH needs libm itself (nm -D --undefined-only names what it calls)"
fi
ok "shmwatch itself needs no libm (needs: $(tr '\n' ' ' <<<"$needed"))"
_lib_tmp
# A tmpfs of its own to watch, never the host's /dev/shm.
on_tmpfs "$SHMTEST_TMP/shm" "$SHMWATCH" --json --mount "$SHMTEST_TMP/shm" >"$SHMTEST_TMP/snap.json" ||
    fail "--json failed"
total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
python3 - "$SHMTEST_TMP/snap.json" "$total_kb" <<'PY' || fail "meminfo through libproc2's archive is wrong"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["budget"]
want = int(sys.argv[2]) * 1024
if b["limit_source"] == "memtotal" and b["limit_bytes"] != want:
    sys.exit(f"budget limit {b['limit_bytes']} is not MemTotal {want}")
if not b["limit_bytes"] or b["limit_bytes"] <= 0:
    sys.exit("no memory limit at all")
PY
ok "meminfo answers through the archive (limit $(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["budget"]; print(b["limit_source"], b["limit_bytes"])' "$SHMTEST_TMP/snap.json"))"
