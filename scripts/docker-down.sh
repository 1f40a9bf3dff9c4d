#!/usr/bin/env bash
# Stop the dockerd that scripts/docker-up.sh started (and only that one).
# Containers still running are stopped by dockerd on its way down.
set -euo pipefail

STATE="${GW10_DOCKER_STATE:-/var/tmp/gw10-docker}"
pidfile="$STATE/dockerd.pid"
if [ ! -s "$pidfile" ]; then
  echo "no dockerd started by docker-up.sh; nothing to stop"
  exit 0
fi
pid=$(cat "$pidfile")
if ! kill -0 "$pid" 2>/dev/null; then
  echo "dockerd (pid $pid) is not running"
  rm -f "$pidfile"
  exit 0
fi
kill -TERM "$pid"
for _ in $(seq 1 60); do
  kill -0 "$pid" 2>/dev/null || { echo "dockerd stopped"; exit 0; }
  sleep 1
done
echo "dockerd (pid $pid) did not stop within 60s" >&2
exit 1
