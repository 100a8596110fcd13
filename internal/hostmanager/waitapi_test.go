package hostmanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/testenv"
)

// TestWaitForAPIWaitsUntilTheGroupIsServed: started while the API server does not serve a
// group, WaitForAPI returns once the group is served (here a CRD's, as convoy's appears
// through its APIService), not before, and without an error.
func TestWaitForAPIWaitsUntilTheGroupIsServed(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	const group, gv = "waitapi.convoy.kumodo.io", "waitapi.convoy.kumodo.io/v1"
	done := make(chan error, 1)
	go func() { done <- WaitForAPI(ctx, controlPlane.RestConfig(), gv, 45*time.Second, logr.Discard()) }()

	c, err := client.New(controlPlane.RestConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitForAPI returned (%v) before %s was served", err, gv)
	default:
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), crd) })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitForAPI: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("WaitForAPI did not return once the group was served")
	}
}

// TestWaitForAPIGivesUpWithAClearError: a group that is never served ends the wait at
// its timeout with an error naming the group and what to check.
func TestWaitForAPIGivesUpWithAClearError(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	err := WaitForAPI(ctx, controlPlane.RestConfig(), "never.convoy.kumodo.io/v1", 2*time.Second, logr.Discard())
	if err == nil {
		t.Fatal("no error for a group that is not served")
	}
	for _, want := range []string{"never.convoy.kumodo.io/v1 is not served", "after 2s", "APIService is Available"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
