#!/usr/bin/env bash
# The whole node stack on this machine, from a fresh checkout:
# Debian packages (deploy/install.sh), npm dependencies, build, containerd
# with the locally built images, nats-server and the seven services, with the
# example static pods of deploy/examples. Ctrl-C stops everything.
# Extra arguments go to the launcher (e.g. --pod-workers 3, --manifests DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install.sh
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
exec node dist/deploy/local/launch.js "$@"
