#!/usr/bin/env bash
# Release and package: `meson dist` makes a tarball whose tree builds the
# Debian package with dpkg-buildpackage (which builds it with meson and runs
# the unit tests: the tarball builds and passes them); lintian reports no
# error; the .deb installs with apt into a fresh minimal Debian 12 root
# (tests/stack/bookworm.sh; apt pulls the runtime libraries) and runs there,
# with its man page, themes, examples and completions in Debian's places.
# Built once per run: in the plain build only (a package does not depend on
# how the test build was instrumented). Built without optimization (noopt):
# what is tested here is the package (its files, its dependencies, its
# install and a run), and -O0 compiles in a third of the CPU time of -O2;
# the optimized code is the plain build's, with its warnings as errors.
. "$(dirname "$0")/lib.sh"
if [ "${BUILD_SANITIZE:-none}" != none ]; then
    echo "SKIP: package.sh: packaging is tested once, in the plain build (this one has $BUILD_SANITIZE sanitizers)" >&2
    exit 77
fi
need_root
need meson git dpkg-buildpackage dpkg-checkbuilddeps dh lintian debootstrap unshare chroot tar
_lib_tmp

version=$("$SHMWATCH" --version | awk '{ print $2; exit }')
[ -n "$version" ] || fail "no version from $SHMWATCH"

# --- meson dist --------------------------------------------------------------------
git -C "$SRCDIR" rev-parse --git-dir >/dev/null 2>&1 || _lib_missing "a git checkout (meson dist packs the committed tree)"
meson dist -C "$BUILDDIR" --no-tests --allow-dirty --formats gztar >"$SHMTEST_TMP/dist.log" 2>&1 ||
    fail "meson dist failed: $(tail -n 5 "$SHMTEST_TMP/dist.log")"
tarball=$BUILDDIR/meson-dist/shmwatch-$version.tar.gz
[ -f "$tarball" ] || fail "meson dist made no $tarball"
# Unpacked in the same place at every run: the compiler's arguments (its
# -ffile-prefix-map names the tree) and its directory are then the same, so
# ccache, which meson uses where it is installed, finds the objects of the
# last run's package build.
dist=$BUILDDIR/package-dist
rm -rf "$dist"
on_exit "rm -rf '$dist'"
mkdir -p "$dist"
tar -C "$dist" -xzf "$tarball" || fail "cannot unpack $tarball"
tree=$dist/shmwatch-$version
for f in meson.build debian/control debian/rules completions/_shmwatch tests/fixtures/passwd/debian/etc/passwd; do
    [ -e "$tree/$f" ] || fail "the dist tarball lacks $f"
done
ok "meson dist made $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"

# --- dpkg-buildpackage from the tarball's tree ---------------------------------------------------
assert_eq "$(dpkg-parsechangelog -l "$tree/debian/changelog" -S Version)" "$version" \
    "debian/changelog's version is meson's"
(cd "$tree" && dpkg-checkbuilddeps) || fail "build dependencies of debian/control are missing (tests/deps.sh installs them)"
# apt-get build-dep ./ resolves debian/control (a dry run: all is installed).
if compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
    (cd "$tree" && apt-get build-dep -s ./) >"$SHMTEST_TMP/builddep.log" 2>&1 ||
        fail "apt-get build-dep ./ failed: $(tail -n 3 "$SHMTEST_TMP/builddep.log")"
    grep -q "^0 upgraded, 0 newly installed" "$SHMTEST_TMP/builddep.log" ||
        fail "apt-get build-dep ./ would install more: $(grep '^Inst' "$SHMTEST_TMP/builddep.log" | head -n 5)"
    ok "apt-get build-dep ./ is satisfied"
else
    echo "# no apt lists here: apt-get build-dep ./ not tried (dpkg-checkbuilddeps was)" >&2
fi
t0=$SECONDS
rc=0
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=2 noopt" dpkg-buildpackage -us -uc -b) >"$SHMTEST_TMP/deb.log" 2>&1 || rc=$?
# The exit status too: a build that dies before it writes (seen once in CI,
# not reproduced) leaves an empty log.
[ "$rc" -eq 0 ] || fail "dpkg-buildpackage failed (status $rc, $(wc -l <"$SHMTEST_TMP/deb.log") lines of output): $(tail -n 20 "$SHMTEST_TMP/deb.log")"
deb=$dist/shmwatch_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || fail "dpkg-buildpackage made no $deb"
grep -qE "^Ok: +[1-9]" "$SHMTEST_TMP/deb.log" || fail "the package build ran no unit test"
grep -qE "^Fail: +0" "$SHMTEST_TMP/deb.log" || fail "unit tests failed in the package build"
ok "dpkg-buildpackage built $(basename "$deb") from the tarball and passed $(awk '/^Ok:/ { print $2 }' "$SHMTEST_TMP/deb.log") unit tests in $((SECONDS - t0)) s"

lintian --fail-on error --display-info "$dist/shmwatch_${version}_"*.changes \
    >"$SHMTEST_TMP/lintian.log" 2>&1 || {
    cat "$SHMTEST_TMP/lintian.log" >&2
    fail "lintian reports errors"
}
! grep -q '^E:' "$SHMTEST_TMP/lintian.log" || fail "lintian: $(grep '^E:' "$SHMTEST_TMP/lintian.log")"
ok "lintian reports no error ($(grep -c '^[WIP]:' "$SHMTEST_TMP/lintian.log") warnings and notes)"

# --- install into a bare Debian 12 --------------------------------------------------
root=$(bash "$SRCDIR/tests/stack/bookworm.sh") || _lib_missing "a Debian 12 minbase root (debootstrap and the network)"
! chroot "$root" dpkg-query -W libproc2-0 >/dev/null 2>&1 || fail "the bare root already has libproc2-0"
cp "$deb" "$SHMTEST_TMP/shmwatch.deb"
cat >"$SHMTEST_TMP/in-root.sh" <<'IN'
set -eu
cd /tmp
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
apt-get update -q >/tmp/apt.log 2>&1 || { tail -n 5 /tmp/apt.log; exit 1; }
apt-get install -y -q --no-install-recommends ./shmwatch.deb >>/tmp/apt.log 2>&1 || { tail -n 10 /tmp/apt.log; exit 1; }
dpkg-query -W -f '${Status}\n' shmwatch libproc2-0 libyaml-0-2
shmwatch --version
head -c 4096 /dev/zero >/dev/shm/torch_1_1
shmwatch --once
shmwatch --json >/tmp/snap.json
for f in /usr/share/man/man1/shmwatch.1.gz /usr/share/shmwatch/themes/default.yaml \
    /usr/share/doc/shmwatch/examples/shmwatch.yaml /usr/share/doc/shmwatch/copyright \
    /usr/share/bash-completion/completions/shmwatch /usr/share/zsh/vendor-completions/_shmwatch; do
    [ -f "$f" ] && echo "file $f"
done
bash -c '. /usr/share/bash-completion/completions/shmwatch && complete -p shmwatch'
shmwatch --theme light --once >/dev/null && echo "theme light found"
IN
# An overlay keeps the cached root bare; a private mount namespace takes the
# overlay, /proc and a 16 MiB /dev/shm away with it, whatever happens.
mkdir -p "$SHMTEST_TMP/ov/upper" "$SHMTEST_TMP/ov/work" "$SHMTEST_TMP/ov/merged"
unshare -m --propagation private bash -c '
    set -e
    o=$1/ov
    mount -t overlay overlay -o "lowerdir=$2,upperdir=$o/upper,workdir=$o/work" "$o/merged"
    mount -t proc proc "$o/merged/proc"
    mount -t tmpfs -o size=16m tmpfs "$o/merged/dev/shm"
    cp /etc/resolv.conf "$o/merged/etc/resolv.conf" 2>/dev/null || true
    cp "$1/shmwatch.deb" "$1/in-root.sh" "$o/merged/tmp/"
    chroot "$o/merged" /bin/sh /tmp/in-root.sh
    cp "$o/merged/tmp/snap.json" "$1/root-snap.json"
' sh "$SHMTEST_TMP" "$root" >"$SHMTEST_TMP/root.out" 2>&1 || {
    cat "$SHMTEST_TMP/root.out" >&2
    fail "installing or running the .deb in the Debian 12 root failed"
}
out=$SHMTEST_TMP/root.out
assert_eq "$(grep -c '^install ok installed$' "$out")" 3 "apt installed shmwatch with libproc2-0 and libyaml-0-2"
grep -q "^shmwatch $version" "$out" || fail "shmwatch --version in the root: $(cat "$out")"
grep -q "torch_1_1" "$out" || fail "--once in the root does not list torch_1_1"
json_check "$SHMTEST_TMP/root-snap.json" \
    "[(s['name'], s['size_bytes']) for s in j['segments']] == [('torch_1_1', 4096)] and j['mounts'][0]['size_bytes'] == 16 << 20" \
    "--json in the root sees its 16 MiB /dev/shm and torch_1_1"
assert_eq "$(grep -c '^file ' "$out")" 6 "man page, themes, example, copyright and both completions installed"
grep -q "^complete -F _shmwatch shmwatch" "$out" || fail "the bash completion does not load"
grep -q "^theme light found" "$out" || fail "the installed themes are not found"
ok "the .deb installs on a bare Debian 12 and runs there"
