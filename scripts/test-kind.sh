#!/usr/bin/env bash
# The kind path, end to end (make test-kind): a Docker engine (started here
# and stopped at the end when none was running), the node image (kind's own,
# or the workbook's built locally where no registry serves it: a long first
# run), scripts/kind-up.sh, the solution installed and run by hand on that
# cluster, `make check CLUSTER=existing` on it and `make check CLUSTER=kind` on
# a cluster of the harness's own, then scripts/kind-down.sh, and nothing of
# kind's left behind. Timings go to stdout.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$WORKBOOK"

passed=0 failed=0
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "=== $name"
  if "$@"; then
    echo "--- PASS: $name ($((SECONDS - start))s)"
    passed=$((passed + 1))
  else
    echo "--- FAIL: $name ($((SECONDS - start))s)"
    failed=$((failed + 1))
    return 1
  fi
}

started_engine=false
controller_pid=""
finish() {
  [ -n "$controller_pid" ] && kill "$controller_pid" 2>/dev/null
  scripts/kind-down.sh >/dev/null 2>&1
  kind delete cluster --name gw10-check >/dev/null 2>&1
  $started_engine && scripts/docker-down.sh
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ] || exit 1
}
trap finish EXIT

if ! docker info >/dev/null 2>&1; then
  step "engine up" scripts/docker-up.sh || exit 1
  started_engine=true
fi
step "node image" gw10 kind-image --choose || exit 1
step "kind-up" scripts/kind-up.sh || exit 1
export KUBECONFIG="${KUBECONFIG:-$HOME/.kube/config}"

run_solution_by_hand() {
  (cd solutions/step01 && make install) || return 1
  # Built first and run as is: killing `go run` would leave the controller
  # running, and a second controller spoils the checks that follow.
  (cd solutions/step01 && go build -o bin/manager ./cmd) || return 1
  solutions/step01/bin/manager >/tmp/gw10-test-kind-controller.log 2>&1 &
  controller_pid=$!
  kubectl create namespace gw10-test-kind --dry-run=client -o yaml | kubectl apply -f - &&
    kubectl -n gw10-test-kind apply -f solutions/step01/config/samples/net_v1_edgeroute.yaml &&
    kubectl -n gw10-test-kind wait edgeroute --all --for=condition=Accepted=False --timeout=3m
  local rc=$?
  kill "$controller_pid" 2>/dev/null
  wait "$controller_pid" 2>/dev/null
  controller_pid=""
  kubectl delete namespace gw10-test-kind --wait=false >/dev/null 2>&1
  [ $rc = 0 ] || tail -20 /tmp/gw10-test-kind-controller.log
  return $rc
}
step "solution by hand (make install, make run, the sample gets a status)" run_solution_by_hand
step "make check CLUSTER=existing on kind-up's cluster" \
  make check CLUSTER=existing STEP=solutions/step01 CHECK_FLAGS="--context kind-$CLUSTER_NAME"
step "kind-down" scripts/kind-down.sh
step "make check CLUSTER=kind (a cluster of the harness's own)" make check CLUSTER=kind STEP=solutions/step01
leftovers() {
  local left
  left=$(docker ps -a --filter label=io.x-k8s.kind.cluster --format '{{.Names}}')
  [ -z "$left" ] || { echo "kind containers left behind: $left"; return 1; }
}
step "nothing of kind's left" leftovers
