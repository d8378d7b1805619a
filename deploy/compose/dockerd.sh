#!/usr/bin/env bash
# The Docker engine of the compose deployment on this machine, isolated from
# everything else on it: Debian's dockerd 20.10 (package docker.io, with
# docker-compose 1.29 from Debian too, installed here when missing), with its
# own data root, exec root, pid file and socket, and its own managed
# containerd (never the node's, deploy/runtime.sh's). No iptables rules, no
# IP forwarding or masquerading, no default bridge: dockerd's iptables rules
# set FORWARD to DROP and would cut the CNI bridge's pods off; the compose
# services use the host's network (network_mode: host) and need none of it.
#
# usage: deploy/compose/dockerd.sh start|stop|status|host
#   host   prints the DOCKER_HOST to use (unix:///run/kubelet-split-docker/docker.sock)
# KS_DOCKER_STATE (default /run/kubelet-split-docker) and KS_DOCKER_ROOT
# (default /var/lib/kubelet-split-docker) move it. A machine whose own Docker
# engine already runs can skip this script and point DOCKER_HOST at it.
set -euo pipefail
state=${KS_DOCKER_STATE:-/run/kubelet-split-docker}
root=${KS_DOCKER_ROOT:-/var/lib/kubelet-split-docker}
sock="$state/docker.sock"
pidfile="$state/dockerd.pid"
log="$state/dockerd.log"
export DOCKER_HOST="unix://$sock"

answers() { [ -S "$sock" ] && timeout 10 docker version >/dev/null 2>&1; }

install() {
  local need=()
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
  command -v docker >/dev/null 2>&1 || need+=(docker.io)
  [ ${#need[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then echo "dockerd.sh: must run as root to install ${need[*]}" >&2; exit 1; fi
  echo "dockerd.sh: installing ${need[*]} from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d: the package must not start a system dockerd (with its iptables rules).
  local made=
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; made=1; fi
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  [ -n "$made" ] && rm -f /usr/sbin/policy-rc.d
  return 0
}

case "${1:-}" in
  start)
    install
    if answers; then echo "dockerd.sh: dockerd already answers on $sock" >&2; exit 0; fi
    mkdir -p "$state" "$root"
    (
      for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
      done
      exec setsid nohup dockerd --data-root "$root" --exec-root "$state/exec" --pidfile "$pidfile" \
        -H "unix://$sock" --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
        --containerd-namespace kubelet-split-docker --containerd-plugins-namespace kubelet-split-docker-plugins \
        >>"$log" 2>&1 </dev/null
    ) &
    for _ in $(seq 1 150); do
      if answers; then echo "dockerd.sh: dockerd $(docker version -f '{{.Server.Version}}') on $sock (pid $(cat "$pidfile"), log $log)" >&2; exit 0; fi
      sleep 0.2
    done
    echo "dockerd.sh: dockerd did not answer on $sock within 30s; see $log" >&2; tail -20 "$log" >&2; exit 1
    ;;
  stop)
    [ -f "$pidfile" ] || exit 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null && grep -q dockerd "/proc/$pid/comm" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    ;;
  status) answers ;;
  host) echo "$DOCKER_HOST" ;;
  *) echo "usage: $0 start|stop|status|host" >&2; exit 2 ;;
esac
