#!/usr/bin/env bash
# Builds what the upstream node conformance suite needs, from Go modules (no
# registry, no download of release binaries), all of k8s.io/kubernetes
# v1.34.4 in this directory's tools module (go.mod: the control plane's pins,
# every staging module replaced by its v0.34.4):
#   e2e.test                 go test -c k8s.io/kubernetes/test/e2e
#   kube-scheduler           the specs do not set nodeName
#   kube-controller-manager  default ServiceAccounts, kube-root-ca.crt
#   agnhost                  test/images/agnhost (the agnhost:2.56 image's binary),
#                            with porter's localhost.crt and .key in agnhost-porter/
#   nonewprivs               test/images/nonewprivs (the nonewprivs:1.3 image's nnp)
#   ginkgo                   the ginkgo CLI (github.com/onsi/ginkgo/v2, the version
#                            e2e.test is built with): runs e2e.test in parallel
#                            processes and merges their reports
# The binaries are cached outside the repository, keyed by version, in
# $KS_CONFORMANCE_CACHE (default /var/cache/kubelet-split/conformance); a
# cache that already holds them is reused, and then no Go is needed. Go's own
# caches (module and build) are shared with deploy/control-plane/build.sh, and
# so is the fallback toolchain it fetches when the machine has no Go 1.24 or
# later. Everything runs under nice. Measured on this 2-core machine while the
# CI ran: 6.5 minutes with an empty Go build cache (e2e.test 316 s,
# kube-controller-manager 69 s, the rest 10 s), 2.2 minutes when Go's build
# cache already held the packages, a few milliseconds when everything is
# built; the binaries are the same bit for bit (-trimpath). Prints the binary
# directory as its last line. Arguments name a subset of the binaries to build
# (default: all).
#   bash deploy/conformance/build.sh [e2e.test kube-scheduler ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBERNETES_VERSION=v1.34.4
AGNHOST_VERSION=2.56
cache=${KS_CONFORMANCE_CACHE:-/var/cache/kubelet-split/conformance}
bin="$cache/kubernetes-$KUBERNETES_VERSION"
all=(e2e.test kube-scheduler kube-controller-manager agnhost nonewprivs ginkgo)
[ $# -gt 0 ] && wanted=("$@") || wanted=("${all[@]}")
for w in "${wanted[@]}"; do
  case " ${all[*]} " in *" $w "*) ;; *) echo "conformance/build.sh: unknown binary $w (one of: ${all[*]})" >&2; exit 2 ;; esac
done

# Everything already built: nothing to do, no Go needed.
built() { [ -x "$bin/$1" ] && { [ "$1" != agnhost ] || [ -f "$bin/agnhost-porter/localhost.key" ]; }; }
missing=()
for w in "${wanted[@]}"; do built "$w" || missing+=("$w"); done
if [ ${#missing[@]} = 0 ]; then
  echo "conformance/build.sh: ${wanted[*]} already built in $bin; nothing to do" >&2
  echo "$bin"
  exit 0
fi

# A Go toolchain of 1.24 or later: the machine's, or else the one
# deploy/control-plane/build.sh fetches into its cache (Go's own toolchain
# module, golang.org/toolchain, from the Go module proxy).
GO_FALLBACK=1.24.13
go_ok() { command -v "$1" >/dev/null 2>&1 && printf '%s\n' go1.24 "$("$1" env GOVERSION | sed 's/[-+ ].*//')" | sort -C -V; }
GO=go
if ! go_ok go; then
  GO="${KS_CONTROL_PLANE_CACHE:-/var/cache/kubelet-split/control-plane}/go$GO_FALLBACK/bin/go"
  if ! go_ok "$GO"; then
    # The control plane's build fetches the toolchain (and builds etcd and
    # kube-apiserver, which the suite needs as well).
    nice -n 19 bash "$here/../control-plane/build.sh" >/dev/null
    go_ok "$GO" || { echo "conformance/build.sh: no Go 1.24 or later, and none at $GO" >&2; exit 1; }
  fi
fi
mkdir -p "$bin"
# -buildvcs=false: the main packages are not in this module, and a checkout owned by another
# user must not make go ask git about it.
export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local
version_ldflags="-X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"

build() { # $1 = binary name, $2 = package; the rest: extra go build flags
  local name=$1 pkg=$2; shift 2
  [ -x "$bin/$name" ] && return 0
  echo "conformance/build.sh: building $name ($pkg $KUBERNETES_VERSION)" >&2
  local started=$SECONDS
  if [ "$name" = e2e.test ]; then
    (cd "$here" && nice -n 19 "$GO" test -c -vet=off -trimpath -o "$bin/$name.tmp" "$@" "$pkg")
  else
    (cd "$here" && nice -n 19 "$GO" build -trimpath -o "$bin/$name.tmp" "$@" "$pkg")
  fi
  mv "$bin/$name.tmp" "$bin/$name"
  echo "conformance/build.sh: $name built in $((SECONDS - started)) s" >&2
}

for w in "${missing[@]}"; do
  case "$w" in
    e2e.test) build e2e.test k8s.io/kubernetes/test/e2e -ldflags "-s -w $version_ldflags" ;;
    kube-scheduler|kube-controller-manager) build "$w" "k8s.io/kubernetes/cmd/$w" -ldflags "-s -w $version_ldflags" ;;
    agnhost)
      build agnhost k8s.io/kubernetes/test/images/agnhost -ldflags "-s -w -X main.Version=$AGNHOST_VERSION"
      # The image holds porter's certificate and key beside the binary (porter serves TLS with them).
      src=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/agnhost/porter
      mkdir -p "$bin/agnhost-porter.tmp"
      cp "$src/localhost.crt" "$src/localhost.key" "$bin/agnhost-porter.tmp/"
      rm -rf "$bin/agnhost-porter"; mv "$bin/agnhost-porter.tmp" "$bin/agnhost-porter"
      ;;
    nonewprivs) build nonewprivs k8s.io/kubernetes/test/images/nonewprivs -ldflags "-s -w" ;;
    ginkgo) build ginkgo github.com/onsi/ginkgo/v2/ginkgo -ldflags "-s -w" ;;
  esac
done
echo "$bin"
