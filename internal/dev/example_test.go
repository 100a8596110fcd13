package dev

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func TestExampleUsage(t *testing.T) {
	ex := &ExampleRelease{Namespace: "demo", Name: "hello", Repository: "http://127.0.0.1:8879"}
	u := ex.usage()
	for _, want := range []string{
		"kubectl get releases -n demo",
		"kubectl create --raw /apis/convoy.kumodo.io/v1alpha1/namespaces/demo/releases/hello/sync -f /dev/null",
		"kubectl convoy release sync hello -n demo",
		"kubectl apply -f examples/release-automatic.yaml",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("usage lacks %q:\n%s", want, u)
		}
	}
	if strings.Contains(u, "set spec.chart.repository") {
		t.Errorf("usage asks to change the repository on the default address:\n%s", u)
	}
	ex.Repository = "http://127.0.0.1:4000"
	if u := ex.usage(); !strings.Contains(u, "set spec.chart.repository to http://127.0.0.1:4000") {
		t.Errorf("usage on another address does not say to change the repository:\n%s", u)
	}
	if (*ExampleRelease)(nil).usage() != "" {
		t.Error("usage without an example is not empty")
	}
}

// The shipped example is a Release with a namespace; a file that is not one is
// refused before anything is sent to the cluster.
func TestApplyExampleRefusesNonRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: demo}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ApplyExample(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, path, "")
	if err == nil || !strings.Contains(err.Error(), "is not a Release") {
		t.Fatalf("ApplyExample of a ConfigMap: %v", err)
	}
	_, err = ApplyExample(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, filepath.Join("..", "..", "examples", "missing.yaml"), "")
	if err == nil {
		t.Fatal("ApplyExample of a missing file: no error")
	}
}
