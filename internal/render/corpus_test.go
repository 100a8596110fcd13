package render

import (
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/internal/render/charttest"
	"kumodo.io/convoy/test/corpus"
)

// corpusArchive packages the corpus chart of pattern (test/corpus/charts/<pattern>)
// with the Helm SDK, after the edits.
func corpusArchive(t testing.TB, pattern string, edits ...func(*chart.Chart)) []byte {
	t.Helper()
	return charttest.Package(t, corpus.Dir(pattern), edits...)
}

// corpusRepo serves the corpus charts of the patterns, at the versions of their
// Chart.yaml.
func corpusRepo(t testing.TB, patterns ...string) *chartRepo {
	t.Helper()
	r := newChartRepo(t)
	for _, p := range patterns {
		r.AddArchive(corpusArchive(t, p))
	}
	return r
}

// unstructuredSlice reads a list field of an object.
func unstructuredSlice(o Object, fields ...string) ([]any, bool, error) {
	return unstructured.NestedSlice(o.Object, fields...)
}
