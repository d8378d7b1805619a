#!/usr/bin/env bash
# Builds the two images kubelet-split needs, without any registry, and
# imports them into containerd's k8s.io namespace:
#   localhost/kubelet-split/pause:3.10   the sandbox image (containerd's sandbox_image)
#   localhost/kubelet-split/busybox:1.35 a test image from Debian's busybox-static
#                                        (sh, sleep, httpd, nc, wget, ...)
# Images are docker-archive tarballs written by hand (one layer each), so the
# only tools needed are gcc (static), busybox-static, tar, sha256sum and ctr.
#
# usage: deploy/images/build.sh [--out DIR] [--no-import]
#   CONTAINERD_ADDRESS  containerd socket (default /run/kubelet-split/containerd/containerd.sock)
#   SNAPSHOTTER         snapshotter to unpack for (default overlayfs)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="${TMPDIR:-/tmp}/kubelet-split-images"
import=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --no-import) import=0; shift ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
address=${CONTAINERD_ADDRESS:-/run/kubelet-split/containerd/containerd.sock}
snapshotter=${SNAPSHOTTER:-overlayfs}

PAUSE_IMAGE=localhost/kubelet-split/pause:3.10
BUSYBOX_IMAGE=localhost/kubelet-split/busybox:1.35

for tool in gcc tar sha256sum ctr; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing (run deploy/install.sh)" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "build.sh: /bin/busybox is missing (Debian package busybox-static)" >&2; exit 1; }
file_of_busybox=$(readlink -f /bin/busybox)
if ldd "$file_of_busybox" >/dev/null 2>&1; then
  echo "build.sh: /bin/busybox is dynamically linked; install busybox-static" >&2; exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# docker_archive NAME ROOTFS CONFIG_JSON_FRAGMENT OUTPUT CREATED_BY
# shellcheck source=deploy/images/docker-archive.sh
. "$here/docker-archive.sh"

# The pause image: one static binary.
pause_root="$work/pause-root"
mkdir -p "$pause_root"
gcc -static -Os -o "$pause_root/pause" "$here/pause.c"
strip "$pause_root/pause" 2>/dev/null || true
docker_archive "$PAUSE_IMAGE" "$pause_root" '{"Entrypoint":["/pause"],"User":"65535:65535"}' "$out/pause.tar" "kubelet-split deploy/images/build.sh"

# The test image: busybox-static with every applet linked, a /tmp, and the
# passwd and group files that httpd and friends look up.
bb_root="$work/busybox-root"
mkdir -p "$bb_root/bin" "$bb_root/tmp" "$bb_root/etc" "$bb_root/var/www" "$bb_root/root"
chmod 1777 "$bb_root/tmp"
cp "$file_of_busybox" "$bb_root/bin/busybox"
while read -r applet; do
  [ "$applet" = "bin/busybox" ] && continue
  mkdir -p "$bb_root/$(dirname "$applet")"
  ln -sf /bin/busybox "$bb_root/$applet"
done < <(/bin/busybox --list-full)
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$bb_root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$bb_root/etc/group"
printf 'kubelet-split test image\n' > "$bb_root/var/www/index.html"
docker_archive "$BUSYBOX_IMAGE" "$bb_root" \
  '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"],"WorkingDir":"/"}' "$out/busybox.tar" "kubelet-split deploy/images/build.sh"

if [ "$import" = 1 ]; then
  for archive in "$out/pause.tar" "$out/busybox.tar"; do
    ctr --address "$address" -n k8s.io images import --snapshotter "$snapshotter" "$archive"
  done
  # Mark the sandbox image pinned (ImageStatus.pinned), so image garbage collection leaves it.
  ctr --address "$address" -n k8s.io images label "$PAUSE_IMAGE" io.cri-containerd.pinned=pinned >/dev/null
  ctr --address "$address" -n k8s.io images ls -q | grep -E '^localhost/kubelet-split/'
fi
