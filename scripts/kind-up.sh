#!/usr/bin/env bash
# Create (or reuse) the kind cluster "gw10" and point kubectl at it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

preflight
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  echo "kind cluster $CLUSTER_NAME already exists; reusing it"
  kind export kubeconfig --name "$CLUSTER_NAME"
else
  kind create cluster --name "$CLUSTER_NAME" --config "$WORKBOOK/scripts/kind-config.yaml" --wait 2m
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
