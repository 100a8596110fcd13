package apply

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/testenv"
)

// The performance goal of the applier (docs/performance.md): at most 12 API requests for the first
// apply of a 4-object Release, and no write when nothing changed.
func TestRequestsPerApply(t *testing.T) {
	e := integration(t)
	// A long-lived target client has discovered these kinds already.
	applier, counter := countedApplier(t, schema.GroupKind{Kind: "ServiceAccount"}, schema.GroupKind{Kind: "ConfigMap"},
		schema.GroupKind{Kind: "Service"}, schema.GroupKind{Group: "apps", Kind: "Deployment"})
	deployment := webDeployment(e.ns, "example.com/web:1")
	service := obj("v1", "Service", e.ns, "web")
	service.Object["spec"] = map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "selector": map[string]any{"app": "web"}}
	render := []Object{
		{Object: obj("v1", "ServiceAccount", e.ns, "web")},
		{Object: configMap(e.ns, "web", map[string]string{"k": "v"})},
		{Object: service},
		{Object: deployment},
	}
	applyOnce := func(applied []v1alpha1.InventoryObject) []Change {
		t.Helper()
		plan, err := applier.DryRun(e.ctx, render, nil, applied...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := applier.ApplyWave(e.ctx, plan, 0)
		if err != nil {
			t.Fatal(err)
		}
		return res.Changes
	}
	counter.Take()

	// The first apply: nothing in the inventory, so no GET.
	applyOnce(nil)
	if diff := cmp.Diff(map[string]int{"dry-run": 4, "write": 4}, counter.Take()); diff != "" {
		t.Errorf("requests of the first apply (-want +got):\n%s", diff)
	}
	// The next apply knows the objects: a GET and a dry run each, no write.
	changes := applyOnce(Entries(render))
	if diff := cmp.Diff(map[string]int{"read": 4, "dry-run": 4}, counter.Take()); diff != "" {
		t.Errorf("requests of an unchanged apply (-want +got):\n%s", diff)
	}
	for _, c := range changes {
		if c.Action != Unchanged {
			t.Errorf("unchanged apply: %s %s, want unchanged", Describe(c.Object), c.Action)
		}
	}
}

// An object that exists but that the inventory does not list (a lost
// inventory, or an object taken over) costs a dry run and an apply; the
// apply reports it unchanged when the server stored nothing, and configured
// when it changed it.
func TestApplyUnlistedExistingObject(t *testing.T) {
	e := integration(t)
	applier := New(e.client, Options{})
	cm := configMap(e.ns, "unlisted", map[string]string{"k": "v"})
	render := []Object{{Object: cm}}
	apply := func(o []Object) Action {
		t.Helper()
		plan, err := applier.DryRun(e.ctx, o, nil)
		return applyOnlyChange(t, e.ctx, applier, plan, err).Action
	}
	if got := apply(render); got != Created {
		t.Fatalf("first apply: %s, want created", got)
	}
	if got := apply(render); got != Unchanged {
		t.Errorf("apply of the same object, not in the inventory: %s, want unchanged", got)
	}
	changed := []Object{{Object: configMap(e.ns, "unlisted", map[string]string{"k": "w"})}}
	if got := apply(changed); got != Configured {
		t.Errorf("apply of a changed object, not in the inventory: %s, want configured", got)
	}
	live := &corev1.ConfigMap{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "unlisted"}, live); err != nil {
		t.Fatal(err)
	}
	if live.Data["k"] != "w" {
		t.Errorf("data after the apply: %v, want k=w", live.Data)
	}
}

// An apply without a dry run (a forced sync, SP-19: "skips the dry run"; or a later
// reconcile carrying a render on at its next sync wave) reads whether each object
// exists (metadata only) and applies it: no dry run, two requests per object. It
// reports what the apply did and the generation in the server's answer, which the
// ReleaseInventory records.
func TestAnApplyWithoutADryRunReadsAndAppliesEachObjectOnce(t *testing.T) {
	e := integration(t)
	applier, counter := countedApplier(t, schema.GroupKind{Group: "apps", Kind: "Deployment"})
	forced := func(d *unstructured.Unstructured) Change {
		t.Helper()
		plan, err := NewPlan([]Object{{Object: d}})
		return applyOnlyChange(t, e.ctx, applier, plan, err)
	}
	counter.Take()
	for _, step := range []struct {
		what       string
		image      string
		action     Action
		generation int64
	}{
		{"absent: created", "example.com/web:1", Created, 1},
		{"as rendered: unchanged", "example.com/web:1", Unchanged, 1},
		{"changed: configured", "example.com/web:2", Configured, 2},
	} {
		got := forced(webDeployment(e.ns, step.image))
		if got.Action != step.action || got.Generation != step.generation {
			t.Errorf("%s: %s at generation %d, want %s at generation %d", step.what, got.Action, got.Generation, step.action, step.generation)
		}
		if diff := cmp.Diff(map[string]int{"read": 1, "write": 1}, counter.Take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", step.what, diff)
		}
	}
}

// countedApplier is an Applier whose client counts its requests and has mapped kinds
// already (as a long-lived target client has).
func countedApplier(t *testing.T, kinds ...schema.GroupKind) (*Applier, *testenv.RequestCounter) {
	t.Helper()
	counter := &testenv.RequestCounter{}
	cfg := cluster.RestConfig()
	cfg.WrapTransport = counter.Wrap
	c := newClient(t, cfg)
	for _, gk := range kinds {
		if _, err := c.RESTMapper().RESTMapping(gk); err != nil {
			t.Fatal(err)
		}
	}
	return New(c, Options{}), counter
}

// applyOnlyChange applies wave 0 of plan (made with err) and returns its one change.
func applyOnlyChange(t *testing.T, ctx context.Context, a *Applier, plan *Plan, err error) Change {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.ApplyWave(ctx, plan, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 {
		t.Fatalf("changes: %v, want one", res.Changes)
	}
	return res.Changes[0]
}

// webDeployment is a Deployment "web" of ns, without replicas, running image.
func webDeployment(ns, image string) *unstructured.Unstructured {
	d := obj("apps/v1", "Deployment", ns, "web")
	d.Object["spec"] = map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
		},
	}
	return d
}

// SP-03 — seed: "In automatic mode, convoy applies the full render at each reconcile,
// also when nothing changed. This also corrects drift at each periodic reconcile."
// What an apply saw (Plan.Seen) spares the next dry run its GETs: an object seen as
// rendered, rendered the same and written by nobody since costs its dry run only
// (SP-03's apply at each reconcile, without the read that told a change). An object
// written since (a drift), or rendered otherwise, is read and compared as before, and
// the drift is applied away; an object deleted since is created again. The dry runs of
// objects seen and the applies after a dry run go without field validation (the same
// object was validated at its first dry run). (ConfigMaps: no controller writes them,
// so only the test's writes change them.)
func TestAnObjectSeenAsRenderedCostsOnlyItsDryRun(t *testing.T) {
	e := integration(t)
	applier, counter := countedApplier(t, schema.GroupKind{Kind: "ConfigMap"})
	render := func(b string) []Object {
		return []Object{
			{Object: configMap(e.ns, "a", map[string]string{"k": "v"})},
			{Object: configMap(e.ns, "b", map[string]string{"k": b})},
		}
	}
	var seen Seen
	applyOnce := func(objs []Object) map[string]Action {
		t.Helper()
		plan, err := applier.DryRun(e.ctx, objs, seen, Entries(objs)...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := applier.ApplyWave(e.ctx, plan, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen = plan.Seen()
		out := map[string]Action{}
		for _, c := range res.Changes {
			out[c.Object.Name] = c.Action
		}
		return out
	}
	step := func(what string, objs []Object, want map[string]Action, wantRequests, wantUnvalidated map[string]int) {
		t.Helper()
		counter.Take()
		counter.TakeUnvalidated()
		if diff := cmp.Diff(want, applyOnce(objs)); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(wantRequests, counter.Take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(wantUnvalidated, counter.TakeUnvalidated()); diff != "" {
			t.Errorf("%s: requests without field validation (-want +got):\n%s", what, diff)
		}
		if len(seen) != len(objs) {
			t.Errorf("%s: %d objects seen as rendered, want %d", what, len(seen), len(objs))
		}
	}

	step("the first apply", render("v"),
		map[string]Action{"a": Created, "b": Created}, map[string]int{"dry-run": 2, "read": 2, "write": 2},
		map[string]int{"write fieldValidation=Ignore": 2})
	step("unchanged, seen", render("v"),
		map[string]Action{"a": Unchanged, "b": Unchanged}, map[string]int{"dry-run": 2}, seenDryRuns(2))
	step("unchanged again", render("v"),
		map[string]Action{"a": Unchanged, "b": Unchanged}, map[string]int{"dry-run": 2}, seenDryRuns(2))

	// A drift: someone changes a.
	a := &corev1.ConfigMap{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "a"}, a); err != nil {
		t.Fatal(err)
	}
	a.Data["k"] = "drifted"
	if err := e.client.Update(e.ctx, a); err != nil {
		t.Fatal(err)
	}
	step("a drifted", render("v"),
		map[string]Action{"a": Configured, "b": Unchanged}, map[string]int{"dry-run": 2, "read": 1, "write": 1},
		map[string]int{"dry-run fieldValidation=Ignore": 2, "write fieldValidation=Ignore": 1})
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "a"}, a); err != nil {
		t.Fatal(err)
	}
	if a.Data["k"] != "v" {
		t.Errorf("the drift was not applied away: data %v", a.Data)
	}
	step("after the drift, seen again", render("v"),
		map[string]Action{"a": Unchanged, "b": Unchanged}, map[string]int{"dry-run": 2}, seenDryRuns(2))

	// A new render of b: read and compared, then applied.
	step("b rendered otherwise", render("w"),
		map[string]Action{"a": Unchanged, "b": Configured}, map[string]int{"dry-run": 2, "read": 1, "write": 1},
		map[string]int{"dry-run fieldValidation=Ignore": 1, "write fieldValidation=Ignore": 1})

	// Deleted since: the dry run answers without a resourceVersion; created again.
	if err := e.client.Delete(e.ctx, a); err != nil {
		t.Fatal(err)
	}
	step("a deleted", render("w"),
		map[string]Action{"a": Created, "b": Unchanged}, map[string]int{"dry-run": 2, "write": 1},
		map[string]int{"dry-run fieldValidation=Ignore": 2, "write fieldValidation=Ignore": 1})
}

// seenDryRuns is what n dry runs of objects seen as rendered ask of the server: no field
// validation (the same object was validated when first seen).
func seenDryRuns(n int) map[string]int {
	return map[string]int{"dry-run fieldValidation=Ignore": n}
}
