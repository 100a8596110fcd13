package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"kumodo.io/convoy/test/corpus"
)

// chartRepo is a Helm HTTP repository served by the tests: index.yaml and the
// archives of testdata/charts and of the pattern corpus (test/corpus), packaged
// with the Helm SDK.
type chartRepo struct {
	server *httptest.Server

	mu       sync.Mutex
	index    []byte
	archives map[string][]byte
}

func newChartRepo() (*chartRepo, error) {
	r := &chartRepo{archives: map[string][]byte{}}
	dir, err := os.MkdirTemp("", "convoy-controller-charts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	index := repo.NewIndexFile()
	var dirs []string
	for _, name := range []string{"app", "hooks"} {
		dirs = append(dirs, filepath.Join("testdata", "charts", name))
	}
	patterns, err := corpus.Charts()
	if err != nil {
		return nil, err
	}
	for _, p := range patterns {
		dirs = append(dirs, corpus.Dir(p))
	}
	for _, d := range dirs {
		name := filepath.Base(d)
		c, err := loader.LoadDir(d)
		if err != nil {
			return nil, fmt.Errorf("load chart %s: %w", name, err)
		}
		path, err := chartutil.Save(c, dir)
		if err != nil {
			return nil, fmt.Errorf("package chart %s: %w", name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		file := filepath.Base(path)
		sum := sha256.Sum256(data)
		if err := index.MustAdd(c.Metadata, file, "charts", hex.EncodeToString(sum[:])); err != nil {
			return nil, err
		}
		r.archives[file] = data
	}
	if r.index, err = yaml.Marshal(index); err != nil {
		return nil, err
	}
	r.server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r, nil
}

// url is the repository's URL, for spec.chart.repository.
func (r *chartRepo) url() string { return r.server.URL }

func (r *chartRepo) close() { r.server.Close() }

func (r *chartRepo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case req.URL.Path == "/index.yaml":
		_, _ = w.Write(r.index)
	case strings.HasPrefix(req.URL.Path, "/charts/"):
		data, ok := r.archives[strings.TrimPrefix(req.URL.Path, "/charts/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(data)
	default:
		http.NotFound(w, req)
	}
}
