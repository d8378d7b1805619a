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
# and, for the whole [Conformance] suite on a cluster (not built by default:
# name them, or pass --cluster for all of the above and these):
#   kube-proxy               cmd/kube-proxy, Services' ClusterIPs and NodePorts
#   sample-apiserver         k8s.io/sample-apiserver v0.34.4 (the staging module of
#                            the same release; the sample-apiserver:1.29.2 image's
#                            /apiserver, which the aggregator spec runs)
#   coredns                  github.com/coredns/coredns v1.13.2, COREDNS_VERSION (the cluster's DNS,
#                            the coredns image's /coredns). NOT in this directory's module: it
#                            needs newer grpc, otel, prometheus, x/net and etcd client
#                            than k8s.io/kubernetes v1.34.4 pins, which would change
#                            every other binary here; it is built as its own main module
#                            (`go install github.com/coredns/coredns@VERSION`, into coredns-VERSION/,
#                            CoreDNS's own go.mod and go.sum, checked by the Go checksum
#                            database), with the ldflags of CoreDNS's Makefile.
#   nautilus-html            not a binary: test/images/nautilus/html of k8s.io/kubernetes
#                            (nautilus.jpg and data.json, the nautilus:1.7 image's files)
#                            copied into the cache, so that images.sh needs no Go for them
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
# (default: the node suite's, i.e. all but the cluster ones); --cluster adds
# the cluster ones to the default. The cluster ones, measured the same way
# with the node suite's packages already in Go's build cache: kube-proxy 12 s,
# sample-apiserver 5 s, coredns 181 s (with the download of its own modules,
# none of them shared with the rest).
#   bash deploy/conformance/build.sh [--cluster] [e2e.test kube-scheduler coredns ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBERNETES_VERSION=v1.34.4
AGNHOST_VERSION=2.56
# The newest CoreDNS of 1.12 and 1.13 the Go module proxy serves (v1.13.3 and
# later 1.13 are not there; 1.14 is a newer minor than asked for).
COREDNS_VERSION=v1.13.2
cache=${KS_CONFORMANCE_CACHE:-/var/cache/kubelet-split/conformance}
bin="$cache/kubernetes-$KUBERNETES_VERSION"
node=(e2e.test kube-scheduler kube-controller-manager agnhost nonewprivs ginkgo)
cluster=(kube-proxy sample-apiserver coredns nautilus-html)
all=("${node[@]}" "${cluster[@]}")
wanted=()
with_cluster=0
for a in "$@"; do
  if [ "$a" = --cluster ]; then with_cluster=1; else wanted+=("$a"); fi
done
if [ ${#wanted[@]} = 0 ]; then
  wanted=("${node[@]}")
  [ "$with_cluster" = 0 ] || wanted+=("${cluster[@]}")
elif [ "$with_cluster" = 1 ]; then
  wanted+=("${cluster[@]}")
fi
for w in "${wanted[@]}"; do
  case " ${all[*]} " in *" $w "*) ;; *) echo "conformance/build.sh: unknown binary $w (one of: ${all[*]}, or --cluster)" >&2; exit 2 ;; esac
done

# Everything already built: nothing to do, no Go needed.
# CoreDNS is kept under its version, so that another COREDNS_VERSION is built anew.
built() {
  [ "$1" = coredns ] && { [ -x "$bin/coredns-$COREDNS_VERSION/coredns" ]; return; }
  [ "$1" = nautilus-html ] && { [ -f "$bin/nautilus-html/data.json" ]; return; }
  [ -x "$bin/$1" ] && { [ "$1" != agnhost ] || [ -f "$bin/agnhost-porter/localhost.key" ]; }
}
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
    kube-proxy) build kube-proxy k8s.io/kubernetes/cmd/kube-proxy -ldflags "-s -w $version_ldflags" ;;
    # The staging module's main package; version.gitVersion as the other components'.
    sample-apiserver) build sample-apiserver k8s.io/sample-apiserver -ldflags "-s -w $version_ldflags" ;;
    coredns)
      # Its own main module (see above): go install PACKAGE@VERSION, outside this
      # directory's module, into a scratch GOBIN.
      echo "conformance/build.sh: building coredns (github.com/coredns/coredns $COREDNS_VERSION, its own module)" >&2
      started=$SECONDS
      gobin="$bin/coredns-$COREDNS_VERSION.tmp"
      rm -rf "$gobin"; mkdir -p "$gobin"
      commit=$(cd / && GOFLAGS='' "$GO" mod download -json "github.com/coredns/coredns@$COREDNS_VERSION" | sed -n 's/.*"Hash": "\([0-9a-f]*\)".*/\1/p' | cut -c1-7)
      (cd / && GOFLAGS=-buildvcs=false GOBIN="$gobin" nice -n 19 "$GO" install -trimpath \
        -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$commit" "github.com/coredns/coredns@$COREDNS_VERSION")
      rm -rf "$bin/coredns-$COREDNS_VERSION"; mv "$gobin" "$bin/coredns-$COREDNS_VERSION"
      echo "conformance/build.sh: coredns built in $((SECONDS - started)) s" >&2
      ;;
    nautilus-html)
      src=$(cd "$here" && "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images/nautilus/html
      rm -rf "$bin/nautilus-html.tmp"; mkdir -p "$bin/nautilus-html.tmp"
      cp "$src/nautilus.jpg" "$src/data.json" "$bin/nautilus-html.tmp/"
      chmod 644 "$bin/nautilus-html.tmp"/*
      rm -rf "$bin/nautilus-html"; mv "$bin/nautilus-html.tmp" "$bin/nautilus-html"
      ;;
  esac
done
echo "$bin"
