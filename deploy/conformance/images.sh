#!/usr/bin/env bash
# Builds, without any container registry, the images the upstream node
# conformance specs use, under their exact upstream names (test/utils/image/
# manifest.go of k8s.io/kubernetes v1.34.4), and imports them into a
# containerd's k8s.io namespace. The specs pull IfNotPresent, so imported
# images are used as they are:
#   registry.k8s.io/pause:3.10.1                        pause.c of deploy/images (User 65535)
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-1    busybox-static, /bin/sh busybox's own ash
#   registry.k8s.io/e2e-test-images/agnhost:2.56        /agnhost (ENTRYPOINT, CMD pause), curl, nc (openbsd), bash, dig, host, nslookup, getent
#   registry.k8s.io/e2e-test-images/nonroot:1.4         USER 1234
#   registry.k8s.io/e2e-test-images/nonewprivs:1.3      /usr/local/bin/nnp setuid root (CMD nnp)
#   registry.k8s.io/e2e-test-images/nginx:1.14-4        busybox httpd on port 80
#   registry.k8s.io/e2e-test-images/httpd:2.4.38-4      busybox httpd on port 80
# and with --cluster, the other images the whole [Conformance] suite's specs use
# (grepped from test/e2e: the specs marked framework.ConformanceIt and the images
# they and their helpers take), for a cluster:
#   registry.k8s.io/e2e-test-images/httpd:2.4.39-4      as httpd:2.4.38-4, another version label
#                                                       (its config digest differs): StatefulSet
#                                                       rolling updates and roll backs go to it
#   registry.k8s.io/e2e-test-images/nginx:1.15-4        as nginx:1.14-4, another version label
#                                                       (no [Conformance] spec uses it: apply specs)
#   registry.k8s.io/e2e-test-images/nautilus:1.7        the agnhost image with nautilus.jpg and
#                                                       data.json in /, CMD test-webserver (port 80;
#                                                       Kubectl Update Demo reads /data.json)
#   registry.k8s.io/e2e-test-images/jessie-dnsutils:1.7 busybox, bash as /bin/sh, dig, nslookup,
#                                                       nsupdate, delv (bind9-dnsutils), host
#                                                       (bind9-host), getent (libc-bin): the DNS
#                                                       specs' prober runs dig and getent in sh
#   registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2  busybox, the sample-apiserver of
#                                                       build.sh at /apiserver (ENTRYPOINT; and
#                                                       /sample-apiserver, as the Dockerfile of
#                                                       v1.34.4 names it): the aggregator spec
#                                                       gives it only args (--etcd-servers,
#                                                       --tls-cert-file ... --audit-log-path=-)
#   registry.k8s.io/etcd:3.6.4-0                        busybox, /usr/local/bin/etcd (etcd v3.6.4 of
#                                                       deploy/control-plane/build.sh): the
#                                                       aggregator spec's sidecar runs
#                                                       /usr/local/bin/etcd --listen-client-urls ...
#                                                       (its default peer URL is localhost:2380: it
#                                                       needs the pod's /etc/hosts, which ctr run
#                                                       does not give, the kubelet does)
#   registry.k8s.io/coredns/coredns:v1.13.2             (COREDNS_VERSION of build.sh)
#                                                       /coredns of build.sh (ENTRYPOINT) with the
#                                                       file capability cap_net_bind_service, USER
#                                                       nonroot 65532, /tmp, as upstream's
#                                                       distroless image (no CA bundle): the
#                                                       cluster's DNS (the DNS specs ask it)
# Not built: kitten (no [Conformance] spec uses it: Update Demo takes nautilus
# only), perl, resource-consumer, regression-issue-74839, distroless-iptables,
# ipc-utils, volume/*, the CSI sidecars and the private or invalid registries'
# images: only specs outside [Conformance] use them; nor the /coredns that
# upstream's agnhost and jessie-dnsutils images carry (only "should support
# configurable pod resolv.conf", not [Conformance], runs it).
# Made the way deploy/images/build.sh makes the project's own images:
# docker-archive tarballs written by hand (one layer each) from Debian's
# busybox-static, so that only gcc, tar, sha256sum and ctr are needed, plus
# agnhost and nnp from deploy/conformance/build.sh (cached), and bash, curl
# and netcat-openbsd with their shared libraries from Debian packages fetched
# once with `apt-get download` into the cache and unpacked with `dpkg-deb -x`
# (never installed on this machine). --cluster needs as well setcap
# (libcap2-bin), sample-apiserver, coredns and nautilus-html of build.sh, the
# etcd of deploy/control-plane/build.sh, and the packages of jessie-dnsutils
# (bash, bind9-dnsutils, bind9-host, libc-bin and their libraries) fetched the
# same way into $KS_CONFORMANCE_CACHE/debs-dnsutils; its archives have their
# own inputs file, so that the node suite's 7 are neither rebuilt nor needed.
# What the specs need, learnt with the upstream kubelet on this machine:
# - every busybox applet is linked into /bin (Debian keeps some in /sbin; a spec
#   runs /bin/sysctl);
# - busybox's ash is built standalone (it runs its own applets, e.g. its nc, over
#   PATH) and `sh -c env` drops variables whose names are not identifiers (the
#   envFrom specs expect data-1=value-1): `sh` is a real bash, at /bin/sh in the
#   agnhost-like images; the busybox image keeps busybox's own shell at /bin/sh
#   (a spec checks its exact error text) and has bash at /usr/bin/sh, which
#   comes first in PATH.
#
# usage: deploy/conformance/images.sh [--cluster] [--address SOCK] [--out DIR] [--no-import]
#   --cluster  also the [Conformance] suite's images above (default: the node suite's 7)
#   --address, CONTAINERD_ADDRESS  containerd socket
#                                  (default /run/kubelet-split/containerd/containerd.sock)
#   --out      where the archives are written (default $KS_CONFORMANCE_CACHE/images)
#   SNAPSHOTTER                    snapshotter to unpack for (default overlayfs)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${KS_CONFORMANCE_CACHE:-/var/cache/kubelet-split/conformance}
out="$cache/images"
import=1
cluster=0
address=${CONTAINERD_ADDRESS:-/run/kubelet-split/containerd/containerd.sock}
while [ $# -gt 0 ]; do
  case "$1" in
    --address) address=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-import) import=0; shift ;;
    --cluster) cluster=1; shift ;;
    *) echo "images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
snapshotter=${SNAPSHOTTER:-overlayfs}

E2E=registry.k8s.io/e2e-test-images
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
BUSYBOX_IMAGE=$E2E/busybox:1.37.0-1
AGNHOST_IMAGE=$E2E/agnhost:2.56
NONROOT_IMAGE=$E2E/nonroot:1.4
NONEWPRIVS_IMAGE=$E2E/nonewprivs:1.3
NGINX_IMAGE=$E2E/nginx:1.14-4
HTTPD_IMAGE=$E2E/httpd:2.4.38-4
HTTPD_NEW_IMAGE=$E2E/httpd:2.4.39-4
NGINX_NEW_IMAGE=$E2E/nginx:1.15-4
NAUTILUS_IMAGE=$E2E/nautilus:1.7
JESSIE_DNSUTILS_IMAGE=$E2E/jessie-dnsutils:1.7
SAMPLE_APISERVER_IMAGE=$E2E/sample-apiserver:1.29.2
ETCD_IMAGE=registry.k8s.io/etcd:3.6.4-0
# The CoreDNS that build.sh builds.
COREDNS_VERSION=$(sed -n 's/^COREDNS_VERSION=//p' "$here/build.sh")
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:$COREDNS_VERSION
PATH_ENV='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

tools=(gcc tar sha256sum readelf dpkg-deb apt-get apt-cache)
[ "$import" = 1 ] && tools+=(ctr)
[ "$cluster" = 1 ] && tools+=(setcap)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "images.sh: $tool is missing" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "images.sh: /bin/busybox is missing (Debian package busybox-static)" >&2; exit 1; }
file_of_busybox=$(readlink -f /bin/busybox)
if ldd "$file_of_busybox" >/dev/null 2>&1; then
  echo "images.sh: /bin/busybox is dynamically linked; install busybox-static" >&2; exit 1
fi

if [ "$cluster" = 1 ]; then
  bin=$(bash "$here/build.sh" agnhost nonewprivs sample-apiserver coredns nautilus-html | tail -1)
  etcd=$(bash "$here/../control-plane/build.sh" | tail -1)/etcd
else
  bin=$(bash "$here/build.sh" agnhost nonewprivs | tail -1)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# --- Debian packages: bash, curl, netcat-openbsd and the libraries they link,
# downloaded once (the closure of their Depends, libraries only) into the cache;
# with --cluster, the same for the jessie-dnsutils image, in a directory of its
# own (the node suite's stays as it is).
# fetch_debs DIR PACKAGE...
fetch_debs() {
  local dir=$1; shift
  [ -f "$dir/complete" ] && return 0
  echo "images.sh: downloading $* and their libraries (apt-get download) into $dir" >&2
  local closure
  mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances "$@" 2>/dev/null \
    | grep -E '^[a-z0-9]' | sort -u | grep -E "^(lib.*|zlib.*|bind9-libs|$(IFS='|'; echo "$*"))\$")
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && apt-get download -q -o APT::Sandbox::User=root "${closure[@]}" >/dev/null)
  printf '%s\n' "${closure[@]}" > "$dir.tmp/complete"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
}
debs="$cache/debs"
fetch_debs "$debs" bash curl netcat-openbsd
# The agnhost image has dig, host, nslookup and getent too (upstream's alpine one has bind-tools:
# the DNS specs' querier runs the same probe in agnhost as in jessie-dnsutils).
dns_debs="$cache/debs-dnsutils"
fetch_debs "$dns_debs" bash bind9-dnsutils bind9-host libc-bin
# unpack_debs DIR ROOT: the packages of DIR unpacked into ROOT (never installed).
unpack_debs() {
  [ -d "$2" ] && return 0
  mkdir -p "$2"
  local deb
  for deb in "$1"/*.deb; do dpkg-deb -x "$deb" "$2"; done
}
node_deb_root="$work/debs"
dns_deb_root="$work/debs-dnsutils"
deb_root=$node_deb_root # where copy_path and copy_elf take files from

# copy_path ROOT PATH: copies PATH (absolute, as the packages lay it out) from
# the unpacked packages into ROOT, following a symbolic link to its target.
copy_path() {
  local root=$1 path=${2#/}
  [ -e "$root/$path" ] || [ -L "$root/$path" ] && return 0
  [ -e "$deb_root/$path" ] || [ -L "$deb_root/$path" ] || { echo "images.sh: $path is in none of the packages" >&2; return 1; }
  mkdir -p "$root/$(dirname "$path")"
  cp -a "$deb_root/$path" "$root/$path"
  if [ -L "$deb_root/$path" ]; then
    local target; target=$(readlink "$deb_root/$path")
    case "$target" in /*) ;; *) target="/$(dirname "$path")/$target" ;; esac
    copy_path "$root" "$(realpath -m -s "$target")"
  fi
}

LIB_DIRS=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /lib /usr/lib)
# copy_elf ROOT PATH: copies the program or library PATH of the packages into
# ROOT, with its program interpreter and every library it needs, recursively.
copy_elf() {
  local root=$1 path=$2
  copy_path "$root" "$path"
  local real; real=$(realpath "$deb_root/${path#/}")
  local interp; interp=$(readelf -lW "$real" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -n "$interp" ] && copy_path "$root" "$interp"
  local needed dir found
  for needed in $(readelf -dW "$real" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    found=
    for dir in "${LIB_DIRS[@]}"; do
      if [ -e "$deb_root$dir/$needed" ]; then found="$dir/$needed"; break; fi
    done
    [ -n "$found" ] || { echo "images.sh: $path needs $needed, which none of the packages has" >&2; return 1; }
    [ -e "$root$found" ] && continue
    copy_elf "$root" "$found"
  done
}

# docker_archive NAME ROOTFS CONFIG_JSON_FRAGMENT OUTPUT CREATED_BY
# shellcheck source=deploy/images/docker-archive.sh
. "$here/../images/docker-archive.sh"

# busybox_root ROOT [PASSWD GROUP]: busybox-static with every applet linked into
# /bin and at its own place, /tmp, /root, and the passwd and group files.
busybox_root() {
  local root=$1
  mkdir -p "$root/bin" "$root/tmp" "$root/etc" "$root/root" "$root/var/www" "$root/usr/local/bin"
  chmod 1777 "$root/tmp"
  cp "$file_of_busybox" "$root/bin/busybox"
  local applet
  while read -r applet; do
    [ "$applet" = bin/busybox ] && continue
    ln -sf /bin/busybox "$root/bin/$(basename "$applet")"
    if [ "$(dirname "$applet")" != bin ]; then
      mkdir -p "$root/$(dirname "$applet")"
      ln -sf /bin/busybox "$root/$applet"
    fi
  done < <(/bin/busybox --list-full)
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n%b' "${2:-}" > "$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n%b' "${3:-}" > "$root/etc/group"
  printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
}

# agnhost_like_root ROOT [PASSWD GROUP]: busybox, and bash as /bin/sh.
agnhost_like_root() {
  busybox_root "$@"
  rm -f "$1/bin/bash"; copy_elf "$1" /bin/bash
  ln -sfn bash "$1/bin/sh"
}

# nginx and httpd: busybox httpd in the foreground on port 80, serving the
# page each upstream image serves at /. VERSION, when given, becomes the label
# version: two versions of one image (the same files) differ in their config.
web_image() { # NAME DOCROOT PAGE OUTPUT [VERSION]
  local root; root="$work/$(basename "$4" .tar)"
  agnhost_like_root "$root"
  mkdir -p "$root$2"; printf '%s\n' "$3" > "$root$2/index.html"
  local labels=''
  [ -z "${5:-}" ] || labels=",\"Labels\":{\"version\":\"$5\"}"
  docker_archive "$1" "$root" \
    "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"httpd\",\"-f\",\"-v\",\"-p\",\"80\",\"-h\",\"$2\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"80/tcp\":{}}$labels}" "$4" "kubelet-split deploy/conformance/images.sh"
}
NGINX_PAGE='<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>'
HTTPD_PAGE='<html><body><h1>It works!</h1></body></html>'

# agnhost_root ROOT: the agnhost image's files, as upstream's Dockerfile lays them
# out (on alpine there): /agnhost and /agnhost-2, porter's localhost.crt and .key
# in /, /uploads, the user and group defined in the image; curl, nc
# (netcat-openbsd) and bash.
AGNHOST_CONFIG="\"Env\":[\"$PATH_ENV\"],\"Entrypoint\":[\"/agnhost\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"80/tcp\":{},\"8080/tcp\":{},\"8081/tcp\":{},\"9376/tcp\":{},\"5000/tcp\":{}}"
agnhost_root() {
  local root=$1
  agnhost_like_root "$root" 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n' \
    'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n'
  mkdir -p "$root/home/user-defined-in-image" "$root/uploads"
  chown 1000:1000 "$root/home/user-defined-in-image"
  copy_elf "$root" /usr/bin/curl
  copy_elf "$root" /bin/nc.openbsd
  ln -sfn /bin/nc.openbsd "$root/bin/nc"; ln -sfn /bin/nc.openbsd "$root/usr/bin/nc"
  cp "$bin/agnhost" "$root/agnhost"; ln -sfn agnhost "$root/agnhost-2"
  cp "$bin/agnhost-porter/localhost.crt" "$bin/agnhost-porter/localhost.key" "$root/"
  # dig, host, nslookup (bind-tools on alpine) and getent, from the packages of debs-dnsutils.
  local tool
  deb_root=$dns_deb_root
  for tool in dig host nslookup getent; do
    rm -f "$root/bin/$tool" "$root/usr/bin/$tool"
    copy_elf "$root" "/usr/bin/$tool"
  done
  deb_root=$node_deb_root
}
build_images() {
  local root
  # The pause image: one static binary.
  root="$work/pause"; mkdir -p "$root"
  gcc -static -Os -o "$root/pause" "$here/../images/pause.c"
  strip "$root/pause" 2>/dev/null || true
  docker_archive "$PAUSE_IMAGE" "$root" '{"Entrypoint":["/pause"],"User":"65535:65535"}' "$out/pause.tar" "kubelet-split deploy/conformance/images.sh"

  # busybox: its own ash at /bin/sh, bash at /usr/bin/sh (first in PATH).
  root="$work/busybox"
  busybox_root "$root"
  rm -f "$root/bin/bash"; copy_elf "$root" /bin/bash
  mkdir -p "$root/usr/bin"; ln -sfn /bin/bash "$root/usr/bin/sh"
  docker_archive "$BUSYBOX_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\"}" "$out/busybox.tar" "kubelet-split deploy/conformance/images.sh"

  # agnhost: see agnhost_root; CMD pause.
  root="$work/agnhost"
  agnhost_root "$root"
  docker_archive "$AGNHOST_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"80/tcp\":{},\"8080/tcp\":{},\"8081/tcp\":{},\"9376/tcp\":{},\"5000/tcp\":{}}}" \
    "$out/agnhost.tar" "kubelet-split deploy/conformance/images.sh"

  # nonroot: runs as user 1234 by default.
  root="$work/nonroot"
  agnhost_like_root "$root"
  docker_archive "$NONROOT_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\",\"User\":\"1234\"}" "$out/nonroot.tar" "kubelet-split deploy/conformance/images.sh"

  # nonewprivs: nnp prints its effective uid; setuid (and setgid) root, as
  # upstream's `chmod +s`.
  root="$work/nonewprivs"
  agnhost_like_root "$root"
  cp "$bin/nonewprivs" "$root/usr/local/bin/nnp"; chmod 6755 "$root/usr/local/bin/nnp"
  docker_archive "$NONEWPRIVS_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"nnp\"],\"WorkingDir\":\"/\"}" "$out/nonewprivs.tar" "kubelet-split deploy/conformance/images.sh"

  web_image "$NGINX_IMAGE" /usr/share/nginx/html "$NGINX_PAGE" "$out/nginx.tar"
  web_image "$HTTPD_IMAGE" /usr/local/apache2/htdocs "$HTTPD_PAGE" "$out/httpd.tar"
}

# The --cluster images (see the header).
build_cluster_images() {
  local root tool
  web_image "$HTTPD_NEW_IMAGE" /usr/local/apache2/htdocs "$HTTPD_PAGE" "$out/httpd-new.tar" 2.4.39-4
  web_image "$NGINX_NEW_IMAGE" /usr/share/nginx/html "$NGINX_PAGE" "$out/nginx-new.tar" 1.15-4

  # nautilus: upstream's is FROM agnhost, with the two files in / and CMD test-webserver.
  root="$work/nautilus"
  agnhost_root "$root"
  cp "$bin/nautilus-html/nautilus.jpg" "$bin/nautilus-html/data.json" "$root/"
  docker_archive "$NAUTILUS_IMAGE" "$root" "{$AGNHOST_CONFIG,\"Cmd\":[\"test-webserver\"]}" "$out/nautilus.tar" "kubelet-split deploy/conformance/images.sh"

  # jessie-dnsutils: from the packages of debs-dnsutils (bash too, so that the
  # libraries are of one set); Debian's nslookup replaces busybox's.
  deb_root=$dns_deb_root
  root="$work/jessie-dnsutils"
  agnhost_like_root "$root"
  for tool in dig nslookup nsupdate delv host getent; do
    rm -f "$root/bin/$tool" "$root/usr/bin/$tool"
    copy_elf "$root" "/usr/bin/$tool"
    ln -sfn "/usr/bin/$tool" "$root/bin/$tool"
  done
  deb_root=$node_deb_root
  docker_archive "$JESSIE_DNSUTILS_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"sh\"],\"WorkingDir\":\"/\"}" "$out/jessie-dnsutils.tar" "kubelet-split deploy/conformance/images.sh"

  # sample-apiserver: the aggregator spec's pod gives it args only.
  root="$work/sample-apiserver"
  busybox_root "$root"
  cp "$bin/sample-apiserver" "$root/apiserver"; ln -sfn apiserver "$root/sample-apiserver"
  docker_archive "$SAMPLE_APISERVER_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Entrypoint\":[\"/apiserver\"],\"WorkingDir\":\"/\"}" "$out/sample-apiserver.tar" "kubelet-split deploy/conformance/images.sh"

  # etcd: the aggregator spec's sidecar runs /usr/local/bin/etcd; its data in /default.etcd.
  root="$work/etcd"
  busybox_root "$root"
  cp "$etcd" "$root/usr/local/bin/etcd"
  docker_archive "$ETCD_IMAGE" "$root" "{\"Env\":[\"$PATH_ENV\"],\"Cmd\":[\"/usr/local/bin/etcd\"],\"WorkingDir\":\"/\",\"ExposedPorts\":{\"2379/tcp\":{},\"2380/tcp\":{}}}" "$out/etcd.tar" "kubelet-split deploy/conformance/images.sh"

  # coredns: as upstream's Dockerfile (FROM distroless static nonroot; setcap
  # cap_net_bind_service=+ep /coredns; USER nonroot): it binds port 53 as 65532.
  root="$work/coredns"
  mkdir -p "$root/etc" "$root/tmp"; chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > "$root/etc/group"
  printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
  mkdir -p "$root/home/nonroot" # owned by root in the layer (docker_archive writes owner 0)
  cp "$bin/coredns-$COREDNS_VERSION/coredns" "$root/coredns"
  setcap cap_net_bind_service=+ep "$root/coredns"
  docker_archive "$COREDNS_IMAGE" "$root" "{\"Entrypoint\":[\"/coredns\"],\"User\":\"65532:65532\",\"WorkingDir\":\"/\",\"ExposedPorts\":{\"53/tcp\":{},\"53/udp\":{}}}" "$out/coredns.tar" "kubelet-split deploy/conformance/images.sh" caps
}

# The archives are rebuilt only when what goes into them changed.
inputs() {
  sha256sum "$here/images.sh" "$here/../images/docker-archive.sh" "$here/../images/pause.c" "$file_of_busybox" \
    "$bin/agnhost" "$bin/nonewprivs" "$bin"/agnhost-porter/* "$debs"/*.deb "$dns_debs"/*.deb | sed "s#  .*/#  #"
  gcc --version | head -1
}
cluster_inputs() {
  sha256sum "$here/images.sh" "$here/../images/docker-archive.sh" "$file_of_busybox" "$bin/agnhost" "$bin"/agnhost-porter/* \
    "$bin/nautilus-html"/* "$bin/sample-apiserver" "$etcd" "$bin/coredns-$COREDNS_VERSION/coredns" \
    "$debs"/*.deb "$dns_debs"/*.deb | sed "s#  .*/#  #"
}
# up_to_date INPUTS_FILE INPUTS_FUNCTION ARCHIVE...
up_to_date() {
  local file=$1 function=$2 archive; shift 2
  for archive in "$@"; do [ -f "$out/$archive.tar" ] || return 1; done
  [ -f "$out/$file" ] && "$function" | cmp -s - "$out/$file"
}
ARCHIVES=(pause busybox agnhost nonroot nonewprivs nginx httpd)
ALL=("$PAUSE_IMAGE" "$BUSYBOX_IMAGE" "$AGNHOST_IMAGE" "$NONROOT_IMAGE" "$NONEWPRIVS_IMAGE" "$NGINX_IMAGE" "$HTTPD_IMAGE")
CLUSTER_ARCHIVES=(httpd-new nginx-new nautilus jessie-dnsutils sample-apiserver etcd coredns)
CLUSTER_ALL=("$HTTPD_NEW_IMAGE" "$NGINX_NEW_IMAGE" "$NAUTILUS_IMAGE" "$JESSIE_DNSUTILS_IMAGE" "$SAMPLE_APISERVER_IMAGE" "$ETCD_IMAGE" "$COREDNS_IMAGE")
if up_to_date inputs inputs "${ARCHIVES[@]}"; then
  echo "images.sh: the archives in $out are up to date; not rebuilt" >&2
else
  rm -f "$out/inputs"
  unpack_debs "$debs" "$node_deb_root"
  unpack_debs "$dns_debs" "$dns_deb_root"
  build_images
  inputs > "$out/inputs"
fi
if [ "$cluster" = 1 ]; then
  if up_to_date inputs-cluster cluster_inputs "${CLUSTER_ARCHIVES[@]}"; then
    echo "images.sh: the --cluster archives in $out are up to date; not rebuilt" >&2
  else
    rm -f "$out/inputs-cluster"
    unpack_debs "$debs" "$node_deb_root"
    unpack_debs "$dns_debs" "$dns_deb_root"
    build_cluster_images
    cluster_inputs > "$out/inputs-cluster"
  fi
  ARCHIVES+=("${CLUSTER_ARCHIVES[@]}")
  ALL+=("${CLUSTER_ALL[@]}")
fi

LABEL=kubelet-split.conformance/config
if [ "$import" = 1 ]; then
  i=0
  for archive in "${ARCHIVES[@]}"; do
    image=${ALL[$i]}; i=$((i + 1))
    # The archive's image config, which the import labels the image with: the
    # same label in the containerd means this very image is already there.
    config=$(tar -xOf "$out/$archive.tar" ./manifest.json | sed 's/.*"Config":"\([0-9a-f]*\)\.json".*/\1/')
    if ctr --address "$address" -n k8s.io images ls "name==$image" | grep -qF "$LABEL=sha256:$config"; then
      echo "images.sh: $image already imported" >&2
      continue
    fi
    ctr --address "$address" -n k8s.io images import --snapshotter "$snapshotter" "$out/$archive.tar" >/dev/null
    ctr --address "$address" -n k8s.io images label "$image" "$LABEL=sha256:$config" >/dev/null
    echo "images.sh: $image imported" >&2
  done
  # The sandbox image is pinned (ImageStatus.pinned), so image garbage collection leaves it.
  ctr --address "$address" -n k8s.io images label "$PAUSE_IMAGE" io.cri-containerd.pinned=pinned >/dev/null
  have=$(ctr --address "$address" -n k8s.io images ls -q)
  for image in "${ALL[@]}"; do
    grep -qxF "$image" <<<"$have" || { echo "images.sh: $image is not in $address after the import" >&2; exit 1; }
    echo "$image"
  done
else
  printf '%s\n' "${ALL[@]}"
fi
