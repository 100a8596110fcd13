// Command gen-deploy writes the manifests of deploy/ from the Helm chart
// charts/convoy (one source of truth): each template of the chart, rendered with
// its default values in convoy-system, becomes the file of the same name under
// deploy/. The kustomization.yaml files, deploy/apiserver/namespace.yaml and
// deploy/krew are written by hand. make generate runs it; test/ship fails when
// deploy/ is stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/localcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hack/gen-deploy:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := localcluster.RepoRoot()
	if err != nil {
		return err
	}
	c, err := chart.Load(root)
	if err != nil {
		return err
	}
	files, err := chart.Deploy(c)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(root, "deploy", f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d files of deploy/ from %s\n", len(files), chart.Dir)
	return nil
}
