#!/usr/bin/env bash
# Delete the kind cluster "gw10", if there is one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

preflight
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  kind delete cluster --name "$CLUSTER_NAME"
  echo "kind cluster $CLUSTER_NAME deleted"
else
  echo "no kind cluster $CLUSTER_NAME; nothing to delete"
fi
