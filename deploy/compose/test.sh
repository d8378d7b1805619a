#!/usr/bin/env bash
# The compose lane (npm run test:compose): the compose deployment really
# built, deployed and driven on this machine, as a user would check it.
#   1. every image builds locally (deploy/compose/images.sh; KS_COMPOSE_NO_CACHE=1: no layer from the cache)
#   2. the stack comes up and every container is healthy (/readyz)
#   3. a static pod in the manifest directory runs in the host's containerd and shows in GET /pods
#   4. `restart` of one service leaves the pod's containers untouched (same container IDs, still running)
#   5. scaling pod-worker to 3 does too, and the third replica becomes healthy
#   6. `down` leaves no service container behind, and the pod still runs in containerd
#   7. up again: the pod is adopted (same container IDs); its manifest removed, it is stopped
#   8. the image loads what a node joining a cluster loads (@kubernetes/client-node); the stack
#      joined to a real control plane (etcd and kube-apiserver, test/support/control-plane.ts):
#      the Node registers, an API pod runs, kubectl logs, exec, attach and port-forward reach it
#      through the node's kubelet server, and no port but that one is off loopback
#      (test/compose-cluster.lane.ts, built on the host: npm run build; kubectl and the control
#      plane from deploy/control-plane/build.sh's cache)
#   9. the Go PLEG (contrib/pleg-go) as the stack's pleg (deploy/compose/pleg-go.yml): a pod with a
#      readiness probe Running and Ready, a crash loop restarted, both gone once removed
#      (test/compose-pleg-go.lane.ts)
# The stack is the project ks-compose-test with its own NODE_NAME, manifest, log and
# pod directories, cgroup root and ports (KS_COMPOSE_TEST_PORT_BASE, default 10310: the
# services' ports from there, pod-worker's 20 after them; KS_COMPOSE_TEST_NATS_PORT, default
# 14222), on the containerd of deploy/runtime.sh (KS_RUNTIME_* move it, as for the e2e tests),
# which the e2e tests share: the lane holds /tmp/e2e.lock while it uses it, and
# removes its pod and its project (containers, volumes) whatever happens, and stops
# the containerd and dockerd it started. KS_COMPOSE_LOCK=none: the caller holds the
# lock (.ci/run, which its caller runs under the lock if anyone does).
# Prints "compose lane: N passed, N failed"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
started=$SECONDS
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }
finish() { echo "== compose lane: $((SECONDS - started)) s in all"; echo "compose lane: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

started_dockerd=; bash deploy/compose/dockerd.sh status || started_dockerd=1
bash deploy/compose/dockerd.sh start || { fail "dockerd starts (deploy/compose/dockerd.sh)"; finish; }
DOCKER_HOST=$(bash deploy/compose/dockerd.sh host); export DOCKER_HOST

# 1. The images.
t=$SECONDS
if KS_IMAGE_PLEG_GO=1 KS_IMAGE_NO_CACHE=${KS_COMPOSE_NO_CACHE:-} bash deploy/compose/images.sh ks-compose-test > .tmp-compose-images.log 2>&1; then
  ok "every image builds locally in $((SECONDS - t)) s: $(docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep ':ks-compose-test ' | tr '\n' ' ')"
  rm -f .tmp-compose-images.log
else
  tail -30 .tmp-compose-images.log; fail "every image builds locally (log: .tmp-compose-images.log)"; finish
fi

exec 8>/tmp/e2e.lock
t=$SECONDS
[ "${KS_COMPOSE_LOCK:-}" = none ] || flock 8
locked=$SECONDS
started_runtime=; bash deploy/runtime.sh status || started_runtime=1
echo "== holding /tmp/e2e.lock (the shared containerd) after waiting $((locked - t)) s for it"
bash deploy/runtime.sh start >/dev/null || { fail "containerd runs (deploy/runtime.sh start)"; finish; }
sock=$(bash deploy/runtime.sh address)
runtime_root=${KS_RUNTIME_ROOT:-/var/lib/kubelet-split}/containerd

node=ks-compose-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
base=${KS_COMPOSE_TEST_PORT_BASE:-10310}
read_port=$((base + 5))
work=$(mktemp -d /tmp/ks-compose-test.XXXXXX)
mkdir -p "$work"/{manifests,logs,containers,pods}
env_file=$work/compose.env
cat > "$env_file" <<ENV
COMPOSE_PROJECT_NAME=ks-compose-test
COMPOSE_PROFILES=services
NODE_NAME=$node
LOG_LEVEL=info
KS_IMAGE_TAG=ks-compose-test
NATS_PORT=${KS_COMPOSE_TEST_NATS_PORT:-14222}
KS_PORT_CONFIG_SOURCE=$base
KS_PORT_SYNC_LOOP=$((base + 1))
KS_PORT_PLEG=$((base + 3))
KS_PORT_PROBER=$((base + 4))
KS_PORT_KUBELET_SERVER=$read_port
KS_PORT_CRI_GATEWAY=$((base + 6))
KS_PORT_STATUS_MANAGER=$((base + 7))
KS_PORT_NODE_STATUS=$((base + 8))
KS_PORT_CONSOLE=$((base + 9))
CONTAINERD_SOCKET_DIR=$(dirname "$sock")
CONTAINERD_ROOT_DIR=$runtime_root
POD_MANIFEST_PATH=$work/manifests
POD_LOGS_DIR=$work/logs
LEGACY_CONTAINER_LOGS_DIR=$work/containers
POD_ROOT_DIR=$work/pods
CGROUP_ROOT=/$node
POD_WORKER_REPLICAS=2
POD_WORKER_PORT_RANGE=$((base + 10))-$((base + 29))
IMAGE_GC_HIGH_THRESHOLD_PERCENT=100
ENV
compose() { docker-compose --env-file "$env_file" --project-directory "$repo" -f "$repo/docker-compose.yml" "$@"; }
project_containers() { docker ps -a -q --filter label=com.docker.compose.project=ks-compose-test; }
service_containers() { docker ps -a -q --filter label=com.docker.compose.project=ks-compose-test --filter "label=com.docker.compose.service=$1"; }

pod=sleeper-$node
cleanup() {
  echo "== cleanup"
  rm -f "$work/manifests/sleeper.yaml"
  if [ -n "$(compose ps -q pod-worker 2>/dev/null)" ]; then
    for _ in $(seq 1 60); do [ -z "$(pod_containers)" ] && break; sleep 1; done
  fi
  compose down -v --remove-orphans >/dev/null 2>&1
  # What the stack could not stop (a failure before the pod was adopted): the pod's containers and sandbox.
  for id in $(pod_task_ids); do
    ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1
  done
  umount "$work/pods" 2>/dev/null
  rm -rf "$work"
  [ -n "$started_runtime" ] && bash deploy/runtime.sh stop
  [ -n "$started_dockerd" ] && bash deploy/compose/dockerd.sh stop
  flock -u 8
  echo "== held /tmp/e2e.lock for $((SECONDS - locked)) s"
}
trap cleanup EXIT
trap 'exit 1' TERM INT

# The pod's containers and sandbox in containerd (by their CRI labels): "id status" lines.
pod_task_ids() { ctr --address "$sock" -n k8s.io containers ls "labels.\"io.kubernetes.pod.name\"==$pod" -q 2>/dev/null; }
pod_containers() { ctr --address "$sock" -n k8s.io containers ls "labels.\"io.kubernetes.pod.name\"==$pod,labels.\"io.cri-containerd.kind\"==container" -q 2>/dev/null | sort; }
running_tasks() { ctr --address "$sock" -n k8s.io tasks ls 2>/dev/null | awk '$3 == "RUNNING" { print $1 }' | sort; }
pods_json() { wget -q -O - "http://127.0.0.1:$read_port/pods" 2>/dev/null || curl -sf "http://127.0.0.1:$read_port/pods"; }
# The pod's phase and its containers' IDs as GET /pods shows them: "Running <id> ...".
pod_view() {
  pods_json | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const list = JSON.parse(s); const p = (list.items ?? list).find((x) => x.metadata?.name === process.argv[1]);
      if (!p) return;
      const ids = (p.status?.containerStatuses ?? []).map((c) => (c.containerID ?? "").replace(/^containerd:\/\//, "")).filter(Boolean).sort();
      const running = (p.status?.containerStatuses ?? []).every((c) => c.state?.running);
      console.log([p.status?.phase, running ? "running" : "not-running", ...ids].join(" "));
    });' "$pod"
}
all_healthy() {
  local want=$1 ids n=0 h
  ids=$(compose ps -q 2>/dev/null)
  for id in $ids; do
    [ "$(docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}}' "$id" 2>/dev/null)" = nats-credentials ] && continue
    h=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
    [ "$h" = healthy ] || return 1
    n=$((n + 1))
  done
  [ "$n" = "$want" ]
}
wait_for() { local secs=$1; shift; for _ in $(seq 1 "$secs"); do "$@" && return 0; sleep 1; done; return 1; }

# 2. Up and healthy: nats and 6 services + 2 pod-worker replicas.
t=$SECONDS
KS_COMPOSE_SKIP_BUILD=1 bash deploy/compose/up.sh --env-file "$env_file" >/dev/null 2>&1 || true
if wait_for 180 all_healthy 9; then
  ok "the stack comes up healthy (nats, 6 services, 2 pod-worker replicas) in $((SECONDS - t)) s"
else
  fail "the stack comes up healthy"; compose ps; compose logs --tail 20; finish
fi

# 3. A static pod: hostNetwork busybox sleeping, from the manifest directory.
cat > "$work/manifests/sleeper.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: sleeper
  namespace: default
spec:
  hostNetwork: true
  restartPolicy: Always
  terminationGracePeriodSeconds: 2
  containers:
    - name: sleep
      image: localhost/kubelet-split/busybox:1.35
      imagePullPolicy: Never
      command: ["sleep", "3600"]
YAML
t=$SECONDS
pod_running() { set -- $(pod_view); [ "${1:-}" = Running ] && [ "${2:-}" = running ] && [ -n "${3:-}" ]; }
if wait_for 120 pod_running; then
  ok "the static pod $pod is Running in GET /pods after $((SECONDS - t)) s"
else
  fail "the static pod $pod is Running in GET /pods (saw: $(pod_view))"; compose logs --tail 30; finish
fi
read -r -a view <<<"$(pod_view)"
ids=("${view[@]:2}")
before=$(pod_containers)
check "its container ${ids[0]:0:12} runs in the host's containerd (/pods and containerd agree)" \
  bash -c '[ "$1" = "$2" ] && grep -qx "$3" <<<"$4"' _ "$(printf '%s\n' "${ids[@]}" | sort)" "$before" "${ids[0]}" "$(running_tasks)"
same_pod() {
  local now; now=$(pod_containers)
  [ "$now" = "$before" ] || { echo "   containers were: $before; now: $now"; return 1; }
  for id in $before; do running_tasks | grep -qx "$id" || { echo "   $id is not running"; return 1; }; done
  [ "$(pod_view)" = "${view[*]}" ] || { echo "   /pods said: ${view[*]}; now: $(pod_view)"; return 1; }
}

# 4. Restart one service (the pod worker's peer that acts on containers: cri-gateway) and another (pleg).
for svc in cri-gateway pleg; do
  compose restart "$svc" >/dev/null 2>&1
  wait_for 120 all_healthy 9 && sleep 5
  check "restart $svc: healthy again, the pod's containers untouched (same IDs, running)" same_pod
done

# 5. Scale pod-worker to 3.
compose up -d --no-build --no-recreate --scale pod-worker=3 >/dev/null 2>&1
check "scale pod-worker to 3: 3 replicas, all healthy" wait_for 120 all_healthy 10
check "  and each took its own port" bash -c '[ "$(for id in $(docker ps -q --filter label=com.docker.compose.project=ks-compose-test --filter label=com.docker.compose.service=pod-worker); do docker exec "$id" cat /tmp/port; done | sort -u | wc -l)" = 3 ]'
sleep 5
check "  the pod's containers untouched (same IDs, running)" same_pod
# The memory levers (docs/adr/0018) in every service container's node: what the entrypoint gives it.
levers() {
  local id pid n=0
  for id in $(compose ps -q 2>/dev/null); do
    case "$(docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}}' "$id" 2>/dev/null)" in nats|nats-credentials) continue ;; esac
    pid=$(docker inspect -f '{{.State.Pid}}' "$id") || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- '--max-semi-space-size=1 ' && tr '\0' '\n' < "/proc/$pid/environ" | grep -qx MALLOC_ARENA_MAX=2 ||
      { echo "container $id (pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline")) runs without them" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -ge 9 ]
}
check "  every service runs with a 1 MB young generation and two malloc arenas" levers

# 6. Down: no service container left, the pod still runs.
t=$SECONDS
compose down >/dev/null 2>&1
check "down ($((SECONDS - t)) s) leaves no service container behind" bash -c '[ -z "$(docker ps -a -q --filter label=com.docker.compose.project=ks-compose-test)" ]'
check "  and kills no pod that should run (its containers still running in containerd)" \
  bash -c 'for id in $1; do grep -qx "$id" <<<"$2" || exit 1; done' _ "$before" "$(running_tasks)"

# 7. Up again: the running pod is adopted, not restarted; its manifest removed, the stack stops it.
KS_COMPOSE_SKIP_BUILD=1 bash deploy/compose/up.sh --env-file "$env_file" >/dev/null 2>&1 || true
wait_for 180 all_healthy 9 && wait_for 60 pod_running
check "up again: healthy, the pod adopted (same container IDs, running)" same_pod
rm -f "$work/manifests/sleeper.yaml"
check "its manifest removed: the stack removes its containers from containerd" wait_for 90 bash -c '[ -z "$(ctr --address "$1" -n k8s.io containers ls "labels.\"io.kubernetes.pod.name\"==$2,labels.\"io.cri-containerd.kind\"==container" -q)" ]' _ "$sock" "$pod"
compose down -v >/dev/null 2>&1

# 8. A cluster node. What a joined node loads, in the image: its production dependencies only.
check "the image loads @kubernetes/client-node (a runtime dependency: npm prune --omit=dev keeps it)" \
  docker run --rm --network none --entrypoint node kubelet-split/kubelet:ks-compose-test -e "import('@kubernetes/client-node').then((m) => process.exit(typeof m.KubeConfig === 'function' ? 0 : 1))"
t=$SECONDS
if ! npm run --silent build > .tmp-compose-build.log 2>&1; then
  tail -30 .tmp-compose-build.log; fail "npm run build (the cluster node's test, on the host; log: .tmp-compose-build.log)"; finish
fi
rm -f .tmp-compose-build.log
if ! cp_bin=$(bash deploy/control-plane/build.sh kubectl 2>.tmp-compose-cp.log | tail -n 1) || [ ! -x "$cp_bin/kubectl" ]; then
  tail -30 .tmp-compose-cp.log; fail "the control plane and kubectl (deploy/control-plane/build.sh kubectl; log: .tmp-compose-cp.log)"; finish
fi
rm -f .tmp-compose-cp.log
echo "== built on the host (npm run build, the control plane's cache) in $((SECONDS - t)) s"
# A test file the lane runs on the host against its images and containerd: one check, its lines shown.
lane_file() { # WHAT FILE [VAR=VALUE...]
  local what=$1 file=$2 log=.tmp-compose-$(basename "$2" .lane.js).log t=$SECONDS code n_pass n_fail
  shift 2
  env KS_COMPOSE_IMAGE_TAG=ks-compose-test KS_RUNTIME_ADDRESS="$sock" KS_COMPOSE_RUNTIME_ROOT="$runtime_root" "$@" \
    node --enable-source-maps --test --test-concurrency=1 --test-reporter=spec "$file" > "$log" 2>&1
  code=$?
  sed -n '/^[▶✔✖ ]*[✔✖]\|^# /p' "$log" | sed 's/^/   /'
  n_pass=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$log"); n_fail=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$log")
  # By the exit code too: a failed before() reports 0 failed and its tests cancelled.
  if [ "$code" = 0 ] && [ "${n_pass:-0}" -gt 0 ] && [ "${n_fail:-1}" = 0 ]; then
    ok "$what ($file): $n_pass passed in $((SECONDS - t)) s"; rm -f "$log"
  else
    fail "$what ($file): ${n_pass:-0} passed, ${n_fail:-?} failed, exit $code, in $((SECONDS - t)) s (log: $log)"
  fi
}
lane_file "a cluster node" dist/test/compose-cluster.lane.js KS_CONTROL_PLANE_BIN="$cp_bin"

# 9. The Go PLEG in place of ours.
lane_file "the Go PLEG as the stack's pleg" dist/test/compose-pleg-go.lane.js
finish
