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

# Everything already built: nothing to do, no Go needed.
all_built() { local c; for c in etcd kube-apiserver "$@"; do [ -x "$bin/$c" ] || return 1; done; }
if all_built "$@"; then
  echo "$bin"
  exit 0
fi

# A Go toolchain of 1.24 or later: the machine's, or else Go's own toolchain
# module (golang.org/toolchain, what GOTOOLCHAIN downloads) fetched from the
# Go module proxy into the cache.
GO_FALLBACK=1.24.13
go_ok() { command -v "$1" >/dev/null 2>&1 && printf '%s\n' go1.24 "$("$1" env GOVERSION | sed 's/[-+ ].*//')" | sort -C -V; }
GO=go
if ! go_ok go; then
  GO="$cache/go$GO_FALLBACK/bin/go"
  if ! go_ok "$GO"; then
    case "$(uname -m)" in x86_64) goarch=amd64 ;; aarch64) goarch=arm64 ;; *) echo "control-plane/build.sh: no Go toolchain for $(uname -m)" >&2; exit 1 ;; esac
    proxy=$( (command -v go >/dev/null 2>&1 && go env GOPROXY) || echo https://proxy.golang.org)
    proxy=${proxy%%[,|]*}
    [ "$proxy" = direct ] || [ "$proxy" = off ] && proxy=https://proxy.golang.org
    echo "control-plane/build.sh: no Go 1.24 or later here ($(command -v go >/dev/null 2>&1 && go env GOVERSION || echo 'no go')); fetching go$GO_FALLBACK from $proxy" >&2
    tmp=$(mktemp -d)
    curl -fsSL --retry 3 -o "$tmp/go.zip" "$proxy/golang.org/toolchain/@v/v0.0.1-go$GO_FALLBACK.linux-$goarch.zip"
    (cd "$tmp" && unzip -q go.zip)
    rm -rf "$cache/go$GO_FALLBACK"
    mkdir -p "$cache"
    mv "$tmp/golang.org/toolchain@v0.0.1-go$GO_FALLBACK.linux-$goarch" "$cache/go$GO_FALLBACK"
    rm -rf "$tmp"
  fi
fi
mkdir -p "$bin"
# -buildvcs=false: the main packages are not in this module, and a checkout owned by another
# user must not make go ask git about it.
export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local

build_kube() { # $1 = command name under k8s.io/kubernetes/cmd
  [ -x "$bin/$1" ] && return 0
  echo "control-plane/build.sh: building $1 $KUBERNETES_VERSION" >&2
  local started=$SECONDS
  (cd "$here" && "$GO" build -trimpath -o "$bin/$1.tmp" \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION" \
    "k8s.io/kubernetes/cmd/$1")
  mv "$bin/$1.tmp" "$bin/$1"
  echo "control-plane/build.sh: $1 built in $((SECONDS - started)) s" >&2
}

build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  echo "control-plane/build.sh: building etcd $ETCD_VERSION" >&2
  local started=$SECONDS
  (cd "$here/etcd" && "$GO" build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$bin/etcd.tmp" "$bin/etcd"
  echo "control-plane/build.sh: etcd built in $((SECONDS - started)) s" >&2
}

build_etcd
build_kube kube-apiserver
for extra in "$@"; do build_kube "$extra"; done
echo "$bin"
