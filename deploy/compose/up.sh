#!/usr/bin/env bash
# The compose deployment on this machine, from a checkout: the isolated
# Docker engine (deploy/compose/dockerd.sh; DOCKER_HOST set already: that
# engine instead), every image built locally (deploy/compose/images.sh), the
# host directories the services mount, then `docker-compose up -d` with the
# settings of .env (copied from .env.example when there is none) and any
# extra arguments (e.g. --scale pod-worker=3). containerd must run on the
# host: the node's, or `deploy/runtime.sh start` (CONTAINERD_SOCKET_DIR then
# /run/kubelet-split/containerd in .env). With NODE_KUBECONFIG in .env the
# node joins that cluster (docs/compose.md, docs/adr/0036).
#   deploy/compose/up.sh [--env-file FILE] [docker-compose up arguments]
set -euo pipefail
cd "$(dirname "$0")/../.."
env_file=.env
if [ "${1:-}" = --env-file ]; then env_file=$2; shift 2; fi
[ -f "$env_file" ] || { [ "$env_file" = .env ] && cp .env.example .env; }
if [ -z "${DOCKER_HOST:-}" ]; then
  bash deploy/compose/dockerd.sh start
  DOCKER_HOST=$(bash deploy/compose/dockerd.sh host); export DOCKER_HOST
fi
setting() { local v; v=$(sed -n "s/^$1=//p" "$env_file" | tail -n 1); echo "${v:-$2}"; }
# KS_COMPOSE_SKIP_BUILD=1: the images are built already (the compose lane builds them first).
[ -n "${KS_COMPOSE_SKIP_BUILD:-}" ] || KS_IMAGE_TAG=$(setting KS_IMAGE_TAG local) bash deploy/compose/images.sh

# The directories the services mount, at the same paths as on the host. POD_ROOT_DIR is bound
# shared (rshared) into pod-worker, so that its tmpfs mounts reach containerd: it must be a shared mount.
mkdir -p "$(setting POD_MANIFEST_PATH /etc/kubernetes/manifests)" "$(setting POD_LOGS_DIR /var/log/pods)" "$(setting LEGACY_CONTAINER_LOGS_DIR /var/log/containers)"
pods=$(setting POD_ROOT_DIR /var/lib/kubelet-split/pods)
mkdir -p "$pods"
if ! awk -v d="$pods" '$5 == d && / shared:/ { found = 1 } END { exit !found }' /proc/self/mountinfo; then
  mountpoint -q "$pods" || mount --bind "$pods" "$pods"
  mount --make-rshared "$pods"
fi
# Joining a cluster (docs/adr/0036): the kubeconfig and the kubelet server's certificates must be in
# NODE_KUBE_DIR, the one directory mounted (read-only) for them; a path elsewhere would not be there inside.
kube_dir=$(setting NODE_KUBE_DIR /etc/kubelet-split/kube)
mkdir -p "$kube_dir"
for var in NODE_KUBECONFIG KUBELET_CLIENT_CA_FILE KUBELET_TLS_CERT_FILE KUBELET_TLS_PRIVATE_KEY_FILE; do
  file=$(setting "$var" "")
  [ -n "$file" ] || continue
  case "$file" in
    "${kube_dir%/}"/*) [ -r "$file" ] || { echo "up.sh: $var=$file (in $env_file) cannot be read" >&2; exit 1; } ;;
    *) echo "up.sh: $var=$file (in $env_file) is not in NODE_KUBE_DIR=$kube_dir, the directory mounted for it" >&2; exit 1 ;;
  esac
done
socket_dir=$(setting CONTAINERD_SOCKET_DIR /run/containerd)
[ -S "$socket_dir/containerd.sock" ] || echo "up.sh: no containerd socket at $socket_dir/containerd.sock (CONTAINERD_SOCKET_DIR in $env_file): cri-gateway will not be ready" >&2

started=$SECONDS
docker-compose --env-file "$env_file" up -d --no-build "$@"
echo "up.sh: docker-compose up -d returned after $((SECONDS - started)) s (DOCKER_HOST=$DOCKER_HOST)" >&2
