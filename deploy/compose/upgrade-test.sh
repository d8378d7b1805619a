#!/usr/bin/env bash
# The rolling upgrade test (npm run test:upgrade; docs/compose.md, docs/adr/0037-rolling-upgrade.md):
#   1. two versions of the image: A, the checked-out tree (package.json's version), and B, the same
#      tree stamped with another version (images.sh, KS_IMAGE_VERSION): /info tells them apart
#   2. the stack up on A (project ks-upgrade-test, its own node name, directories, cgroup root,
#      NATS and service ports), a steady workload of readiness-probed pods Ready
#   3. a trickle of new and deleted static pods (one manifest added every 2 s, each removed after
#      20 s; every other one on the pod network) from before the first upgrade to after the last downgrade; GET /pods polled, the CRI
#      listed and its container events followed throughout (test/compose-upgrade/watch.ts)
#   4. every service upgraded to B one by one (deploy/compose/upgrade.sh), /info of each of its
#      containers then says B; then every one downgraded back to A, in the reverse order
#   5. no container of the steady pods restarted (restartCount 0, the same IDs in the CRI, no start
#      event), none NotReady in any /pods answer, every new pod started exactly once (one sandbox,
#      one container, one start), every deleted pod gone from /pods and the CRI
# Needs `npm run build` (the observer runs from dist/) and deploy/runtime.sh's containerd (its
# KS_RUNTIME_* settings: a containerd of one's own; KS_COMPOSE_LOCK=none: do not take /tmp/e2e.lock).
# KS_UPGRADE_SKIP_BUILD=1: the images ks-upgrade-a and ks-upgrade-b are built already.
# Prints every count and "upgrade test: N passed, N failed"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
started=$SECONDS
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }
finish() { echo "== upgrade test: $((SECONDS - started)) s in all"; echo "upgrade test: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }
[ -f dist/test/compose-upgrade/watch.js ] || { echo "upgrade-test.sh: no dist/test/compose-upgrade/watch.js: npm run build first" >&2; exit 2; }

# The order of the upgrade: each server before its clients (cri-gateway serves the CRI calls, pleg and
# prober publish what pod-worker and sync-loop consume, ...); the downgrade in the reverse order (ADR 0037).
SERVICES=(cri-gateway pleg prober pod-worker sync-loop status-manager config-source)
TAG_A=ks-upgrade-a TAG_B=ks-upgrade-b
VERSION_A=$(node -p 'require("./package.json").version')
VERSION_B=$VERSION_A-upgrade-b
STATUS_PORTS=(10515 10517 10518 10519)
READ_URL=http://127.0.0.1:10515

started_dockerd=
if [ -z "${DOCKER_HOST:-}" ]; then
  bash deploy/compose/dockerd.sh status || started_dockerd=1
  bash deploy/compose/dockerd.sh start || { fail "dockerd starts (deploy/compose/dockerd.sh)"; finish; }
  DOCKER_HOST=$(bash deploy/compose/dockerd.sh host); export DOCKER_HOST
fi

# 1. The two versions.
if [ -z "${KS_UPGRADE_SKIP_BUILD:-}" ]; then
  t=$SECONDS
  if bash deploy/compose/images.sh "$TAG_A" > .tmp-upgrade-images.log 2>&1 && KS_IMAGE_VERSION=$VERSION_B bash deploy/compose/images.sh "$TAG_B" >> .tmp-upgrade-images.log 2>&1; then
    ok "the two versions build in $((SECONDS - t)) s: kubelet-split/kubelet:$TAG_A ($VERSION_A), kubelet-split/kubelet:$TAG_B ($VERSION_B)"
    rm -f .tmp-upgrade-images.log
  else
    tail -30 .tmp-upgrade-images.log; fail "the two versions build (log: .tmp-upgrade-images.log)"; finish
  fi
fi
label() { docker image inspect -f '{{index .Config.Labels "org.opencontainers.image.version"}}' "kubelet-split/kubelet:$1" 2>/dev/null; }
check "the images say their versions: $TAG_A $(label $TAG_A), $TAG_B $(label $TAG_B)" bash -c '[ "$1" = "$2" ] && [ "$3" = "$4" ]' _ "$(label $TAG_A)" "$VERSION_A" "$(label $TAG_B)" "$VERSION_B"

exec 8>/tmp/e2e.lock
[ "${KS_COMPOSE_LOCK:-}" = none ] || flock 8
started_runtime=; bash deploy/runtime.sh status || started_runtime=1
bash deploy/runtime.sh start >/dev/null || { fail "containerd runs (deploy/runtime.sh start)"; finish; }
sock=$(bash deploy/runtime.sh address)
runtime_root=${KS_RUNTIME_ROOT:-/var/lib/kubelet-split}/containerd

node=ks-upgrade-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
work=$(mktemp -d /tmp/ks-upgrade-test.XXXXXX)
mkdir -p "$work"/{manifests,logs,containers,pods}
env_file=$work/compose.env
cat > "$env_file" <<ENV
COMPOSE_PROJECT_NAME=ks-upgrade-test
COMPOSE_PROFILES=services
NODE_NAME=$node
LOG_LEVEL=info
KS_IMAGE_TAG=$TAG_A
NATS_PORT=14522
CONTAINERD_SOCKET_DIR=$(dirname "$sock")
CONTAINERD_ROOT_DIR=$runtime_root
POD_MANIFEST_PATH=$work/manifests
POD_LOGS_DIR=$work/logs
LEGACY_CONTAINER_LOGS_DIR=$work/containers
POD_ROOT_DIR=$work/pods
CGROUP_ROOT=/$node
POD_WORKER_REPLICAS=2
POD_WORKER_PORT_RANGE=10520-10539
IMAGE_GC_HIGH_THRESHOLD_PERCENT=100
KS_PORT_CONFIG_SOURCE=10510
KS_PORT_SYNC_LOOP=10511
KS_PORT_PLEG=10513
KS_PORT_PROBER=10514
KS_PORT_KUBELET_SERVER=${STATUS_PORTS[0]}
KS_PORT_CRI_GATEWAY=10516
KS_PORT_STATUS_MANAGER=${STATUS_PORTS[1]}
KS_PORT_NODE_STATUS=${STATUS_PORTS[2]}
KS_PORT_CONSOLE=${STATUS_PORTS[3]}
ENV
compose() { docker-compose --env-file "$env_file" --project-directory "$repo" -f "$repo/docker-compose.yml" "$@"; }
pods_json() { curl -sf --max-time 5 "$READ_URL/pods"; }
# Our pods' sandboxes and containers in containerd (by their CRI labels: the pod names end in the node name).
pod_ids() { ctr --address "$sock" -n k8s.io containers ls "labels.\"io.kubernetes.pod.name\"~=-$node\$" -q 2>/dev/null; }
watch_pid=; trickle_pid=
cleanup() {
  echo "== cleanup"
  [ -n "$trickle_pid" ] && kill "$trickle_pid" 2>/dev/null
  [ -n "$watch_pid" ] && kill -KILL "$watch_pid" 2>/dev/null
  rm -f "$work"/manifests/*.yaml
  if [ -n "$(compose ps -q pod-worker 2>/dev/null)" ]; then
    for _ in $(seq 1 90); do [ -z "$(pod_ids)" ] && break; sleep 1; done
  fi
  compose down -v --remove-orphans >/dev/null 2>&1
  for id in $(pod_ids); do ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
  umount "$work/pods" 2>/dev/null
  rm -rf "$work"
  [ -n "$started_runtime" ] && bash deploy/runtime.sh stop
  [ -n "$started_dockerd" ] && bash deploy/compose/dockerd.sh stop
  flock -u 8
}
trap cleanup EXIT
trap 'exit 1' TERM INT

all_healthy() {
  local ids n=0 h id
  ids=$(compose ps -q 2>/dev/null)
  for id in $ids; do
    [ "$(docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}}' "$id" 2>/dev/null)" = nats-credentials ] && continue
    h=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
    [ "$h" = healthy ] || return 1
    n=$((n + 1))
  done
  [ "$n" = "$1" ]
}
wait_for() { local secs=$1; shift; for _ in $(seq 1 "$secs"); do "$@" && return 0; sleep 1; done; return 1; }

# 2. Up on A, healthy: nats, 6 services, 2 pod-worker replicas.
t=$SECONDS
KS_COMPOSE_SKIP_BUILD=1 bash deploy/compose/up.sh --env-file "$env_file" >/dev/null 2>&1 || true
if wait_for 240 all_healthy 9; then
  ok "the stack comes up on $TAG_A healthy (nats, 6 services, 2 pod-worker replicas) in $((SECONDS - t)) s"
else
  fail "the stack comes up healthy"; compose ps; compose logs --tail 20; finish
fi

# The version each of a service's containers says in /info (every module's, for the status group): "name=version" lines.
versions() {
  local id ports p
  for id in $(compose ps -q "$1" 2>/dev/null); do
    [ "$(docker inspect -f '{{.State.Running}}' "$id")" = true ] || continue
    if [ "$1" = status-manager ]; then ports=("${STATUS_PORTS[@]}"); else ports=("$(docker exec "$id" cat /tmp/port)"); fi
    for p in "${ports[@]}"; do
      curl -sf --max-time 5 "http://127.0.0.1:$p/info" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { const i = JSON.parse(s); console.log(`${i.service}@${process.argv[1]}=${i.version}`); });' "$p" || echo "?@$p=unanswered"
    done
  done
}
all_at() { local v; v=$(versions "$1"); [ -n "$v" ] && ! grep -qv "=$2\$" <<<"$v"; }
every_service_at() { local s; for s in "${SERVICES[@]}"; do all_at "$s" "$1" || return 1; done; }
check "every service says $VERSION_A in /info: $(for s in "${SERVICES[@]}"; do versions "$s"; done | tr '\n' ' ')" every_service_at "$VERSION_A"

# Bad input: refused with a message naming what is wrong, and nothing replaced.
refused() { local want=$1 out rc; shift; out=$(bash deploy/compose/upgrade.sh --env-file "$env_file" "$@" 2>&1); rc=$?; echo "   $out"; [ "$rc" = 2 ] && grep -qF -- "$want" <<<"$out"; }
before=$(compose ps -q | sort)
check "upgrade.sh no-such-service $TAG_B: refused, naming the service" refused "no service no-such-service" no-such-service "$TAG_B"
check "upgrade.sh pleg no-such-tag: refused, naming the image" refused "no image kubelet-split/kubelet:no-such-tag" pleg no-such-tag
check "upgrade.sh nats $TAG_B: refused (not a kubelet-split service)" refused "nats is not a kubelet-split service" nats "$TAG_B"
check "  and no container was replaced" bash -c '[ "$1" = "$2" ]' _ "$before" "$(compose ps -q | sort)"

# The steady workload: busybox pods with readiness probes: two hostNetwork with an httpGet probe (busybox httpd
# on loopback), one on the pod network (the CNI bridge) with an httpGet probe to its pod IP, one with an exec probe.
steady=(steady-http-1 steady-http-2 steady-net steady-exec)
http_pod() {
  cat > "$work/manifests/$1.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: { name: $1, namespace: default }
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: localhost/kubelet-split/busybox:1.35
      imagePullPolicy: Never
      command: ["sh", "-c", "mkdir -p /tmp/www && echo ok > /tmp/www/ready && exec httpd -f -p 127.0.0.1:$2 -h /tmp/www"]
      readinessProbe: { httpGet: { host: 127.0.0.1, port: $2, path: /ready }, periodSeconds: 2, failureThreshold: 3 }
YAML
}
http_pod steady-http-1 18551
http_pod steady-http-2 18552
cat > "$work/manifests/steady-net.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: { name: steady-net, namespace: default }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: localhost/kubelet-split/busybox:1.35
      imagePullPolicy: Never
      command: ["sh", "-c", "mkdir -p /tmp/www && echo ok > /tmp/www/ready && exec httpd -f -p 8080 -h /tmp/www"]
      readinessProbe: { httpGet: { port: 8080, path: /ready }, periodSeconds: 2, failureThreshold: 3 }
YAML
cat > "$work/manifests/steady-exec.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: { name: steady-exec, namespace: default }
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: sleep
      image: localhost/kubelet-split/busybox:1.35
      imagePullPolicy: Never
      command: ["sh", "-c", "touch /tmp/ready && exec sleep 3600"]
      readinessProbe: { exec: { command: ["cat", "/tmp/ready"] }, periodSeconds: 2, failureThreshold: 3 }
YAML
steady_ready() {
  pods_json | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const items = JSON.parse(s).items ?? [];
      const ready = (n) => items.find((p) => p.metadata?.name === n)?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      process.exit(process.argv.slice(1).every(ready) ? 0 : 1);
    });' "${steady[@]/%/-$node}"
}
t=$SECONDS
if wait_for 180 steady_ready; then
  ok "the steady pods (${steady[*]}) are Ready in GET /pods after $((SECONDS - t)) s"
else
  fail "the steady pods are Ready in GET /pods"; pods_json | head -c 2000; compose logs --tail 20; finish
fi

# 3. The observer, then the trickle.
trickle_log=$work/trickle.log
: > "$trickle_log"
node dist/test/compose-upgrade/watch.js "$READ_URL" "$sock" "$node" "$trickle_log" "${steady[@]}" > "$work/watch.out" 2>&1 &
watch_pid=$!
# Each trickle pod lives 20 s: a pod whose first sync fails while cri-gateway is away is retried after
# pod-worker's POD_SYNC_BACKOFF (10 s, jittered up to 15 s, as upstream's workerBackOffPeriod), and must still be there then.
lifetime=${KS_UPGRADE_TRICKLE_LIFETIME:-20}
trickle() {
  local i=0 live=() keep e n
  while :; do
    if [ ! -e "$work/stop-trickle" ]; then
      # Every other one on the pod network (a CNI set-up and tear-down each).
      i=$((i + 1)); n=trickle-$i
      cat > "$work/manifests/.$n.tmp" <<YAML
apiVersion: v1
kind: Pod
metadata: { name: $n, namespace: default }
spec:
  hostNetwork: $([ $((i % 2)) = 1 ] && echo true || echo false)
  terminationGracePeriodSeconds: 1
  containers:
    - name: sleep
      image: localhost/kubelet-split/busybox:1.35
      imagePullPolicy: Never
      command: ["sleep", "3600"]
YAML
      mv "$work/manifests/.$n.tmp" "$work/manifests/$n.yaml"
      echo "add $n $SECONDS" >> "$trickle_log"
      live+=("$n:$SECONDS")
    fi
    keep=()
    for e in "${live[@]}"; do
      if [ $((SECONDS - ${e##*:})) -ge "$lifetime" ]; then rm -f "$work/manifests/${e%%:*}.yaml"; echo "del ${e%%:*} $SECONDS" >> "$trickle_log"; else keep+=("$e"); fi
    done
    live=("${keep[@]}")
    [ -e "$work/stop-trickle" ] && [ ${#live[@]} -eq 0 ] && return 0
    sleep 2
  done
}
sleep 3
trickle &
trickle_pid=$!
sleep 12

# 4. Upgrade, then downgrade, one service at a time.
roll() {
  local to=$1 version=$2 s t
  shift 2
  for s in "$@"; do
    t=$SECONDS
    if bash deploy/compose/upgrade.sh --env-file "$env_file" "$s" "$to" > "$work/upgrade.log" 2>&1; then
      check "$s to $to in $((SECONDS - t)) s ($(grep -c 'replaced by' "$work/upgrade.log") container(s)); /info: $(versions "$s" | tr '\n' ' ')" all_at "$s" "$version"
      grep 'replaced by' "$work/upgrade.log" | sed 's/^upgrade.sh: /     /'
    else
      fail "upgrade.sh $s $to:"; sed 's/^/   /' "$work/upgrade.log"
    fi
  done
}
rolled=$SECONDS
roll "$TAG_B" "$VERSION_B" "${SERVICES[@]}"
check "every service says $VERSION_B" every_service_at "$VERSION_B"
echo "== upgrade: $((SECONDS - rolled)) s"
downgraded=$SECONDS
reversed=(); for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do reversed+=("${SERVICES[$i]}"); done
roll "$TAG_A" "$VERSION_A" "${reversed[@]}"
check "every service says $VERSION_A again" every_service_at "$VERSION_A"
echo "== downgrade: $((SECONDS - downgraded)) s"

# 5. The trickle stops (each of its pods still lives its 20 s), then its pods must be gone everywhere.
touch "$work/stop-trickle"
wait "$trickle_pid"; trickle_pid=
echo "== trickle: $(grep -c '^add' "$trickle_log") pods added, $(grep -c '^del' "$trickle_log") deleted"
trickle_gone() {
  [ -z "$(ctr --address "$sock" -n k8s.io containers ls "labels.\"io.kubernetes.pod.name\"~=^trickle-" -q 2>/dev/null)" ] || return 1
  ! pods_json | grep -q '"name":"trickle-'
}
t=$SECONDS
wait_for 180 trickle_gone && echo "== the trickle's pods gone from /pods and containerd $((SECONDS - t)) s after the last deletion"
kill -TERM "$watch_pid"
wait "$watch_pid"; watch_rc=$?; watch_pid=
cat "$work/watch.out"
passed=$((passed + $(grep -c '^ok  ' "$work/watch.out"))); failed=$((failed + $(grep -c '^FAIL' "$work/watch.out")))
[ "$watch_rc" = 0 ] || [ "$(grep -c '^FAIL' "$work/watch.out")" != 0 ] || fail "the observer exited $watch_rc"
finish
