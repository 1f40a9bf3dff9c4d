#!/usr/bin/env bash
# Create (or reuse) the kind cluster "gw10" and point kubectl at it.
#
# The node image is kind's own where the engine has it or a registry serves
# it; otherwise the workbook's, built locally from the Go module proxy and
# Debian packages (make kind-image; once). On cgroup v1 hosts the kubelet is
# told to accept cgroup v1 (failCgroupV1: false), which it refuses by default.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

preflight
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  echo "kind cluster $CLUSTER_NAME already exists; reusing it"
  kind export kubeconfig --name "$CLUSTER_NAME"
else
  image=$(gw10 kind-image --choose)
  config=$(kind_config)
  trap 'rm -f "$config"' EXIT
  echo "creating kind cluster $CLUSTER_NAME with node image $image"
  kind create cluster --name "$CLUSTER_NAME" --config "$config" --image "$image" --wait 5m
fi
cat <<MSG

kubectl context: kind-$CLUSTER_NAME
Next, in step01/ (or solutions/step01/):
  make install      # the CRD from your markers
  make run          # the controller, in a second shell
  kubectl apply -f config/samples/net_v1_edgeroute.yaml
Run the checks on it:  make check CLUSTER=existing
Delete it:             scripts/kind-down.sh
MSG
