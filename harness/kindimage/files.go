package kindimage

import (
	"encoding/json"
	"fmt"
)

// containerdConfig is the node's /etc/containerd/config.toml: kind's base
// image settings (version 2 format, which containerd 2.x still reads), with
// the sandbox image the node image preloads.
const containerdConfig = `# gw10 kind node image: containerd settings after kind v0.33.0's base image.
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  # the entrypoint rewrites this on file systems overlayfs cannot use
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:` + PauseVersion + `"
  tolerate_missing_hugepages_controller = true
  # Never below containerd's own oom_score_adj: lowering it needs
  # CAP_SYS_RESOURCE, which VMs like these lack (runc then fails with "can't
  # get final child's PID from pipe: EOF"). Where containerd runs at -999, as
  # its unit asks, this changes nothing for the pods' -997/-998.
  restrict_oom_score_adj = true
`

// PodSubnet is kind's default pod network; the controller manager gives the
// first (only) node its first /24.
const (
	PodSubnet  = "10.244.0.0/16"
	nodeSubnet = "10.244.0.0/24"
)

// cniConfig is a static CNI configuration in place of kindnetd, whose
// sources are not a Go module the proxy serves: the ptp plugin with
// host-local addresses from the node's pod range, as kindnetd writes it for a
// single node. It suits a one-node cluster (the workbook's).
var cniConfig = fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "gw10-ptp",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{"dst": "0.0.0.0/0"}],
        "ranges": [[{"subnet": %q}]]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, nodeSubnet)

// defaultCNIManifest is what kind applies as the cluster's CNI
// (/kind/manifests/default-cni.yaml): the network is the static
// configuration above, so the manifest only records that.
var defaultCNIManifest = fmt.Sprintf(`# gw10 kind node image: pod networking is a static CNI configuration on the
# node (/etc/cni/net.d/10-gw10-ptp.conflist: ptp + host-local, %s), not kindnetd.
apiVersion: v1
kind: ConfigMap
metadata:
  name: gw10-node-network
  namespace: kube-system
data:
  cni: /etc/cni/net.d/10-gw10-ptp.conflist
  podSubnet: %q
  note: one-node clusters only; kindnetd is not in this image
`, nodeSubnet, nodeSubnet)

// criBaseSpec turns `ctr oci spec` output into the node's cri-base.json, as
// kind's base image does: a createContainer hook that mounts the node's
// product files into each container, and no rlimits.
func criBaseSpec(spec []byte) ([]byte, error) {
	var s map[string]any
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, fmt.Errorf("reading ctr oci spec output: %w", err)
	}
	hooks, _ := s["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	create, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(create, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	s["hooks"] = hooks
	if p, ok := s["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding cri-base.json: %w", err)
	}
	return append(out, '\n'), nil
}
