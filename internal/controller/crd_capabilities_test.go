package controller

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Issue 31, point 5: a chart that ships CRDs is rendered once at its install. Its
// templates see the kinds of its crds/ as served (Helm installs crds/ before it renders
// the templates), so a .Capabilities.APIVersions.Has guard on its own kind is true in
// the first render, and the CRDs' arrival on the target after the first apply is no
// reason to render again: one render, the install hooks only, and a certificate of
// genCA that stays. The render then depends on what its templates asked of the
// target: an API version that no template asked about makes no new render, one that a
// template asked about does.
func TestAChartWithCRDsRendersOnceAtItsInstall(t *testing.T) {
	e := newEnv(t, envOptions{resync: time.Second})
	const crd = "things.guard.convoy.example.com"
	if e.crd(crd) != nil {
		t.Fatalf("CRD %s exists before the test", crd)
	}
	e.createRelease("guard", automatic(), interval(time.Second), testdataChart(t, "crd-guard"))
	first := e.waitApplied("guard", "True", v1.ReasonApplied).Status.Render.Ref
	if e.crd(crd) == nil {
		t.Fatalf("CRD %s was not applied", crd)
	}
	if e.object("guard.convoy.example.com/v1", "Thing", e.ns, "guard") == nil {
		t.Fatal("no Thing guard: the first render's Has guard on the chart's own kind was false")
	}
	e.eventually("the post-install hook", func() (bool, string) {
		return e.configMap("guard-installed") != nil, "no ConfigMap guard-installed"
	})
	ca := e.secret("guard-ca")
	if ca == nil || len(ca.Data["ca.crt"]) == 0 {
		t.Fatalf("Secret guard-ca %v, want a generated CA", ca)
	}

	stable := func(when string) {
		t.Helper()
		if got := e.release("guard").Status.Render.Ref; got != first {
			t.Errorf("%s: render %s, want %s still", when, got, first)
		}
		if names := e.renderNames("guard"); len(names) != 1 {
			t.Errorf("%s: Renders %v, want one", when, names)
		}
		if got := e.secret("guard-ca"); got == nil || !maps.EqualFunc(got.Data, ca.Data, slices.Equal) {
			t.Errorf("%s: the generated CA changed", when)
		}
		if e.configMap("guard-upgraded") != nil {
			t.Errorf("%s: the post-upgrade hook ran", when)
		}
	}
	e.waitReconciled("guard", e.reconciles("guard")+4)
	stable("after reconciles that see the chart's CRD served")

	// A CRD of a group that no template asked about.
	e.createCRD("unrelated.guard.convoy.example.com", "Unrelated")
	e.waitDiscovered("guard", "unrelated.guard.convoy.example.com/v1")
	stable("after an API version that no template asked about")

	// A CRD of the group version that a template asks about: a new render, an upgrade.
	e.createCRD("later.guard.convoy.example.com", "Later")
	e.waitDiscovered("guard", "later.guard.convoy.example.com/v1")
	e.waitConfigMap("guard-later", "served", "true")
	if got := e.release("guard").Status.Render.Ref; got == first {
		t.Errorf("render %s still after an API version that a template asked about", got)
	}
	if names := e.renderNames("guard"); len(names) != 2 {
		t.Errorf("Renders %v, want two", names)
	}
	e.eventually("the post-upgrade hook of the new render", func() (bool, string) {
		cm := e.configMap("guard-upgraded")
		return cm != nil && cm.Data["revision"] == "2", fmt.Sprintf("ConfigMap guard-upgraded %v", cm)
	})
}

// createCRD creates a namespaced CustomResourceDefinition of kind in group (version
// v1), deleted at the end of the test.
func (e *env) createCRD(group, kind string) {
	e.t.Helper()
	plural := strings.ToLower(kind) + "s"
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}},
			}},
		},
	}}
	if err := e.client.Create(e.ctx, crd); err != nil {
		e.t.Fatalf("create CRD %s: %v", crd.GetName(), err)
	}
	e.t.Cleanup(func() { _ = e.client.Delete(e.ctx, crd) })
}

// waitDiscovered waits until the controller renders the Release name with
// Capabilities that serve apiVersion (the target's discovery read again, as after its
// time to live), then for two reconciles more.
func (e *env) waitDiscovered(name, apiVersion string) {
	e.t.Helper()
	target, err := e.reconciler.clusters.Resolve(e.ctx, e.release(name))
	if err != nil {
		e.t.Fatal(err)
	}
	e.eventually("the controller's Capabilities to serve "+apiVersion, func() (bool, string) {
		disc, err := target.Discovery()
		if err != nil {
			return false, err.Error()
		}
		if !slices.Contains(e.reconciler.capabilities.of(target.Name, disc).APIVersions, apiVersion) {
			target.InvalidateDiscovery()
			return false, "not discovered yet"
		}
		return true, ""
	})
	// The reconciles after the next one render with that discovery.
	e.waitReconciled(name, e.reconciles(name)+3)
}
