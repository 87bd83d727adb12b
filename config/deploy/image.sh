#!/bin/sh
# Builds the shmwatch image from the static binary, offline: no registry, no
# base image. The image holds the binary, a /tmp, and an /etc/passwd and
# /etc/group with root and nobody; nothing else.
#
#   meson setup build-static -Dstatic=true && ninja -C build-static
#   config/deploy/image.sh build-static/src/shmwatch            # docker import
#   config/deploy/image.sh build-static/src/shmwatch my/shmwatch:0.1.0
#   config/deploy/image.sh --tar rootfs.tar build-static/src/shmwatch
#                                   # the root as a tarball, for any importer:
#                                   # podman import, or docker import then
#                                   # docker save | ctr -n k8s.io images import -
#
# The tag defaults to shmwatch:VERSION (VERSION from the binary). Push it to
# your registry for the DaemonSet (kubernetes-daemonset.yaml) or use it as is
# with docker-compose.yaml. $DOCKER names the docker client (default: docker).
# Exit status: 0 built, 1 failure, 2 usage.
set -eu

usage() {
    echo "usage: image.sh [--tar FILE] STATIC_BINARY [TAG]" >&2
    exit 2
}

tar_out=
if [ "${1:-}" = --tar ]; then
    [ $# -ge 2 ] || usage
    tar_out=$2
    shift 2
fi
[ $# -ge 1 ] && [ $# -le 2 ] || usage
bin=$1
[ -f "$bin" ] && [ -x "$bin" ] || { echo "image.sh: $bin is not an executable file" >&2; exit 1; }
# A dynamic binary would not start in an image without its libraries.
if command -v ldd >/dev/null 2>&1 && ldd "$bin" >/dev/null 2>&1; then
    echo "image.sh: $bin is dynamically linked; build it with meson -Dstatic=true" >&2
    exit 1
fi
version=$("$bin" --version | awk '{ print $2; exit }')
[ -n "$version" ] || { echo "image.sh: $bin --version says nothing" >&2; exit 1; }
tag=${2:-shmwatch:$version}

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/bin" "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"
cp "$bin" "$root/usr/bin/shmwatch"
chmod 0755 "$root/usr/bin/shmwatch"
printf 'root:x:0:0:root:/:/usr/bin/shmwatch\nnobody:x:65534:65534:nobody:/:/usr/bin/shmwatch\n' \
    >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

# Owned by root, modes kept, no time stamps of the build machine's users.
mk_tar() {
    tar -C "$root" --numeric-owner --owner=0 --group=0 -c .
}

if [ -n "$tar_out" ]; then
    mk_tar >"$tar_out"
    echo "$tar_out"
    exit 0
fi
docker=${DOCKER:-docker}
command -v "$docker" >/dev/null 2>&1 || { echo "image.sh: no docker client $docker (use --tar FILE)" >&2; exit 1; }
mk_tar | "$docker" import \
    --change 'ENTRYPOINT ["/usr/bin/shmwatch"]' \
    --change 'CMD ["--help"]' \
    --change 'ENV PATH=/usr/bin' \
    --change "LABEL org.opencontainers.image.title=shmwatch org.opencontainers.image.version=$version" \
    - "$tag" >/dev/null
echo "$tag"
