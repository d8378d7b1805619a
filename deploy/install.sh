#!/usr/bin/env bash
# Installs what kubelet-split needs from Debian's packages, when missing:
# nats-server, containerd, runc, busybox-static, the CNI plugins, iproute2,
# and gcc with a static libc (for the pause image). Idempotent; needs root.
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
have iptables || need+=(iptables)

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

node_major=$(node -p 'process.versions.node.split(".").map(Number).slice(0,2).join(".")' 2>/dev/null || echo 0)
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=11)?0:1)' 2>/dev/null; then
  echo "install.sh: Node.js 20.11 or newer is required (found ${node_major})" >&2
  exit 1
fi
echo "install.sh: nats-server $(nats-server --version | awk '{print $2}'), containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), node $(node --version)"
