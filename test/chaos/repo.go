package chaos

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmrepo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/internal/render/chartrepo"
)

// repoMode is how the chart repository answers for now.
type repoMode int

const (
	repoOK repoMode = iota
	// repo5xx answers 503 to every request.
	repo5xx
	// repoTruncated sends half of each chart archive, then closes the response.
	repoTruncated
)

func (m repoMode) String() string {
	return [...]string{"ok", "5xx", "truncated-archives"}[m]
}

// flakyRepo serves the harness's charts (testdata/charts, packaged by chartrepo) over
// HTTP, answering as its mode says, and the chart versions published during the run
// (publish); it counts the requests it served.
type flakyRepo struct {
	repo *chartrepo.Repository
	l    net.Listener
	srv  *http.Server
	log  *eventLog

	mu       sync.Mutex
	mode     repoMode
	requests int
	// published are the archives publish added, by file name; index lists them with
	// the built ones (nil until the first publish: the built index is served).
	published map[string][]byte
	index     *helmrepo.IndexFile
	indexYAML []byte
}

func newFlakyRepo(dir string, log *eventLog) (*flakyRepo, error) {
	repo, err := chartrepo.Build(dir)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &flakyRepo{repo: repo, l: l, log: log}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *flakyRepo) addr() string { return r.l.Addr().String() }

func (r *flakyRepo) setMode(m repoMode) {
	r.mu.Lock()
	r.mode = m
	r.mu.Unlock()
}

func (r *flakyRepo) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	mode := r.mode
	r.requests++
	r.mu.Unlock()
	switch {
	case mode == repo5xx:
		http.Error(w, "chaos: the chart repository is failing", http.StatusServiceUnavailable)
	case mode == repoTruncated && strings.HasSuffix(req.URL.Path, ".tgz"):
		rec := &bufferedResponse{header: http.Header{}}
		r.serve(rec, req)
		half := rec.body[:len(rec.body)/2]
		// A complete response of a cut archive: only its digest (and gzip) can tell.
		w.Header().Set("Content-Type", "application/gzip")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(half)
	default:
		r.serve(w, req)
	}
}

// serve answers as the repository does, with the versions published so far.
func (r *flakyRepo) serve(w http.ResponseWriter, req *http.Request) {
	p := strings.TrimPrefix(req.URL.Path, "/")
	r.mu.Lock()
	index, archive := r.indexYAML, r.published[p]
	r.mu.Unlock()
	switch {
	case req.Method != http.MethodGet && req.Method != http.MethodHead:
		r.repo.ServeHTTP(w, req)
	case p == "index.yaml" && index != nil:
		w.Header().Set("Content-Type", "application/x-yaml")
		_, _ = w.Write(index)
	case archive != nil:
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(archive)
	default:
		r.repo.ServeHTTP(w, req)
	}
}

// publish packages the chart source folder src as version (the Helm SDK, as chartrepo
// packages the built ones) and serves it from now on: the index lists it beside the
// others, as a chart repository does once a new version is pushed. It returns the
// archive's name.
func (r *flakyRepo) publish(src, version, description string) (string, error) {
	c, err := loader.LoadDir(src)
	if err != nil {
		return "", fmt.Errorf("load chart %s: %w", src, err)
	}
	c.Metadata.Version, c.Metadata.Description = version, description
	tmp, err := os.MkdirTemp("", "convoy-chaos-publish-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	path, err := chartutil.Save(c, tmp)
	if err != nil {
		return "", fmt.Errorf("package chart %s as %s: %w", src, version, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	file := filepath.Base(path)
	sum := sha256.Sum256(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.index == nil {
		// A copy of the built index: chartrepo's must not change after Build.
		r.index = helmrepo.NewIndexFile()
		for name, versions := range r.repo.Index.Entries {
			r.index.Entries[name] = slices.Clone(versions)
		}
		r.published = map[string][]byte{}
	}
	if slices.Contains(r.repo.Charts(), file) || r.published[file] != nil {
		return "", fmt.Errorf("chart repository: %s is already published", file)
	}
	if err := r.index.MustAdd(c.Metadata, file, "", hex.EncodeToString(sum[:])); err != nil {
		return "", fmt.Errorf("index chart %s: %w", file, err)
	}
	r.index.SortEntries()
	index, err := yaml.Marshal(r.index)
	if err != nil {
		return "", err
	}
	r.published[file], r.indexYAML = data, index
	return file, nil
}

func (r *flakyRepo) close() {
	_ = r.srv.Close()
}

// bufferedResponse keeps what a handler writes.
type bufferedResponse struct {
	header http.Header
	code   int
	body   []byte
}

func (b *bufferedResponse) Header() http.Header { return b.header }
func (b *bufferedResponse) WriteHeader(code int) {
	b.code = code
}
func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.body = append(b.body, p...)
	return len(p), nil
}
