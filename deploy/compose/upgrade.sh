#!/usr/bin/env bash
# Replaces one service's containers with the image kubelet-split/kubelet:TAG
# while the node keeps running its pods: the rolling upgrade (or downgrade)
# of one subsystem (docs/compose.md, docs/adr/0037-rolling-upgrade.md).
#   deploy/compose/upgrade.sh [--env-file FILE] SERVICE TAG
# One container at a time, each new container's /readyz (its compose health
# check, run in it) answering before the next old one goes:
#   - a service whose replicas take their port of a range (PORT_RANGE:
#     pod-worker) gets its new container first (scaled up by one), then the
#     old one is stopped (SIGTERM, its stop_grace_period) and removed;
#   - a service on a fixed port (every other one: on the host's network a
#     second one could not bind it) has its old container stopped and
#     removed first, then the new one started: the service is away for its
#     stop and start (its peers' requests wait or are retried; pods keep running).
# Of a single-active service's instances, the standbys go first and the leader last (one hand-over).
# The other services are left as they are (docker-compose up --no-deps
# --no-recreate with KS_IMAGE_TAG=TAG for this one). A later plain
# `docker-compose up -d` recreates every service whose image is not .env's
# KS_IMAGE_TAG: once every service runs TAG, set KS_IMAGE_TAG=TAG in .env.
# KS_UPGRADE_READY_TIMEOUT (seconds, default 180): how long a new container may take to be ready.
# Prints one line per container replaced, with its time; exits 1 (naming what failed) when a
# new container does not become ready, leaving the containers not yet replaced as they are.
set -euo pipefail
cd "$(dirname "$0")/../.."
env_file=.env
if [ "${1:-}" = --env-file ]; then env_file=$2; shift 2; fi
usage() { echo "usage: deploy/compose/upgrade.sh [--env-file FILE] SERVICE TAG" >&2; exit 2; }
[ $# -eq 2 ] || usage
service=$1 tag=$2
[ -f "$env_file" ] || { echo "upgrade.sh: no $env_file (deploy/compose/up.sh makes it from .env.example)" >&2; exit 2; }
[ -n "${DOCKER_HOST:-}" ] || { DOCKER_HOST=$(bash deploy/compose/dockerd.sh host); export DOCKER_HOST; }
ready_timeout=${KS_UPGRADE_READY_TIMEOUT:-180}
image=kubelet-split/kubelet:$tag
compose() { docker-compose --env-file "$env_file" "$@"; }
say() { echo "upgrade.sh: $*" >&2; }

docker image inspect "$image" >/dev/null 2>&1 || { say "no image $image (deploy/compose/images.sh $tag builds it)"; exit 2; }
case "$service" in
  nats|nats-credentials) say "$service is not a kubelet-split service (its image is not kubelet-split/kubelet)"; exit 2 ;;
esac
# The service's stop_grace_period (seconds), or "-" when there is no such service, then every service's name.
config=$(compose config 2>/dev/null) || { say "docker-compose config failed:"; compose config >/dev/null; exit 2; }
{ read -r grace; read -r services; } < <(node -e '
  const { parse } = require(process.argv[1]);
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const all = parse(s).services ?? {};
    const svc = all[process.argv[2]];
    const g = String(svc?.stop_grace_period ?? "10s");
    const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(g);
    console.log(svc ? (m ? Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) : 10) : "-");
    console.log(Object.keys(all).join(" "));
  });' "$PWD/node_modules/yaml" "$service" <<<"$config") || true
[ -n "${grace:-}" ] || { say "could not read docker-compose config's services (node and $PWD/node_modules/yaml)"; exit 2; }
[ "$grace" != - ] || { say "no service $service in docker-compose.yml ($services)"; exit 2; }

running() { local id; for id in $(compose ps -q "$service" 2>/dev/null); do [ "$(docker inspect -f '{{.State.Running}}' "$id")" = true ] && echo "$id"; done; }
# The container's compose health check (the /readyz of its port, or of every module's), run in it.
ready() {
  local cmd
  cmd=$(docker inspect -f '{{json .Config.Healthcheck.Test}}' "$1" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const t = JSON.parse(s) ?? [];
      if (t[0] === "CMD-SHELL") console.log(t[1]);
      else if (t[0] === "CMD" && t[1] === "sh" && t[2] === "-c") console.log(t[3]);
      else process.exit(1);
    });') || { say "$1 has no sh -c health check to ask"; return 2; }
  docker exec "$1" sh -c "$cmd" >/dev/null 2>&1
}
wait_ready() {
  local id=$1 deadline=$((SECONDS + ready_timeout))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(docker inspect -f '{{.State.Running}}' "$id" 2>/dev/null)" = true ] || { say "new container $(name "$id") is not running (exit $(docker inspect -f '{{.State.ExitCode}}' "$id" 2>/dev/null)); its log:"; docker logs --tail 20 "$id" >&2; return 1; }
    ready "$id" && return 0
    sleep 0.5
  done
  say "new container $(name "$id") not ready within ${ready_timeout} s; its log:"; docker logs --tail 20 "$id" >&2; return 1
}
name() { docker inspect -f '{{.Name}}' "$1" | sed 's:^/::'; }
# A single-active instance's role (its /info's leadership.role), "" for the others.
role() {
  docker exec "$1" sh -c 'p=${PORT:-$(cat /tmp/port 2>/dev/null)}; wget -q -O - "http://127.0.0.1:${p:-${STATUS_MANAGER__PORT:-10317}}/info"' 2>/dev/null \
    | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { console.log(JSON.parse(s).leadership?.role ?? ""); } catch { console.log(""); } });'
}
old=($(running))
[ ${#old[@]} -gt 0 ] || { say "$service has no running container to replace (deploy/compose/up.sh first)"; exit 1; }
# Standbys first, the leader last.
ordered=(); leaders=()
for id in "${old[@]}"; do if [ "$(role "$id")" = leader ]; then leaders+=("$id"); else ordered+=("$id"); fi; done
ordered+=("${leaders[@]}")
surge=; docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "${old[0]}" | grep -q '^PORT_RANGE=' && surge=1
count=${#old[@]}
started=$SECONDS
say "$service: ${count} container(s) to $image, one at a time ($([ -n "$surge" ] && echo 'new one first' || echo 'old one stopped first: a fixed port'))"

create() {
  local before after id
  before=$(compose ps -q "$service" | sort)
  KS_IMAGE_TAG=$tag compose up -d --no-deps --no-recreate --no-build --scale "$service=$1" "$service" >/dev/null 2>&1 \
    || { say "docker-compose up --scale $service=$1 failed"; KS_IMAGE_TAG=$tag compose up -d --no-deps --no-recreate --no-build --scale "$service=$1" "$service" >&2; return 1; }
  after=$(compose ps -q "$service" | sort)
  id=$(comm -13 <(echo "$before") <(echo "$after") | head -n 1)
  [ -n "$id" ] || { say "docker-compose up made no new $service container"; return 1; }
  echo "$id"
}
retire() { docker stop -t "$grace" "$1" >/dev/null && docker rm "$1" >/dev/null; }

for id in "${ordered[@]}"; do
  t=$SECONDS was=$(name "$id") from=$(docker inspect -f '{{.Config.Image}}' "$id")
  if [ -n "$surge" ]; then
    new=$(create $((count + 1))) || exit 1
    wait_ready "$new" || { say "$was ($from) left running"; exit 1; }
    ready_s=$((SECONDS - t)); t2=$SECONDS
    retire "$id"
    stop_s=$((SECONDS - t2))
  else
    retire "$id"
    stop_s=$((SECONDS - t)); t2=$SECONDS
    new=$(create "$count") || exit 1
    wait_ready "$new" || { say "$was ($from) was removed: 'deploy/compose/upgrade.sh $service ${from##*:}' puts it back"; exit 1; }
    ready_s=$((SECONDS - t2))
  fi
  say "$service: $was ($from) replaced by $(name "$new") ($image), ready, in $((SECONDS - t)) s (old one stopped in $stop_s s, new one created and ready in $ready_s s)"
done
say "$service: every container runs $image ($((SECONDS - started)) s)"
