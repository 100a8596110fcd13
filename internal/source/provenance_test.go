package source

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/reasons"
)

// A chart of an HTTP repository names its archive file; with verify.provider helm
// it reads <archive URL>.prov on demand only (not at the fetch): nothing on a 404,
// the file when the repository has it, SourceNotReady when the server fails.
func TestHelmProvenanceFetch(t *testing.T) {
	repo := newChartRepo(t).add("web", "1.0.0")
	f, err := New(Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := v1alpha1.ChartSource{Repository: repo.url(), Name: "web"}

	plain, err := f.Fetch(ctx, src, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.File != "web-1.0.0.tgz" || plain.Provenance != nil {
		t.Errorf("without verify: file %q, provenance reader %v; want web-1.0.0.tgz and none", plain.File, plain.Provenance != nil)
	}

	src.Verify = &v1alpha1.ChartVerify{Provider: v1alpha1.ChartVerifyHelm, SecretRef: &v1alpha1.LocalObjectReference{Name: "keys"}}
	c, err := f.Fetch(ctx, src, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	const provPath = "/charts/web-1.0.0.tgz.prov"
	if c.Provenance == nil {
		t.Fatal("with verify.provider helm: no provenance reader")
	}
	if n := repo.count(provPath); n != 0 {
		t.Errorf("the fetch read the .prov %d times, want 0: it is read on demand", n)
	}
	prov, err := c.Provenance(ctx)
	if err != nil || prov != nil {
		t.Errorf("no .prov: %q, %v; want nothing and no error", prov, err)
	}
	repo.addProvenance("web-1.0.0.tgz", []byte("signed"))
	prov, err = c.Provenance(ctx)
	if err != nil || string(prov) != "signed" {
		t.Errorf(".prov served: %q, %v; want its content", prov, err)
	}
	repo.FailWith(provPath, http.StatusInternalServerError)
	_, err = c.Provenance(ctx)
	if diff := cmp.Diff(v1alpha1.ReasonSourceNotReady, reasons.Of(err, "")); diff != "" {
		t.Errorf("server failing: reason (-want +got):\n%s\nerror: %v", diff, err)
	}
}
