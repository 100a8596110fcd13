package testenv

import (
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/hack/chart"
	"kumodo.io/convoy/internal/localcluster"
)

// RepoRoot is the root of the repository (localcluster.RepoRoot), or fails t.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := localcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// FreePort is a free loopback port (localcluster.FreePort), or fails t.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// ConvoyChart is convoy's own Helm chart, read by hack/chart.Load, or fails t.
func ConvoyChart(t testing.TB) *chartv2.Chart {
	t.Helper()
	c, err := chart.Load(RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RenderChart renders c (convoy's chart) with values into namespace and decodes the
// objects, or fails t.
func RenderChart(t testing.TB, c *chartv2.Chart, values map[string]any, namespace string) []*unstructured.Unstructured {
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
