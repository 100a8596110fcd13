// Package corpus is the chart pattern corpus: one chart source folder per pattern
// that widely used charts rely on, under charts/<pattern>, each written for convoy's
// tests and modelled on how those charts do it (the description in each Chart.yaml
// names them). Tests package the folders with the Helm SDK (see
// internal/render/charttest); nothing here is copied from another project.
//
// A chart may hold ci/*-values.yaml files, as chart-testing (ct) expects: the
// values sets that tests render it with besides its defaults.
//
// A chart may hold generated files: the large CRDs of large-umbrella are written by
// internal/gencrds (go generate ./test/corpus) and committed.
//
// Only tests and benchmarks import this package.
package corpus

//go:generate go run ./internal/gencrds -out charts/large-umbrella/charts/crds/crds

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// root is the folder of this file, found at build time, so that the corpus is
// found from any package's tests.
var root = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("corpus: cannot tell where the corpus is")
	}
	return filepath.Dir(file)
}()

// Dir returns the source folder of the corpus chart of a pattern
// ("subchart-deps"). It does not check that the chart exists.
func Dir(pattern string) string {
	return filepath.Join(root, "charts", pattern)
}

// Charts lists the patterns of the corpus, sorted: every folder under charts/
// that holds a Chart.yaml.
func Charts() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "charts"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(Dir(e.Name()), "Chart.yaml")); err == nil {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// ValuesFiles lists the chart's ci/*-values.yaml files (full paths), sorted.
func ValuesFiles(pattern string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(Dir(pattern), "ci", "*-values.yaml"))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, strings.Compare)
	return files, nil
}
