package corpus

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kumodo.io/convoy/test/corpus/internal/gencrds/crdgen"
)

// The large CRDs of large-umbrella are what the generator writes (go generate
// ./test/corpus), and the largest passes 1 MB.
func TestLargeCRDsAreGenerated(t *testing.T) {
	dir := filepath.Join(Dir("large-umbrella"), "charts", "crds", "crds")
	largest := 0
	for _, f := range crdgen.Files() {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s is not what test/corpus/internal/gencrds writes: run go generate ./test/corpus", f.Name)
		}
		largest = max(largest, len(got))
	}
	if largest <= 1_000_000 {
		t.Errorf("the largest CRD has %d bytes, want more than 1 MB", largest)
	}
}
