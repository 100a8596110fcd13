package chaos

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	helmrepo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// A chart version published at run time is listed in the index, with the digest of the
// archive served, beside the versions built at the start; the failing modes serve it
// as they serve the others.
func TestRepoPublish(t *testing.T) {
	r, err := newFlakyRepo(filepath.Join("testdata", "charts"), newEventLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get("http://" + r.addr() + "/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	versions := func() map[string]string {
		t.Helper()
		_, b := get("index.yaml")
		idx := &helmrepo.IndexFile{}
		if err := yaml.Unmarshal(b, idx); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, cv := range idx.Entries[chartName] {
			out[cv.Version] = cv.Digest
		}
		return out
	}
	before := versions()
	if _, ok := before[fleetPublished]; ok || len(before) != 3 {
		t.Fatalf("versions before the publish: %v", before)
	}
	file, err := r.publish(filepath.Join("testdata", "charts", chartName+"-"+versionB), fleetPublished, "published")
	if err != nil {
		t.Fatal(err)
	}
	after := versions()
	if len(after) != 4 || after[versionA] != before[versionA] || after[versionB] != before[versionB] {
		t.Fatalf("versions after the publish: %v (before %v)", after, before)
	}
	code, archive := get(file)
	sum := sha256.Sum256(archive)
	if code != http.StatusOK || hex.EncodeToString(sum[:]) != after[fleetPublished] {
		t.Fatalf("GET %s: %d, digest %x; the index says %s", file, code, sum, after[fleetPublished])
	}
	r.setMode(repoTruncated)
	if _, cut := get(file); len(cut) != len(archive)/2 {
		t.Errorf("truncated mode served %d bytes of the published archive's %d", len(cut), len(archive))
	}
	r.setMode(repoOK)
	if _, err := r.publish(filepath.Join("testdata", "charts", chartName+"-"+versionB), fleetPublished, "again"); err == nil {
		t.Error("publishing the same version twice: no error")
	}
}
