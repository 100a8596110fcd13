package controller

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/render"
	"kumodo.io/convoy/internal/store"
)

// Decision 0157: a chart that ships CRDs is rendered once at its install. Its
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

// A Render made by a convoy whose inputs held the target's whole list of API versions
// (inputs format 1) stays the Release's render after convoy's upgrade while the target
// is the same: no new render, its random values kept; the Render records the inputs of
// today's convoy, with the whole list as what it depends on.
func TestARenderOfAnEarlierConvoyIsKept(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.createRelease("db", chartName("generated"), automatic())
	rel := e.waitApplied("db", "True", v1.ReasonApplied)
	first := rel.Status.Render.Ref
	secret := e.secret("db-generated")
	e.settle("db")

	// What the earlier convoy recorded on the install render: the legacy digest.
	target, err := e.reconciler.clusters.Resolve(e.ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := target.Discovery()
	if err != nil {
		t.Fatal(err)
	}
	chart, err := e.reconciler.source.Fetch(e.ctx, rel.Spec.Chart, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := render.Prepare(e.ctx, render.Request{
		Release: rel, Chart: renderChart(chart), Capabilities: e.reconciler.capabilities.of(target.Name, disc), IsUpgrade: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	key := prepared.Key
	legacy, _, err := key.Legacy()
	if err != nil {
		t.Fatal(err)
	}
	obj := &v1.Render{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: v1.RenderRef(first).RenderName("db")}, obj); err != nil {
		t.Fatal(err)
	}
	if got := obj.Annotations[v1.AnnotationInputs]; got != key.InstallInputs {
		t.Fatalf("the install Render records inputs %s, want %s", got, key.InstallInputs)
	}
	old := obj.DeepCopy()
	obj.Annotations[v1.AnnotationInputs] = legacy.InstallInputs
	obj.Labels[v1.LabelInputs] = render.InputsLabel(legacy.InstallInputs)
	delete(obj.Annotations, v1.AnnotationCapabilities)
	if err := e.client.Patch(e.ctx, obj, client.MergeFrom(old)); err != nil {
		t.Fatal(err)
	}
	e.eventually("the controller's cache to see the legacy inputs", func() (bool, string) {
		meta := store.RenderMetadata()
		if err := e.reconciler.client.Get(e.ctx, client.ObjectKeyFromObject(obj), meta); err != nil {
			return false, err.Error()
		}
		return meta.Annotations[v1.AnnotationInputs] == legacy.InstallInputs, "inputs " + meta.Annotations[v1.AnnotationInputs]
	})
	e.reconciler.renders.forget(releaseKey(rel)) // a new controller process

	n := e.reconciles("db")
	e.sync("db", false)
	e.waitReconciled("db", n)
	e.settle("db")
	if got := e.release("db").Status.Render.Ref; got != first {
		t.Errorf("render %s after the upgrade of convoy, want %s still", got, first)
	}
	if names := e.renderNames("db"); len(names) != 1 {
		t.Errorf("Renders %v, want one", names)
	}
	if got := e.secret("db-generated"); got == nil || !maps.EqualFunc(got.Data, secret.Data, slices.Equal) {
		t.Error("the generated Secret changed")
	}
	if err := e.client.Get(e.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if got := obj.Annotations[v1.AnnotationInputs]; got != key.InstallInputs {
		t.Errorf("the Render records inputs %s, want today's %s", got, key.InstallInputs)
	}
	if got := obj.Annotations[v1.AnnotationCapabilities]; !strings.Contains(got, `"allAPIVersions"`) {
		t.Errorf("the Render records capabilities %q, want the whole list of API versions", got)
	}
}
