package charttest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kumodo.io/convoy/api/v1alpha1"
)

// Repo is a Helm HTTP repository served by a test: its index.yaml lists the archives
// added, under charts/<name>-<version>.tgz. It counts the requests of every path and
// can be told to fail a path or to put a wrong digest into its index.
type Repo struct {
	// Server serves the repository; a test may close it (a repository that is down)
	// or wrap its handler.
	Server *httptest.Server

	t        testing.TB
	pack     func(t testing.TB, name, version string) []byte
	mu       sync.Mutex
	archives map[string][]byte // file name -> archive
	index    *repo.IndexFile   // built by AddArchive
	requests map[string]int    // path -> count
	fail     map[string]int    // path -> HTTP status to answer instead
	digests  map[string]string // file name -> digest to put in the index instead
	provs    map[string][]byte // file name -> provenance file, served at <archive>.prov
}

// NewRepo serves an empty repository until the end of the test; pack makes the
// archives of Add.
func NewRepo(t testing.TB, pack func(t testing.TB, name, version string) []byte) *Repo {
	r := &Repo{
		t:        t,
		pack:     pack,
		archives: map[string][]byte{},
		index:    repo.NewIndexFile(),
		requests: map[string]int{},
		fail:     map[string]int{},
		digests:  map[string]string{},
		provs:    map[string][]byte{},
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Server.Close)
	return r
}

// Add lists the chart name at each version in the index (archives made by pack).
func (r *Repo) Add(name string, versions ...string) {
	r.t.Helper()
	for _, v := range versions {
		r.AddArchive(r.pack(r.t, name, v))
	}
}

// AddArchive lists a chart archive in the index under charts/<name>-<version>.tgz.
func (r *Repo) AddArchive(data []byte) {
	r.t.Helper()
	c, err := loader.LoadArchive(strings.NewReader(string(data)))
	if err != nil {
		r.t.Fatal(err)
	}
	file := fmt.Sprintf("%s-%s.tgz", c.Name(), c.Metadata.Version)
	sum := sha256.Sum256(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.archives[file] = data
	if err := r.index.MustAdd(c.Metadata, file, "charts", hex.EncodeToString(sum[:])); err != nil {
		r.t.Fatal(err)
	}
}

// URL is the repository's URL.
func (r *Repo) URL() string { return r.Server.URL }

// Count is the number of requests of path so far ("/index.yaml").
func (r *Repo) Count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

// FailWith answers the requests of path with status from now on.
func (r *Repo) FailWith(path string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[path] = status
}

// SetIndexDigest lists digest for the archive file in the index instead of its own;
// "" lists its own again.
func (r *Repo) SetIndexDigest(file, digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if digest == "" {
		delete(r.digests, file)
		return
	}
	r.digests[file] = digest
}

// AddProvenance serves prov as the provenance file of the archive file
// (charts/<file>.prov), as `helm package --sign` makes it.
func (r *Repo) AddProvenance(file string, prov []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.provs[file] = prov
}

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[req.URL.Path]++
	if status, ok := r.fail[req.URL.Path]; ok {
		http.Error(w, http.StatusText(status), status)
		return
	}
	switch {
	case req.URL.Path == "/index.yaml":
		idx := *r.index
		idx.Entries = map[string]repo.ChartVersions{}
		for name, cvs := range r.index.Entries {
			for _, cv := range cvs {
				c := *cv
				if d, ok := r.digests[filepath.Base(cv.URLs[0])]; ok {
					c.Digest = d
				}
				idx.Entries[name] = append(idx.Entries[name], &c)
			}
		}
		b, err := json.Marshal(idx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	case strings.HasPrefix(req.URL.Path, "/charts/") && strings.HasSuffix(req.URL.Path, ".prov"):
		b, ok := r.provs[strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, "/charts/"), ".prov")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(b)
	case strings.HasPrefix(req.URL.Path, "/charts/"):
		b, ok := r.archives[strings.TrimPrefix(req.URL.Path, "/charts/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(b)
	default:
		http.NotFound(w, req)
	}
}

// Release is a Release of the chart chartName of repository, named name in the
// namespace team-a (UID "uid-<name>"), into the namespace apps, changed by opts: the
// Release of the render and source tests.
func Release(name, repository, chartName string, opts ...func(*v1alpha1.Release)) *v1alpha1.Release {
	rel := &v1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID("uid-" + name)},
		Spec: v1alpha1.ReleaseSpec{
			TargetNamespace: "apps",
			Chart:           v1alpha1.ChartSource{Repository: repository, Name: chartName},
		},
	}
	for _, o := range opts {
		o(rel)
	}
	return rel
}
