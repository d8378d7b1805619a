#!/usr/bin/env bash
# Builds the test control plane from Go modules (no registry, no download of
# release binaries): kube-apiserver and kubectl of k8s.io/kubernetes v1.34.4
# and etcd 3.6.4. The binaries are cached outside the repository, keyed by
# version, in $KS_CONTROL_PLANE_CACHE (default /var/cache/kubelet-split/
# control-plane); a cache that already holds them is reused. Prints the
# binary directory as its last line. Extra arguments name more commands of
# k8s.io/kubernetes/cmd to build into the same directory (kubectl).
#   bash deploy/control-plane/build.sh [kubectl ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBERNETES_VERSION=v1.34.4
ETCD_VERSION=v3.6.4
cache=${KS_CONTROL_PLANE_CACHE:-/var/cache/kubelet-split/control-plane}
bin="$cache/kubernetes-$KUBERNETES_VERSION-etcd-$ETCD_VERSION"

if ! command -v go >/dev/null 2>&1; then
  echo "control-plane/build.sh: a Go toolchain (1.24 or later) is needed to build kube-apiserver and etcd" >&2
  exit 1
fi
go_version=$(go env GOVERSION)
if ! printf '%s\n' go1.24 "${go_version%%[-+ ]*}" | sort -C -V; then
  echo "control-plane/build.sh: Go 1.24 or later is needed (k8s.io/kubernetes $KUBERNETES_VERSION's go.mod); this is $go_version" >&2
  exit 1
fi
mkdir -p "$bin"
# -buildvcs=false: the main packages are not in this module, and a checkout owned by another
# user must not make go ask git about it.
export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local

build_kube() { # $1 = command name under k8s.io/kubernetes/cmd
  [ -x "$bin/$1" ] && return 0
  echo "control-plane/build.sh: building $1 $KUBERNETES_VERSION" >&2
  local started=$SECONDS
  (cd "$here" && go build -trimpath -o "$bin/$1.tmp" \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION" \
    "k8s.io/kubernetes/cmd/$1")
  mv "$bin/$1.tmp" "$bin/$1"
  echo "control-plane/build.sh: $1 built in $((SECONDS - started)) s" >&2
}

build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  echo "control-plane/build.sh: building etcd $ETCD_VERSION" >&2
  local started=$SECONDS
  (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$bin/etcd.tmp" "$bin/etcd"
  echo "control-plane/build.sh: etcd built in $((SECONDS - started)) s" >&2
}

build_etcd
build_kube kube-apiserver
for extra in "$@"; do build_kube "$extra"; done
echo "$bin"
