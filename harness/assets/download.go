package assets

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/remote"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/store"
)

// downloadTimeout bounds the whole download attempt: where the index cannot
// be reached the build takes over, so waiting long here only delays it.
const downloadTimeout = 3 * time.Minute

// download fetches the item from setup-envtest's index, exactly as
// `setup-envtest use` does, and adds it to the store.
func download(ctx context.Context, st *store.Store, item store.Item, indexURL string) error {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	client := &remote.HTTPClient{Log: logr.Discard(), IndexURL: indexURL}
	if indexURL == "" {
		client.IndexURL = remote.DefaultIndexURL
	}
	sets, err := client.ListVersions(ctx)
	if err != nil {
		return fmt.Errorf("listing versions: %w", err)
	}
	for _, set := range sets {
		if set.Version != item.Version {
			continue
		}
		for _, p := range set.Platforms {
			if p.OS != item.Platform.OS || p.Arch != item.Platform.Arch {
				continue
			}
			var buf bytes.Buffer
			if err := client.GetVersion(ctx, set.Version, p, &buf); err != nil {
				return fmt.Errorf("downloading %s: %w", item, err)
			}
			if err := st.Add(ctx, item, &buf); err != nil {
				return fmt.Errorf("adding %s to the store: %w", item, err)
			}
			return nil
		}
	}
	return fmt.Errorf("the index has no %s", item)
}
