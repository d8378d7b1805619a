#!/usr/bin/env bash
# The local launcher's reaper: what stops the stack when the launcher itself
# dies without doing it (SIGKILL, a crash, an OOM kill). The launcher starts
# it first, in a session of its own (no terminal's or process group's signal
# reaches it), with a pipe on its stdin, and tells it what it starts, a line
# each:
#   service PGID   a service process (its own process group)
#   nats PGID      nats-server (its own process group)
#   gone PGID      that one has exited (its pid may be reused: forget it)
#   runtime        the launcher starts containerd (deploy/runtime.sh start)
#   credentials D  the run's NATS passwords, removed at the end
#   done           the launcher stopped everything itself: nothing to do
# End of file without "done" means the launcher is gone: the reaper does what
# the launcher's own stop does, in the same order: the services (SIGTERM,
# SIGKILL after 15 s), nats-server (5 s), then, if the launcher started it,
# containerd with every task in the k8s.io namespace (runtime.sh stop).
# Its output goes to $KS_RUNTIME_STATE/launcher-reaper.log (the launcher's
# own output may be what broke).
set -uo pipefail
trap '' INT HUP PIPE TERM

here=$(cd "$(dirname "$0")/../.." && pwd)
declare -A services=() nats=()
runtime=0
credentials=""
launcher=${1:-?}

while IFS=' ' read -r what arg; do
  case "$what" in
    service) services[$arg]=1 ;;
    nats) nats[$arg]=1 ;;
    gone) unset "services[$arg]" "nats[$arg]" ;;
    runtime) runtime=1 ;;
    credentials) credentials=$arg ;;
    done) exit 0 ;;
  esac
done

say() { echo "$(date -u +%FT%TZ) reaper: $*"; }
say "the launcher (pid $launcher) is gone without stopping the stack; stopping it"

# stop_groups GRACE_SECONDS PGID...: SIGTERM to each group, SIGKILL to those left after the grace.
stop_groups() {
  local grace=$1; shift
  [ $# -gt 0 ] || return 0
  local pg
  for pg in "$@"; do kill -TERM -- "-$pg" 2>/dev/null; done
  for _ in $(seq 1 $((grace * 10))); do
    local left=0
    for pg in "$@"; do kill -0 -- "-$pg" 2>/dev/null && left=1; done
    [ "$left" = 0 ] && return 0
    sleep 0.1
  done
  for pg in "$@"; do kill -KILL -- "-$pg" 2>/dev/null && say "process group $pg killed after ${grace}s"; done
  return 0
}

stop_groups 15 "${!services[@]}"
stop_groups 5 "${!nats[@]}"
[ -n "$credentials" ] && rm -rf -- "$credentials"
if [ "$runtime" = 1 ]; then
  say "stopping containerd (and every task in the k8s.io namespace)"
  bash "$here/deploy/runtime.sh" stop
fi
say "stopped"
