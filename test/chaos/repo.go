package chaos

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

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
// HTTP, answering as its mode says; it counts the requests it served.
type flakyRepo struct {
	repo *chartrepo.Repository
	l    net.Listener
	srv  *http.Server
	log  *eventLog

	mu       sync.Mutex
	mode     repoMode
	requests int
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
		r.repo.ServeHTTP(rec, req)
		half := rec.body[:len(rec.body)/2]
		// A complete response of a cut archive: only its digest (and gzip) can tell.
		w.Header().Set("Content-Type", "application/gzip")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(half)
	default:
		r.repo.ServeHTTP(w, req)
	}
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
