// Package convoychart is convoy's own Helm chart for the tests of test/: loaded
// (hack/chart.Load) and rendered into objects, or the test fails.
package convoychart

import (
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/testenv"
)

// Load is convoy's chart, read by hack/chart.Load from the repository's root.
func Load(t testing.TB) *chartv2.Chart {
	t.Helper()
	c, err := chart.Load(testenv.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Render renders c (convoy's chart) with values into namespace and decodes the
// objects.
func Render(t testing.TB, c *chartv2.Chart, values map[string]any, namespace string) []*unstructured.Unstructured {
	t.Helper()
	files, err := chart.Render(c, values, namespace)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := chart.Objects(files)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
