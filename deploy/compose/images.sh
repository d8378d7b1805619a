#!/usr/bin/env bash
# Builds every image of the compose deployment locally, with no image
# registry (docker build against $DOCKER_HOST; deploy/compose/dockerd.sh):
#   kubelet-split/node-base   Node.js (the install step's, deploy/install.sh), the
#                             shared libraries it links, busybox-static (sh, wget,
#                             mount), util-linux's flock, openssl (the kubelet server's
#                             self-signed certificate), users root and node (65532)
#   kubelet-split/node-build  node-base with npm: the Dockerfile's build stage
#   kubelet-split/nats        the nats-server the install step leaves (deploy/nats/build.sh)
#                             and busybox for its health check
#   kubelet-split/kubelet     the Dockerfile: every service (the command picks one)
#   kubelet-split/pleg-go     with KS_IMAGE_PLEG_GO=1: the Go PLEG (contrib/pleg-go), for deploy/compose/pleg-go.yml
# usage: deploy/compose/images.sh [TAG]   (TAG default: local; KS_IMAGE_TAG too;
#        KS_IMAGE_NO_CACHE=1: every layer built again, none taken from the cache)
# kubelet-split/kubelet and kubelet-split/nats are tagged TAG and the project's version
# too (package.json's; KS_IMAGE_VERSION=V: V instead, stamped into the image as
# the version /info reports: a second build of one tree, for a rolling upgrade's test).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tag=${1:-${KS_IMAGE_TAG:-local}}
version=${KS_IMAGE_VERSION:-$(node -p 'require(process.argv[1]).version' "$repo/package.json")}
[[ "$version" =~ ^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$ ]] || { echo "images.sh: version $version is not a Docker tag (KS_IMAGE_VERSION or package.json)" >&2; exit 1; }
started=$SECONDS
nocache=(); [ -n "${KS_IMAGE_NO_CACHE:-}" ] && nocache=(--no-cache)
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

# The root filesystem of node-base: node and exactly the libraries ldd lists.
node_bin=$(readlink -f "$(command -v node)")
"$node_bin" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' \
  || { echo "images.sh: $node_bin is not Node.js 24 or later: run deploy/install.sh" >&2; exit 1; }
busybox=/bin/busybox
{ [ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1; } || { echo "images.sh: $busybox is not busybox-static: run deploy/install.sh" >&2; exit 1; }
rootfs="$ctx/base/rootfs"
mkdir -p "$rootfs"/{bin,usr/bin,usr/local/bin,etc,tmp,home/node,root}
ln -s /bin/busybox "$rootfs/usr/bin/env"   # npm's #!/usr/bin/env node
chmod 1777 "$rootfs/tmp"
cp "$node_bin" "$rootfs/usr/local/bin/node"
cp "$busybox" "$rootfs/bin/busybox"
# flock (util-linux; Debian's busybox has none): the entry point's port locks (entrypoint.sh).
cp /usr/bin/flock "$rootfs/usr/local/bin/flock"
# openssl and its config: the kubelet server makes its self-signed serving certificate with it
# (KUBELET_CERT_DIR) when the node has joined a cluster and .env names no KUBELET_TLS_* (docs/adr/0036).
openssl_bin=$(command -v openssl) || { echo "images.sh: no openssl: run deploy/install.sh" >&2; exit 1; }
cp "$openssl_bin" "$rootfs/usr/local/bin/openssl"
openssl_dir=$(openssl version -d | sed 's/^OPENSSLDIR: "\(.*\)"$/\1/')
mkdir -p "$rootfs$openssl_dir"
cp -L "$openssl_dir/openssl.cnf" "$rootfs$openssl_dir/openssl.cnf"
{ ldd "$node_bin"; ldd /usr/bin/flock; ldd "$openssl_bin"; } | grep -o '/[^ ]*' | while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:65532:65532:node:/home/node:/bin/sh\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nnode:x:65532:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
cat > "$ctx/base/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "chown", "65532:65532", "/home/node"]
ENV PATH=/usr/local/bin:/bin
CMD ["node"]
DOCKERFILE
docker build "${nocache[@]}" -q -t "kubelet-split/node-base:$tag" "$ctx/base" >/dev/null

# node-build: node-base and npm (the machine's own npm, a self-contained package).
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -f "$npm_dir/bin/npm-cli.js" ] || { echo "images.sh: no npm at $npm_dir" >&2; exit 1; }
mkdir -p "$ctx/build"
cp -a "$npm_dir" "$ctx/build/npm"
# The machine's CA bundle, for npm ci in the build stage (a registry reached
# through a TLS-inspecting proxy); the runtime image has none.
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
if [ -f "$ca" ]; then cp "$ca" "$ctx/build/ca.crt"; else : > "$ctx/build/ca.crt"; fi
cat > "$ctx/build/Dockerfile" <<DOCKERFILE
FROM kubelet-split/node-base:$tag
COPY npm /usr/local/lib/npm
COPY ca.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN ln -s /usr/local/lib/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s /usr/local/lib/npm/bin/npx-cli.js /usr/local/bin/npx
DOCKERFILE
docker build "${nocache[@]}" -q -t "kubelet-split/node-build:$tag" "$ctx/build" >/dev/null

# pleg-go (KS_IMAGE_PLEG_GO=1 only): the Go PLEG (contrib/pleg-go, docs/adr/0035), a static binary from
# contrib/pleg-go/build.sh, on node-base (busybox: the health check's wget); deploy/compose/pleg-go.yml runs it
# as the stack's pleg.
if [ -n "${KS_IMAGE_PLEG_GO:-}" ]; then
  pleg_go=$(bash "$repo/contrib/pleg-go/build.sh" | tail -n 1)
  [ -x "$pleg_go" ] || { echo "images.sh: contrib/pleg-go/build.sh gave no binary" >&2; exit 1; }
  mkdir -p "$ctx/pleg-go"
  cp "$pleg_go" "$ctx/pleg-go/pleg-go"
  cat > "$ctx/pleg-go/Dockerfile" <<DOCKERFILE
FROM kubelet-split/node-base:$tag
COPY pleg-go /usr/local/bin/pleg-go
USER 65532:65532
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/pleg-go"]
DOCKERFILE
  docker build "${nocache[@]}" -q -t "kubelet-split/pleg-go:$tag" "$ctx/pleg-go" >/dev/null
fi

# nats: the server the install step leaves in use (v2.14.9 from the Go module proxy, or Debian's).
nats=$(bash "$repo/deploy/nats/build.sh" 2>/dev/null | tail -n 1)
nats=$(readlink -f "$nats")
[ -x "$nats" ] || { echo "images.sh: no nats-server: run deploy/install.sh" >&2; exit 1; }
mkdir -p "$ctx/nats/rootfs/bin" "$ctx/nats/rootfs/data"
cp "$nats" "$ctx/nats/rootfs/bin/nats-server"
cp "$busybox" "$ctx/nats/rootfs/bin/busybox"
if ldd "$nats" >/dev/null 2>&1; then
  ldd "$nats" | grep -o '/[^ ]*' | while read -r lib; do mkdir -p "$ctx/nats/rootfs$(dirname "$lib")"; cp -L "$lib" "$ctx/nats/rootfs$lib"; done
fi
cat > "$ctx/nats/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
# JetStream's store (the nats-data volume starts as a copy of it): the server runs as 1000.
RUN ["/bin/busybox", "chown", "65532:65532", "/data"]
ENV PATH=/bin
ENTRYPOINT ["/bin/nats-server"]
DOCKERFILE
docker build "${nocache[@]}" -q -t "kubelet-split/nats:$tag" -t "kubelet-split/nats:$version" "$ctx/nats" >/dev/null
echo "images.sh: base images built in $((SECONDS - started)) s" >&2

# Every service: the repository's Dockerfile (npm ci and the build in its build stage).
nice -n 19 docker build "${nocache[@]}" --network host --build-arg "BASE_TAG=$tag" --build-arg "VERSION=$version" \
  -t "kubelet-split/kubelet:$tag" -t "kubelet-split/kubelet:$version" "$repo" >&2
echo "images.sh: every image built in $((SECONDS - started)) s (version $version)" >&2
docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^kubelet-split/.*:($tag|$version) " >&2
