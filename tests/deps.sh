#!/usr/bin/env bash
# Installs what shmwatch needs to build and to run every test, on Debian 12,
# as root. Packages already present are left alone, so this is quick to rerun.
set -euo pipefail

packages=(
  gcc pkg-config meson ninja-build          # build
  ccache                                    # tests/run-all.sh: the builds reuse earlier runs' objects
  libncurses-dev libproc2-dev libyaml-dev   # the program's libraries
  libcmocka-dev                             # unit tests
  util-linux procps psmisc lsof tmux ncurses-bin   # integration tests: unshare, setpriv, tmux
  python3 python3-torch                     # the real PyTorch DataLoader tests
  debootstrap                               # the PyTorch 2.x root (tests/stack/rootfs.sh)
  docker.io                                 # real containers (tests/stack/docker_lib.sh)
  podman containerd                         # the node view names their containers
                                            # (node_podman.sh, node_containerd.sh: runc, ctr)
  prometheus                                # promtool checks the metrics
  prometheus-node-exporter iproute2         # the fleet path: textfile served, scraped (node_fleet.sh)
  valgrind                                  # instruction counts in the benchmark
  qemu-system-x86 busybox-static cpio       # the cgroup v2 guest (tests/guest); its kernel
                                            # package is fetched by the test, not installed
  bindfs fuse3                              # a FUSE mount whose daemon stalls (fuse_stall.sh)
  zsh                                       # the zsh completion parses
  jq                                        # the guide's jq example runs as shown (docs_node.sh)
  dpkg-dev debhelper fakeroot lintian git   # the Debian package (tests/integration/package.sh)
  build-essential                           # dpkg-checkbuilddeps and dpkg-buildpackage require the
                                            # Build-Essential set besides debian/control's list
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "tests/deps.sh: missing packages: ${missing[*]}; run this as root (or sudo) to install them" >&2
  exit 1
fi
echo "tests/deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
