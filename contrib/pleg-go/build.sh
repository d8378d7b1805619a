#!/usr/bin/env bash
# Builds the Go PLEG (contrib/pleg-go) with nats.go from the Go module proxy
# into a cache outside the repository, keyed by a hash of its sources, in
# $KS_PLEG_GO_CACHE (default /var/cache/kubelet-split/pleg-go): a cache that
# already holds the binary for these sources is reused with no Go needed.
# Prints the binary's path last.
#   bash contrib/pleg-go/build.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KS_PLEG_GO_CACHE:-/var/cache/kubelet-split/pleg-go}
hash=$(cd "$here" && find . -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
bin="$cache/pleg-go-$hash/pleg-go"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
GO=${GO:-$(command -v go || true)}
if [ -z "$GO" ]; then echo "pleg-go/build.sh: no Go on PATH (set GO=/path/to/go)" >&2; exit 1; fi
echo "pleg-go/build.sh: building with $("$GO" env GOVERSION)" >&2
started=$SECONDS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build -trimpath -ldflags "-s -w" -o "$tmp/pleg-go" .) >&2
mkdir -p "$(dirname "$bin")"
mv "$tmp/pleg-go" "$bin"
echo "pleg-go/build.sh: built in $((SECONDS - started)) s" >&2
echo "$bin"
