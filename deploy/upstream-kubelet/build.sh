#!/usr/bin/env bash
# Builds the upstream kubelet (k8s.io/kubernetes/cmd/kubelet v1.34.4) for
# `npm run bench` to measure side by side with kubelet-split. It is the
# control plane's tools module (deploy/control-plane: go.mod pins every
# staging module, tools.go the commands), so the kubelet shares its Go
# toolchain, module cache and binary cache (/var/cache/kubelet-split/
# control-plane, $KS_CONTROL_PLANE_CACHE) with kube-apiserver. A cold build
# takes about 6 minutes of one core; it runs under nice so that it does not
# starve what else runs. Prints the kubelet's path as its last line.
#   bash deploy/upstream-kubelet/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(nice -n 19 bash "$here/../control-plane/build.sh" kubelet | tail -1)
[ -x "$dir/kubelet" ] || { echo "upstream-kubelet/build.sh: no kubelet in $dir" >&2; exit 1; }
echo "$dir/kubelet"
