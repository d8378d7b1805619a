#!/bin/sh
# The image's entry point (Dockerfile): the first argument picks what runs.
#   <service>          the service's bundle, dist/bundle/<service>.mjs
#   all | <a>,<b>      the one-process mode (dist/bundle/kubelet.mjs, TARGET)
#   nats-credentials   deploy/nats/credentials.ts with the remaining arguments; with
#                      NATS_CONFIG_OWNER=UID:GID, nats-server.conf is chowned to it
# PORT_RANGE=LO-HI: replicas of one service on the host's network take each
# its own port of the range, the first whose lock file in PORT_LOCK_DIR (a
# volume the replicas share) no other replica holds; the lock is held for the
# life of the process (file descriptor 9), so a port is never taken twice.
# The port in use is written to /tmp/port for the health check.
set -eu
what=${1:-all}
[ $# -gt 0 ] && shift
if [ "$what" = nats-credentials ]; then
  node dist/deploy/nats/credentials.js "$@"
  # The server's config to the server's user too (NATS_CONFIG_OWNER=UID:GID): nats runs as non-root.
  if [ -n "${NATS_CONFIG_OWNER:-}" ]; then
    for a in "$@"; do case "$a" in --dir=*) chown "$NATS_CONFIG_OWNER" "${a#--dir=}/nats-server.conf" ;; esac; done
  fi
  exit 0
fi
if [ -n "${PORT_RANGE:-}" ]; then
  lo=${PORT_RANGE%-*}; hi=${PORT_RANGE#*-}; dir=${PORT_LOCK_DIR:-/run/kubelet-split-ports}
  mkdir -p "$dir"
  PORT=
  for p in $(seq "$lo" "$hi"); do
    exec 9>"$dir/$p.lock"
    if flock -n 9; then PORT=$p; break; fi
    exec 9>&-
  done
  [ -n "$PORT" ] || { echo "entrypoint: every port of PORT_RANGE=$PORT_RANGE is taken" >&2; exit 1; }
  export PORT
  export INSTANCE_ID="${INSTANCE_ID:-p$PORT}"
fi
echo "${PORT:-}" > /tmp/port
# The bundles (deploy/bundle.mjs) start faster than dist/apps/<service>/src/main.js; no source
# maps (memory and start time). A small young generation and at most two malloc arenas in every process
# (docs/adr/0018-idle-footprint.md; the launcher's MODULES_NODE_ARGS and SERVICE_PROCESS_ENV).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
case "$what" in
  config-source|sync-loop|pod-worker|pleg|prober|status-manager|kubelet-server|node-status|console|cri-gateway)
    exec node --max-semi-space-size=1 "dist/bundle/$what.mjs" "$@" ;;
  *)
    export TARGET="$what"
    exec node --max-semi-space-size=1 dist/bundle/kubelet.mjs "$@" ;;
esac
