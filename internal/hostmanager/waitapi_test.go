package hostmanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/startup"
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
	go func() {
		done <- WaitForAPI(ctx, controlPlane.RestConfig(), gv, startup.Wait{Process: "the test", Timeout: 45 * time.Second, Log: logr.Discard()})
	}()

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
	err := WaitForAPI(ctx, controlPlane.RestConfig(), "never.convoy.kumodo.io/v1", startup.Wait{Process: "the test", Timeout: 2 * time.Second, Log: logr.Discard()})
	if err == nil {
		t.Fatal("no error for a group that is not served")
	}
	for _, want := range []string{"the test gave up after 2s (--startup-timeout) waiting for never.convoy.kumodo.io/v1 to be served by " + controlPlane.Host(),
		"APIService is Available", "never.convoy.kumodo.io/v1 is not served: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A run of successes counts once it has lasted stableFor without a failure; a failure
// starts it again.
func TestStreakNeedsSuccessesForStableForWithoutAFailure(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type obs struct {
		ok   bool
		ms   int
		want bool
	}
	for _, tc := range []struct {
		name string
		obs  []obs
	}{
		{name: "served from the start", obs: []obs{{true, 0, false}, {true, 1000, false}, {true, 2000, true}}},
		{name: "a failure within the run starts it again", obs: []obs{{true, 0, false}, {true, 1500, false}, {false, 1750, false}, {true, 2000, false}, {true, 3750, false}, {true, 4000, true}}},
		{name: "never served", obs: []obs{{false, 0, false}, {false, 5000, false}}},
		{name: "served late", obs: []obs{{false, 0, false}, {true, 250, false}, {true, 2250, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s streak
			for _, o := range tc.obs {
				if got := s.observe(o.ok, at(o.ms), 2*time.Second); got != o.want {
					t.Errorf("observe(%v) at %d ms = %v, want %v", o.ok, o.ms, got, o.want)
				}
			}
		})
	}
}
