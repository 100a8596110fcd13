// Package chartrepo serves a folder of Helm chart sources as a Helm HTTP chart
// repository: each chart is packaged with the Helm SDK, listed with its digest in
// an index.yaml built by Helm's repo package, and served over HTTP. `convoy dev`
// serves examples/charts/ with it; tests can serve their own charts the same way.
package chartrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// DefaultAddr is the address `convoy dev` serves its chart repository on.
const DefaultAddr = "127.0.0.1:8879"

// ErrAddrInUse is returned by Serve when another process listens on the address.
var ErrAddrInUse = errors.New("address already in use")

// Repository is a Helm chart repository held in memory: index.yaml and one
// archive per chart, <name>-<version>.tgz, at the repository's root.
type Repository struct {
	// Index is the repository's index; do not change it after Build.
	Index    *repo.IndexFile
	index    []byte
	archives map[string][]byte
}

// Build packages every chart source folder directly under dir (a folder with a
// Chart.yaml) and indexes the archives. Folders without Chart.yaml are skipped;
// a chart that does not load or package is an error naming it.
func Build(dir string) (*Repository, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chart repository: %w", err)
	}
	tmp, err := os.MkdirTemp("", "convoy-chartrepo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	r := &Repository{Index: repo.NewIndexFile(), archives: map[string][]byte{}}
	for _, e := range entries {
		src := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(src, "Chart.yaml")); err != nil {
			continue
		}
		c, err := loader.LoadDir(src)
		if err != nil {
			return nil, fmt.Errorf("chart repository: load chart %s: %w", src, err)
		}
		path, err := chartutil.Save(c, tmp)
		if err != nil {
			return nil, fmt.Errorf("chart repository: package chart %s: %w", src, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		file := filepath.Base(path)
		if _, dup := r.archives[file]; dup {
			return nil, fmt.Errorf("chart repository: two chart folders in %s package to %s", dir, file)
		}
		sum := sha256.Sum256(data)
		// No base URL: the archive is found next to index.yaml, whatever
		// address the repository is served on.
		if err := r.Index.MustAdd(c.Metadata, file, "", hex.EncodeToString(sum[:])); err != nil {
			return nil, fmt.Errorf("chart repository: index chart %s: %w", src, err)
		}
		r.archives[file] = data
	}
	r.Index.SortEntries()
	if r.index, err = yaml.Marshal(r.Index); err != nil {
		return nil, err
	}
	return r, nil
}

// Charts lists the archives the repository serves, sorted.
func (r *Repository) Charts() []string {
	out := make([]string, 0, len(r.archives))
	for f := range r.archives {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP answers GET (and HEAD) of /index.yaml and /<name>-<version>.tgz.
func (r *Repository) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(req.URL.Path, "/")
	switch {
	case p == "index.yaml":
		w.Header().Set("Content-Type", "application/x-yaml")
		_, _ = w.Write(r.index)
	case r.archives[p] != nil:
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(r.archives[p])
	default:
		http.NotFound(w, req)
	}
}

// Server is a Repository served over HTTP.
type Server struct {
	// URL is the repository's URL, for spec.chart.repository.
	URL  string
	srv  *http.Server
	done chan error
}

// Serve serves r (a Repository, or a Folder) on addr (host:port; port 0 picks a free
// one) until Close. When another process holds the address the error wraps
// ErrAddrInUse.
func Serve(addr string, r http.Handler) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("chart repository: listen on %s: %w", addr, ErrAddrInUse)
		}
		return nil, fmt.Errorf("chart repository: listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:  "http://" + l.Addr().String(),
		srv:  &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server and closes its connections.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}
