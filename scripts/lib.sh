# Shared by kind-up.sh and kind-down.sh: find the workbook and a running
# container engine for kind.

WORKBOOK="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER_NAME="${GW10_KIND_CLUSTER:-gw10}"

# kind runs the pinned version from harness/go.mod: nothing is downloaded but
# the node image kind itself pulls.
kind() { (cd "$WORKBOOK" && go tool kind "$@"); }

# gw10 runs the workbook's harness (built and cached by the go command).
gw10() { (cd "$WORKBOOK" && go run ./harness/cmd/gw10 "$@"); }

# kind_config prints the path of a temporary copy of scripts/kind-config.yaml,
# with the kubelet patch that cgroup v1 hosts need (as the harness adds it).
kind_config() {
  local config
  config=$(mktemp "${TMPDIR:-/tmp}/gw10-kind-config.XXXXXX.yaml")
  cp "$WORKBOOK/scripts/kind-config.yaml" "$config"
  if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
    if grep -q '^kubeadmConfigPatches:' "$config"; then
      echo "scripts/kind-config.yaml has kubeadmConfigPatches of its own; add the failCgroupV1: false patch there" >&2
      exit 1
    fi
    cat >>"$config" <<'YAML'
# added by scripts/kind-up.sh: this host mounts cgroup v1, which kubelet 1.35+
# refuses unless told otherwise
kubeadmConfigPatches:
  - |
    apiVersion: kubelet.config.k8s.io/v1beta1
    kind: KubeletConfiguration
    failCgroupV1: false
YAML
  fi
  echo "$config"
}

# preflight exits non-zero with a clear message unless Docker or Podman is
# installed and its engine answers. It sets KIND_EXPERIMENTAL_PROVIDER for Podman.
preflight() {
  local found=""
  for engine in docker podman; do
    command -v "$engine" >/dev/null 2>&1 || continue
    found="$found $engine"
    if "$engine" info >/dev/null 2>&1; then
      [ "$engine" = podman ] && export KIND_EXPERIMENTAL_PROVIDER=podman
      return 0
    fi
  done
  if [ -z "$found" ]; then
    echo "kind needs a container engine, and neither Docker nor Podman is installed." >&2
  else
    echo "kind needs a running container engine:$found is installed but not running (\`${found# } info\` fails)." >&2
  fi
  echo "Start one, or use the workbook's envtest control plane instead: make cluster-up" >&2
  exit 1
}
