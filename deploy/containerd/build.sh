#!/usr/bin/env bash
# Builds containerd v2.4.2 (containerd, containerd-shim-runc-v2, ctr) and
# runc v1.5.3 from the Go module proxy (no release download), for
# `KS_RUNTIME=containerd2` (deploy/runtime.sh). Cached outside the
# repository, keyed by version, in $KS_CONTAINERD_CACHE (default
# /var/cache/kubelet-split/containerd): a cache that already holds the
# binaries is reused with no Go needed. runc needs cgo and libseccomp's
# headers (Debian's libseccomp-dev, which deploy/install.sh installs); it is
# built with upstream's tags but libpathrs (a Rust library Debian 12 does not
# package), so it uses its pure-Go path resolution, as a `make runc
# RUNC_BUILDTAGS=-libpathrs` does.
# Prints the binary directory as its last line; exits 1 (and says why) when it
# cannot build, so that the caller can keep Debian's containerd 1.6.
#   bash deploy/containerd/build.sh            build unless cached
#   bash deploy/containerd/build.sh --cached   print the directory if built, else exit 1 (no Go)
set -euo pipefail
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
cache=${KS_CONTAINERD_CACHE:-/var/cache/kubelet-split/containerd}
bin="$cache/containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION"
all=(containerd containerd-shim-runc-v2 ctr runc)

built() { local c; for c in "${all[@]}"; do [ -x "$bin/$c" ] || return 1; done; }
if built; then echo "$bin"; exit 0; fi
[ "${1:-}" = --cached ] && exit 1

go_ok() { command -v "$1" >/dev/null 2>&1 && printf '%s\n' go1.26.6 "$("$1" env GOVERSION | sed 's/[-+ ].*//')" | sort -C -V; }
GO=
for g in go "${KS_CONTROL_PLANE_CACHE:-/var/cache/kubelet-split/control-plane}"/go*/bin/go; do
  if go_ok "$g"; then GO=$g; break; fi
done
[ -n "$GO" ] || { echo "containerd/build.sh: containerd $CONTAINERD_VERSION needs Go 1.26.6 or later; none here ($(command -v go >/dev/null 2>&1 && go env GOVERSION || echo 'no go'))" >&2; exit 1; }
pkg-config --exists libseccomp 2>/dev/null || { echo "containerd/build.sh: runc needs libseccomp's headers (apt-get install libseccomp-dev pkg-config)" >&2; exit 1; }

export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"
src() { # module@version -> a writable copy of its source (the module cache is read-only)
  local dir; dir=$("$GO" mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "containerd/build.sh: go mod download $1 failed" >&2; exit 1; }
  local copy="$tmp/src/${1%@*}"
  mkdir -p "$(dirname "$copy")" && cp -r "$dir" "$copy" && chmod -R u+w "$copy"
  echo "$copy"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$bin"
started=$SECONDS
echo "containerd/build.sh: building containerd $CONTAINERD_VERSION and runc $RUNC_VERSION with $("$GO" env GOVERSION)" >&2

c=$(src "github.com/containerd/containerd/v2@$CONTAINERD_VERSION")
pkg=github.com/containerd/containerd/v2
ld="-s -w -X $pkg/version.Version=$CONTAINERD_VERSION -X $pkg/version.Revision=module-proxy -X $pkg/version.Package=github.com/containerd/containerd"
# The daemon and ctr without cgo (no_btrfs: the btrfs snapshotter needs its
# headers; urfave_cli_no_docs leaves out the docs generator), the shim static
# and without gRPC, as upstream's Makefile builds it.
(cd "$c" && CGO_ENABLED=0 "$GO" build -trimpath -tags "urfave_cli_no_docs no_btrfs" -ldflags "$ld" -o "$tmp/out/" ./cmd/containerd ./cmd/ctr)
(cd "$c" && CGO_ENABLED=0 "$GO" build -trimpath -tags "urfave_cli_no_docs no_grpc" -ldflags "$ld" -o "$tmp/out/" ./cmd/containerd-shim-runc-v2)

r=$(src "github.com/opencontainers/runc@$RUNC_VERSION")
(cd "$r" && CGO_ENABLED=1 "$GO" build -trimpath -buildmode=pie -tags "seccomp urfave_cli_no_docs" \
  -ldflags "-s -w -X main.gitCommit=module-proxy -X main.version=${RUNC_VERSION#v}" -o "$tmp/out/runc" .)

for b in "${all[@]}"; do mv "$tmp/out/$b" "$bin/$b"; done
echo "containerd/build.sh: containerd $CONTAINERD_VERSION and runc $RUNC_VERSION built in $((SECONDS - started)) s" >&2
echo "$bin"
