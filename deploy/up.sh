#!/usr/bin/env bash
# The whole node stack on this machine, from a fresh checkout:
# Debian packages (deploy/install.sh), npm dependencies, build, containerd
# with the locally built images, nats-server and the seven services, with the
# example static pods of deploy/examples. Ctrl-C stops everything.
# Extra arguments go to the launcher (e.g. --pod-workers 3, --manifests DIR).
# KS_SKIP_BUILD=1 skips the packages, npm ci and the build, for a checkout
# already built (the launcher's e2e tests run it so); KS_RUNTIME_STATE and
# KS_RUNTIME_ROOT move containerd's and the launcher's state (deploy/runtime.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${KS_SKIP_BUILD:-}" ]; then
  bash deploy/install.sh
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent build
fi
exec node dist/deploy/local/launch.js "$@"
