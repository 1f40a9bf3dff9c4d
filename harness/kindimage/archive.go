package kindimage

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// ociImage is a container image to preload into the node's containerd:
// layers (uncompressed tar files, base first) and the config the kubelet
// runs it with.
type ociImage struct {
	tags       []string // e.g. registry.k8s.io/kube-apiserver:v1.37.2
	layers     []string // paths of layer tar files
	entrypoint []string
	env        []string
}

// writeDockerArchive writes img in the `docker save` layout (manifest.json,
// a config JSON and one directory per layer), which `ctr images import`
// reads. Layer digests are computed from the files.
func writeDockerArchive(w io.Writer, img ociImage) error {
	tw := tar.NewWriter(w)
	var diffIDs, layerPaths []string
	for _, l := range img.layers {
		sum, size, err := fileSHA256(l)
		if err != nil {
			return err
		}
		diffIDs = append(diffIDs, "sha256:"+sum)
		p := sum + "/layer.tar"
		layerPaths = append(layerPaths, p)
		if err := addFile(tw, p, l, size); err != nil {
			return err
		}
	}
	config := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Env":        img.env,
			"Entrypoint": img.entrypoint,
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("encoding image config: %w", err)
	}
	cfgSum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	if err := addBytes(tw, cfgName, cfg); err != nil {
		return err
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": img.tags, "Layers": layerPaths}})
	if err != nil {
		return fmt.Errorf("encoding image manifest: %w", err)
	}
	if err := addBytes(tw, "manifest.json", manifest); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing image archive: %w", err)
	}
	return nil
}

// writeLayer writes a layer tar holding files (path in the image -> path on
// this machine), each executable, with their parent directories.
func writeLayer(path string, files map[string]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating layer %s: %w", path, err)
	}
	tw := tar.NewWriter(f)
	dirs := map[string]bool{}
	for _, dst := range sortedKeys(files) {
		for _, d := range parents(dst) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				f.Close()
				return fmt.Errorf("writing layer %s: %w", path, err)
			}
		}
		fi, err := os.Stat(files[dst])
		if err != nil {
			f.Close()
			return fmt.Errorf("writing layer %s: %w", path, err)
		}
		if err := addFileMode(tw, dst, files[dst], fi.Size(), 0o755); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing layer %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing layer %s: %w", path, err)
	}
	return nil
}

// parents lists the parent directories of a relative path, outermost first:
// "usr/local/bin/x" -> usr, usr/local, usr/local/bin.
func parents(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

func addFile(tw *tar.Writer, name, src string, size int64) error {
	return addFileMode(tw, name, src, size, 0o644)
}

func addFileMode(tw *tar.Writer, name, src string, size int64, mode int64) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", src, err)
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: size, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
		return fmt.Errorf("archiving %s: %w", src, err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("archiving %s: %w", src, err)
	}
	return nil
}

func addBytes(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
		return fmt.Errorf("archiving %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("archiving %s: %w", name, err)
	}
	return nil
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hashing %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
