package kindimage

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DebianSuite is the Debian release of the node's root file system.
const DebianSuite = "bookworm"

// debianPackages are kind v0.33.0's base image packages (its Dockerfile's
// clean-install line) that a one-node cluster uses, plus Debian's runc
// (kind builds its own) and dbus. Left out: nfs-common and open-iscsi
// (network storage tests), which pull in daemons the workbook never uses.
var debianPackages = []string{
	"systemd", "dbus",
	"conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount", "kmod",
	"libseccomp2", "pigz", "fuse-overlayfs",
	"e2fsprogs",
	"bash", "ca-certificates", "curl", "jq", "procps",
	"runc",
}

// ensureRootfs makes dir a Debian root file system with debootstrap, once.
func ensureRootfs(ctx context.Context, dir, mirror string, progress io.Writer) error {
	st := fmt.Sprintf("debootstrap --variant=minbase %s %s\n%s\n", DebianSuite, mirror, strings.Join(debianPackages, ","))
	if upToDate(dir, st, []string{"usr/lib/systemd/systemd"}) {
		return nil
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return fmt.Errorf("debootstrap is not installed (apt-get install debootstrap; scripts/docker-up.sh installs it): %w", err)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clearing %s: %w", tmp, err)
	}
	what := fmt.Sprintf("Debian %s root file system (debootstrap from %s)", DebianSuite, mirror)
	if err := runStep(ctx, progress, what, "", nil, "nice", "-n", "19", "debootstrap", "--variant=minbase",
		"--include="+strings.Join(debianPackages, ","), DebianSuite, tmp, mirror); err != nil {
		return err
	}
	// The apt lists and downloaded packages are of no use in the image.
	for _, junk := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		if err := clearDir(filepath.Join(tmp, junk)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(st), 0o644); err != nil {
		return fmt.Errorf("writing stamp: %w", err)
	}
	return replaceDir(tmp, dir)
}

// clearDir removes the regular files directly in dir (apt keeps its lock
// and partial/ directory there).
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "lock" {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("removing %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// tarDir writes dir's contents to a tar file (GNU tar keeps owners, modes,
// links and device files as they are).
func tarDir(ctx context.Context, dir, out string) error {
	cmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--exclude=./"+stampFile, "-C", dir, "-cf", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tar of %s: %v: %s", dir, err, lastLines(string(b), 10))
	}
	return nil
}

// copyTree copies kind's static node files (its base image's files/
// directory in the module cache) into root: scripts executable, the rest
// read-only data, as kind's Dockerfile COPY lines set them.
func copyTree(src, root string, skip map[string]bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() || skip[rel] {
			return nil
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(root, rel), data, mode)
	})
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	// The module cache is read-only, and so is what was copied before.
	_ = os.Remove(path)
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Chmod(path, mode)
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	return writeFile(dst, data, mode)
}

// nodeSetup is kind's base image Dockerfile's RUN steps, run in the node's
// root file system: trim systemd's units to what a node needs, keep
// journald off the kernel log, make systemd the init, enable the services.
const nodeSetup = `set -eu
find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
rm -f /lib/systemd/system/multi-user.target.wants/*
rm -f /etc/systemd/system/*.wants/*
rm -f /lib/systemd/system/local-fs.target.wants/*
rm -f /lib/systemd/system/sockets.target.wants/*udev*
rm -f /lib/systemd/system/sockets.target.wants/*initctl*
rm -f /lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service
systemctl mask systemd-binfmt.service
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /etc/cni/net.d
`
