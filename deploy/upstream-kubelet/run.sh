#!/usr/bin/env bash
# Runs the upstream kubelet standalone for `npm run bench`, against its own
# containerd, leaving the machine as it found it. Found when it was first run
# here, each of which would damage a shared machine or another agent's pods:
#  - it kills every runtime pod it does not know: it gets a containerd of its
#    own (deploy/runtime.sh with its own root, state and socket under DIR,
#    the same configuration and images as the stack's), never the stack's;
#  - at start it writes vm.overcommit_memory, kernel.panic and
#    kernel.panic_on_oops (and checks vm.panic_on_oom and the two
#    kernel.keys limits) and exits if it cannot: in a private mount
#    namespace (unshare --mount, propagation private) those /proc/sys files
#    are bind-mounted over with private copies, so nothing outside changes;
#  - it writes /var/log/containers, and /var/lib/kubelet/device-plugins
#    whatever --root-dir says: /var/log is a private directory, /var/lib a
#    private overlay, in the same namespace;
#  - its root dir must be an rshared mount for volume mounts to reach the
#    runtime: DIR/root is bound onto itself and made rshared, inside the
#    namespace, where containerd runs too;
#  - podLogsDir (where it deletes every pod log directory it does not know)
#    has no flag: DIR/kubelet-config.yaml (the harness writes it) sets it to
#    DIR/pod-logs; volumePluginDir and --cert-dir point into DIR as well.
# On SIGTERM (or when the kubelet exits) it stops the kubelet, then every
# task of its containerd and containerd itself (runtime.sh stop); the
# namespace and its mounts go with the last process.
#
# usage: deploy/upstream-kubelet/run.sh DIR KUBELET NODE_NAME [KUBELET_FLAG...]
#   DIR         a directory of the caller's holding kubelet-config.yaml
#   KUBELET     the kubelet binary (deploy/upstream-kubelet/build.sh prints it)
#   NODE_NAME   --hostname-override
#   KUBELET_FLAG more flags for the kubelet (npm run conformance: --kubeconfig, --node-ip)
# Writes DIR/kubelet.pid, DIR/kubelet.started (its start, ns since the epoch)
# and DIR/containerd.sock (a link to its containerd's socket).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { echo "usage: $0 DIR KUBELET NODE_NAME [KUBELET_FLAG...]" >&2; exit 2; }
dir=$(cd "$1" && pwd) kubelet=$2 node=$3
shift 3

if [ "${KS_KUBELET_PRIVATE_NS:-}" != "$dir" ]; then
  [ "$(id -u)" = 0 ] || { echo "upstream-kubelet/run.sh: needs root (a mount namespace of its own, and containerd)" >&2; exit 1; }
  command -v unshare >/dev/null || { echo "upstream-kubelet/run.sh: unshare (util-linux) is missing" >&2; exit 1; }
  exec unshare --mount --propagation private -- env KS_KUBELET_PRIVATE_NS="$dir" bash "$0" "$dir" "$kubelet" "$node" "$@"
fi

# From here on, in the private mount namespace.
mkdir -p "$dir/sysctl"
for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  copy="$dir/sysctl/${f//\//.}"
  cat "/proc/sys/$f" > "$copy"
  mount --bind "$copy" "/proc/sys/$f"
done
mkdir -p "$dir/var-log"
mount --bind "$dir/var-log" /var/log
mkdir -p "$dir/var-lib/upper" "$dir/var-lib/work"
mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$dir/var-lib/upper,workdir=$dir/var-lib/work" /var/lib
mkdir -p "$dir/root" "$dir/pod-logs" "$dir/manifests" "$dir/volume-plugins" "$dir/pki"
mount --bind "$dir/root" "$dir/root"
mount --make-rshared "$dir/root"

export KS_RUNTIME_STATE="$dir/containerd-state" KS_RUNTIME_ROOT="$dir/containerd-root"
runtime() { bash "$here/../runtime.sh" "$@"; }
kubelet_pid=
stop() {
  trap - EXIT TERM INT
  if [ -n "$kubelet_pid" ] && kill -0 "$kubelet_pid" 2>/dev/null; then
    kill -TERM "$kubelet_pid"
    for _ in $(seq 1 100); do kill -0 "$kubelet_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$kubelet_pid" 2>/dev/null || true
  fi
  runtime stop || true
}
trap stop EXIT
trap 'exit 143' TERM INT

runtime start
ln -sf "$(runtime address)" "$dir/containerd.sock"

date +%s%N > "$dir/kubelet.started"
"$kubelet" --config "$dir/kubelet-config.yaml" --root-dir "$dir/root" --cert-dir "$dir/pki" --hostname-override "$node" "$@" &
kubelet_pid=$!
echo "$kubelet_pid" > "$dir/kubelet.pid"
set +e
wait "$kubelet_pid"
code=$?
echo "upstream-kubelet/run.sh: the kubelet exited with $code" >&2
exit "$code"
