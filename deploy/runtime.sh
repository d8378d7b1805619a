#!/usr/bin/env bash
# The node's container runtime for kubelet-split: containerd with its own
# root, state and socket (never a system containerd's), CRI configured for
# this machine, the CNI bridge config, and the locally built images.
#
# usage: deploy/runtime.sh start|stop|restart [DOWN_SECONDS]|status|address|kind
#   start   start containerd unless ours already answers; import the images if missing
#   stop    stop every task in the k8s.io namespace, then the containerd we started
#   restart an outage of the daemon alone: stop the containerd we started (its
#           tasks' shims keep running, as when a node's containerd restarts),
#           wait DOWN_SECONDS (default 0), start it again with the same config
#   status  exit 0 when our containerd answers
#   address print the socket path
#   kind    print the runtime start would run (or runs): containerd2 or containerd1.6
# KS_RUNTIME chooses it: containerd2 (v2.4 and runc 1.5, built from the Go
# module proxy by deploy/containerd/build.sh, config version 3) or
# containerd1.6 (Debian 12's containerd 1.6.20 and runc 1.1.5). Unset, it is
# containerd2 where that build is in its cache (deploy/install.sh builds it),
# else containerd1.6. Each has its own root under KS_RUNTIME_ROOT (a
# containerd 1.6 cannot open a root containerd 2 has migrated); the socket is
# the same. start refuses to start one while the other answers there; with
# KS_RUNTIME unset, every command acts on the one running.
# Paths can be moved with KS_RUNTIME_STATE (default /run/kubelet-split)
# and KS_RUNTIME_ROOT (default /var/lib/kubelet-split), e.g. for a second,
# throw-away containerd in a test; KS_SKIP_IMAGES=1 skips the image import.
# KS_CNI_BRIDGE and KS_CNI_SUBNET (default ks-cni0, 10.88.77.0/24) give a
# second containerd a pod network of its own (npm run conformance does);
# KS_CNI_ROUTES (comma-separated CIDRs, default none) gives its pods routes
# through the bridge to other pod subnets on this host (npm run fleet: the
# other nodes'; never a default route, so a pod reaches no outside address).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
state=${KS_RUNTIME_STATE:-/run/kubelet-split}
root=${KS_RUNTIME_ROOT:-/var/lib/kubelet-split}
sock="$state/containerd/containerd.sock"
pidfile="$state/containerd.pid"
log="$state/containerd.log"
conf="$state/containerd-config.toml"
cni_dir="$state/cni/net.d"

kindfile="$state/containerd.kind"

# The runtime: KS_RUNTIME, or the one already running here (restart, stop), or the default.
kind=${KS_RUNTIME:-}
if [ -z "$kind" ] && [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  # One started before runtime.sh knew of containerd 2 wrote no kind: Debian's.
  kind=$(cat "$kindfile" 2>/dev/null || echo containerd1.6)
fi
if [ -z "$kind" ]; then
  if bash "$here/containerd/build.sh" --cached >/dev/null 2>&1; then kind=containerd2; else kind=containerd1.6; fi
fi
case "$kind" in
  containerd2)
    if [ "${1:-}" = start ] || [ "${1:-}" = restart ]; then
      bin=$(bash "$here/containerd/build.sh" | tail -n 1) || { echo "runtime.sh: KS_RUNTIME=containerd2, but deploy/containerd/build.sh could not build it (above)" >&2; exit 1; }
    else
      bin=$(bash "$here/containerd/build.sh" --cached 2>/dev/null) || bin=
    fi
    CONTAINERD="$bin/containerd" CTR="$bin/ctr" RUNC="$bin/runc" template="$here/containerd/config-v3.toml.in" croot="$root/containerd2"
    # Its shim and ctr ahead of Debian's on PATH (containerd finds containerd-shim-runc-v2 there).
    [ -n "$bin" ] && export PATH="$bin:$PATH"
    ;;
  containerd1.6)
    CONTAINERD=containerd CTR=ctr RUNC=$(command -v runc || echo runc) template="$here/containerd/config.toml.in" croot="$root/containerd" ;;
  *) echo "runtime.sh: KS_RUNTIME must be containerd2 or containerd1.6, got \"$kind\"" >&2; exit 2 ;;
esac

answers() { [ -S "$sock" ] && timeout 5 "$CTR" --address "$sock" version >/dev/null 2>&1; }

# KS_CNI_ROUTES as the host-local IPAM's routes: {"dst": "10.88.101.0/24"}, ...
cni_routes() {
  local out="" cidr
  for cidr in ${KS_CNI_ROUTES:+${KS_CNI_ROUTES//,/ }}; do
    [[ "$cidr" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/[0-9]+$ ]] || { echo "runtime.sh: KS_CNI_ROUTES: \"$cidr\" is not a CIDR" >&2; exit 2; }
    out+="${out:+, }{ \"dst\": \"$cidr\" }"
  done
  printf '%s' "$out"
}

render() {
  local snapshotter=$1 routes
  routes=$(cni_routes) || exit 2
  mkdir -p "$state/containerd" "$croot" "$cni_dir" "$root/cni/networks"
  sed -e "s#@ROOT@#$croot#g" -e "s#@STATE@#$state/containerd#g" \
      -e "s#@CNI_CONF_DIR@#$cni_dir#g" -e "s#@SNAPSHOTTER@#$snapshotter#g" -e "s#@RUNC@#$RUNC#g" \
      "$template" > "$conf"
  sed -e "s#/var/lib/kubelet-split/cni/networks#$root/cni/networks#" \
      -e "s#\"ks-cni0\"#\"${KS_CNI_BRIDGE:-ks-cni0}\"#" -e "s#\"10.88.77.0/24\"#\"${KS_CNI_SUBNET:-10.88.77.0/24}\"#" \
      -e "s#\"routes\": \[\]#\"routes\": [$routes]#" \
      "$here/cni/10-kubelet-split.conflist" > "$cni_dir/10-kubelet-split.conflist"
}

launch() {
  # Its own session: a Ctrl-C in the launcher's terminal must not reach containerd
  # before its tasks are stopped (runtime.sh stop does that, then stops it).
  # It keeps none of the caller's other descriptors either: a daemon holding an
  # inherited lock or pipe (flock, a test runner's output) would keep it open
  # for as long as containerd runs.
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
    done
    exec setsid nohup "$CONTAINERD" --config "$conf" >>"$log" 2>&1 < /dev/null
  ) &
  echo $! > "$pidfile"
  echo "$kind" > "$kindfile"
  for _ in $(seq 1 100); do
    answers && return 0
    kill -0 "$(cat "$pidfile")" 2>/dev/null || { echo "runtime.sh: containerd exited; see $log" >&2; tail -20 "$log" >&2; return 1; }
    sleep 0.1
  done
  echo "runtime.sh: containerd did not answer on $sock within 10s; see $log" >&2
  return 1
}

stop_containerd() {
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null && grep -q containerd "/proc/$pid/comm" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$pidfile"
}

images_present() {
  local have; have=$("$CTR" --address "$sock" -n k8s.io images ls -q 2>/dev/null)
  grep -qx 'localhost/kubelet-split/pause:3.10' <<<"$have" && grep -qx 'localhost/kubelet-split/busybox:1.35' <<<"$have"
}

case "${1:-}" in
  start)
    running=$(cat "$kindfile" 2>/dev/null || true)
    if answers && [ -n "$running" ] && [ "$running" != "$kind" ]; then
      echo "runtime.sh: $running already answers on $sock, not $kind (KS_RUNTIME); stop it first (deploy/runtime.sh stop)" >&2
      exit 1
    elif answers; then
      echo "runtime.sh: containerd already answers on $sock"
    else
      render overlayfs
      launch
      if ! "$CTR" --address "$sock" plugins ls 2>/dev/null | grep -E 'io.containerd.snapshotter.v1 +overlayfs ' | grep -q ' ok'; then
        echo "runtime.sh: overlayfs is not usable here; falling back to the native snapshotter"
        stop_containerd
        render native
        launch
      fi
      echo "runtime.sh: $kind: containerd $("$CONTAINERD" --version | awk '{print $3}'), runc $("$RUNC" --version | awk 'NR==1{print $3}') on $sock (pid $(cat "$pidfile"), log $log)"
    fi
    if [ -z "${KS_SKIP_IMAGES:-}" ] && ! images_present; then
      snap=$(sed -n 's/^ *snapshotter = "\(.*\)"/\1/p' "$conf" 2>/dev/null | head -1)
      CONTAINERD_ADDRESS="$sock" SNAPSHOTTER="${snap:-overlayfs}" "$here/images/build.sh" --out "$state/images"
    fi
    ;;
  stop)
    if answers; then
      # Tasks first, so that no shim or container is left behind.
      for id in $("$CTR" --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
        "$CTR" --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
      done
      for _ in $(seq 1 30); do
        [ -z "$("$CTR" --address "$sock" -n k8s.io tasks ls -q 2>/dev/null | head -1)" ] && break
        for id in $("$CTR" --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
          "$CTR" --address "$sock" -n k8s.io tasks delete "$id" >/dev/null 2>&1 || true
        done
        sleep 0.1
      done
    fi
    stop_containerd
    ;;
  restart)
    [ -f "$pidfile" ] && [ -f "$conf" ] || { echo "runtime.sh: no containerd started by this script under $state to restart" >&2; exit 1; }
    stop_containerd
    sleep "${2:-0}"
    launch
    echo "runtime.sh: containerd restarted on $sock (pid $(cat "$pidfile"))"
    ;;
  status) answers ;;
  address) echo "$sock" ;;
  kind) echo "$kind" ;;
  *) echo "usage: $0 start|stop|restart [DOWN_SECONDS]|status|address|kind" >&2; exit 2 ;;
esac
