#!/usr/bin/env bash
# Start a Docker engine for kind on a machine that has none running: installs
# Debian's docker.io (and jq, debootstrap for make kind-image) with apt-get when
# missing, then runs dockerd in the background. Where the machine's capability
# bounding set is short (these VMs lack CAP_SYS_RESOURCE), privileged containers
# (kind's nodes) need scripts/runc-capfit as dockerd's default runtime; it is
# registered only there. Stop it with scripts/docker-down.sh.
#
# Nothing is pulled: the engine is configured with no registry mirrors and kind
# uses a node image built locally (make kind-image) where no registry answers.
set -euo pipefail

SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${GW10_DOCKER_STATE:-/var/tmp/gw10-docker}"
mkdir -p "$STATE"

if docker info >/dev/null 2>&1; then
  echo "a Docker engine is already running; using it"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "docker-up.sh starts dockerd itself and must run as root (or start Docker your usual way)" >&2
  exit 1
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v jq >/dev/null 2>&1 || need+=(jq)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >"$STATE/apt.log" 2>&1 ||
    { tail -20 "$STATE/apt.log" >&2; exit 1; }
fi

runtime_flags=()
bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
# CAP_SYS_RESOURCE is bit 24; any gap below CAP_CHECKPOINT_RESTORE (40) counts.
if (((bnd & ((1 << 41) - 1)) != (1 << 41) - 1)); then
  echo "this machine's capability bounding set is short ($(awk '/^CapBnd:/ {print $2}' /proc/self/status)): privileged containers run through scripts/runc-capfit"
  runtime_flags=(--add-runtime "capfit=$SCRIPTS/runc-capfit" --default-runtime capfit)
fi

echo "starting dockerd (log: $STATE/dockerd.log)"
# setsid: dockerd outlives this script and the shell that ran it.
setsid dockerd --pidfile "$STATE/dockerd.pid" "${runtime_flags[@]}" >"$STATE/dockerd.log" 2>&1 </dev/null &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd is running (pid $(cat "$STATE/dockerd.pid"))"
    exit 0
  fi
  sleep 1
done
echo "dockerd did not answer within 60s; its last log lines:" >&2
tail -20 "$STATE/dockerd.log" >&2
exit 1
