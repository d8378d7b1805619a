#!/usr/bin/env bash
# Builds nats-server v2.14.9 from the Go module proxy (go install, no release
# download), for the server's own message tracing (Nats-Trace-Dest and
# trace-on-traceparent, nats-server 2.11 and later), which Debian's
# nats-server 2.9.10 lacks. Cached outside the repository, keyed by version,
# in $KS_NATS_CACHE (default /var/cache/kubelet-split/nats): a cache that
# already holds the binary is reused with no Go needed, and bin/nats-server
# there links to it (what deploy/local/stack.ts starts when present).
# With no Go 1.24 or later on the machine (its own, or the toolchain
# deploy/control-plane/build.sh fetched into its cache) nothing is built and
# Debian's nats-server stays in use: it runs everything except `trace --nats`.
# Never fails the install for that; prints the server it leaves in use last.
#   bash deploy/nats/build.sh
set -euo pipefail
NATS_VERSION=v2.14.9
cache=${KS_NATS_CACHE:-/var/cache/kubelet-split/nats}
dir="$cache/nats-server-$NATS_VERSION"
link="$cache/bin/nats-server"

use() { mkdir -p "$cache/bin" && ln -sfn "$dir/nats-server" "$link" && echo "$link"; }
if [ -x "$dir/nats-server" ]; then use; exit 0; fi

go_ok() { command -v "$1" >/dev/null 2>&1 && printf '%s\n' go1.24 "$("$1" env GOVERSION | sed 's/[-+ ].*//')" | sort -C -V; }
GO=
for g in go "${KS_CONTROL_PLANE_CACHE:-/var/cache/kubelet-split/control-plane}"/go*/bin/go; do
  if go_ok "$g"; then GO=$g; break; fi
done
fallback="$(command -v nats-server || echo 'no nats-server on PATH')"
if [ -z "$GO" ]; then
  echo "nats/build.sh: no Go 1.24 or later here: keeping $fallback ($(nats-server --version 2>/dev/null || echo '?')), which has no message tracing (trace --nats-trace needs nats-server 2.11 or later)" >&2
  echo "$fallback"
  exit 0
fi
echo "nats/build.sh: building nats-server $NATS_VERSION with $("$GO" env GOVERSION)" >&2
started=$SECONDS
tmp=$(mktemp -d)
if ! CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOBIN="$tmp" "$GO" install -trimpath -ldflags "-s -w" "github.com/nats-io/nats-server/v2@$NATS_VERSION" >&2; then
  rm -rf "$tmp"
  echo "nats/build.sh: go install failed: keeping $fallback, which has no message tracing" >&2
  echo "$fallback"
  exit 0
fi
mkdir -p "$dir"
mv "$tmp/nats-server" "$dir/nats-server"
rm -rf "$tmp"
echo "nats/build.sh: nats-server $NATS_VERSION built in $((SECONDS - started)) s" >&2
use
