package chartrepo

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// copyDir copies the folder from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// TestFolderFollowsItsCharts: a Folder serves what its folder holds now — a chart
// folder added with a new version is listed beside the old one, a chart that no
// longer loads is a 500 that says why, and fixing it serves the charts again — and
// looks at the folder at most once per folderCheckEvery.
func TestFolderFollowsItsCharts(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, filepath.Join(examples, "hello"), filepath.Join(dir, "hello"))
	f, err := NewFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	f.now = func() time.Time { return now }
	versions := func() ([]string, int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/index.yaml", nil))
		if rec.Code != http.StatusOK {
			return nil, rec.Code, rec.Body.String()
		}
		idx := &repo.IndexFile{}
		if err := yaml.Unmarshal(rec.Body.Bytes(), idx); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cv := range idx.Entries["hello"] {
			out = append(out, cv.Version)
		}
		return out, rec.Code, ""
	}
	if got, _, _ := versions(); !cmp.Equal(got, []string{"0.1.0"}) {
		t.Fatalf("versions at start %v, want [0.1.0]", got)
	}

	// Publish 0.2.0: a copy of the chart folder with its version changed.
	copyDir(t, filepath.Join(dir, "hello"), filepath.Join(dir, "hello-0.2.0"))
	chartYAML := filepath.Join(dir, "hello-0.2.0", "Chart.yaml")
	b, err := os.ReadFile(chartYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chartYAML, []byte(strings.Replace(string(b), "version: 0.1.0", "version: 0.2.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := versions(); !cmp.Equal(got, []string{"0.1.0"}) {
		t.Errorf("versions within folderCheckEvery of the last look %v, want [0.1.0]", got)
	}
	now = now.Add(folderCheckEvery)
	if got, _, _ := versions(); !cmp.Equal(got, []string{"0.2.0", "0.1.0"}) {
		t.Errorf("versions after publishing 0.2.0 %v, want [0.2.0 0.1.0]", got)
	}

	// Break it, then fix it.
	if err := os.WriteFile(chartYAML, []byte("apiVersion: v2\nname: hello\nversion: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now = now.Add(folderCheckEvery)
	if _, code, msg := versions(); code != http.StatusInternalServerError || !strings.Contains(msg, "hello-0.2.0") {
		t.Errorf("a chart that does not load: %d %q, want 500 naming the chart folder", code, msg)
	}
	if err := os.WriteFile(chartYAML, []byte(strings.Replace(string(b), "version: 0.1.0", "version: 0.2.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	now = now.Add(folderCheckEvery)
	if got, code, msg := versions(); !cmp.Equal(got, []string{"0.2.0", "0.1.0"}) {
		t.Errorf("versions after the fix %v (%d %s), want [0.2.0 0.1.0]", got, code, msg)
	}
}
