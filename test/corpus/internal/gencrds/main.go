// Command gencrds writes the large CustomResourceDefinitions of the corpus chart
// large-umbrella (its crds subchart's crds/ folder), as kube-prometheus-stack ships
// its operator's CRDs: schemas of hundreds of kilobytes, most of them descriptions,
// that only server-side apply can create (a client-side apply's last-applied
// annotation would exceed 256 KiB). Helm does not template crds/, so the files are
// generated here and committed; `go generate ./test/corpus` writes them again and
// TestLargeCRDsAreGenerated checks that they are current.
//
//	go run ./test/corpus/internal/gencrds -out test/corpus/charts/large-umbrella/charts/crds/crds
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"kumodo.io/convoy/test/corpus/internal/gencrds/crdgen"
)

func main() {
	out := flag.String("out", "", "folder to write the CRD files into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gencrds: -out is required")
		os.Exit(2)
	}
	for _, f := range crdgen.Files() {
		if err := os.WriteFile(filepath.Join(*out, f.Name), f.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gencrds:", err)
			os.Exit(1)
		}
	}
}
