package apply

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// helmApply applies u as Helm 4 does: server-side apply by the field manager helm.
func (e *env) helmApply(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := e.client.Apply(e.ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
		t.Fatalf("helm's apply of %s: %v", describeObject(u), err)
	}
}

// applyKnown dry-runs objs with applied as the Release's inventory (and seen) and
// applies wave 0; it returns the plan.
func (e *env) applyKnown(t *testing.T, seen Seen, applied []v1alpha1.InventoryObject, objs ...Object) *Plan {
	t.Helper()
	plan, err := e.applier.DryRun(e.ctx, objs, seen, applied...)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	if _, err := e.applier.ApplyWave(e.ctx, plan, 0); err != nil {
		t.Fatalf("ApplyWave: %v", err)
	}
	return plan
}

// mustHaveTakenOver checks the live ConfigMap's data, that no entry of helm is left
// and that convoy owns data.a.
func (e *env) mustHaveTakenOver(t *testing.T, cm *unstructured.Unstructured, want map[string]any) {
	t.Helper()
	live, _ := e.get(t, cm)
	got, _, _ := unstructured.NestedMap(live.Object, "data")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data once convoy applied it without b (-want +got):\n%s", diff)
	}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == "helm" {
			t.Errorf("managedFields still has %s entry of helm", mf.Operation)
		}
	}
	if owner := fieldOwner(live, "f:data", "f:a"); owner != v1alpha1.FieldManager {
		t.Errorf("data.a is owned by %q, want %q", owner, v1alpha1.FieldManager)
	}
}

// An object `helm install` made with server-side apply (Helm 4): once convoy applied
// it, a key the chart drops goes from the object.
func TestTakeOverFieldsOfHelmServerSideApply(t *testing.T) {
	e := integration(t)
	both := configMap(e.ns, "helm-ssa", map[string]string{"a": "1", "b": "2"})
	e.helmApply(t, both)

	render := []Object{{Object: both}}
	e.applyKnown(t, nil, nil, render...) // the first apply: not in the inventory
	e.applyKnown(t, nil, Entries(render), Object{Object: configMap(e.ns, "helm-ssa", map[string]string{"a": "1"})})
	e.mustHaveTakenOver(t, both, map[string]any{"a": "1"})
}

// An object Helm 3 made and upgraded client-side (create, then a patch: Update
// entries of the field manager helm).
func TestTakeOverFieldsOfHelmClientSideApply(t *testing.T) {
	e := integration(t)
	both := configMap(e.ns, "helm-csa", map[string]string{"a": "1", "b": "2"})
	if err := e.client.Create(e.ctx, configMap(e.ns, "helm-csa", map[string]string{"a": "1"}), client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"b":"2"}}`))
	if err := e.client.Patch(e.ctx, configMap(e.ns, "helm-csa", nil), patch, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	live, _ := e.get(t, both)
	if got := managers(live); !cmp.Equal(got, []string{"helm/Update"}) {
		t.Fatalf("managers of Helm 3's object: %v, want helm/Update", got)
	}

	render := []Object{{Object: both}}
	e.applyKnown(t, nil, nil, render...)
	e.applyKnown(t, nil, Entries(render), Object{Object: configMap(e.ns, "helm-csa", map[string]string{"a": "1"})})
	e.mustHaveTakenOver(t, both, map[string]any{"a": "1"})
}

// A key Helm set and the Release's first render already lacks goes from the object
// at that first apply (the apply after the take-over), not one apply later: the
// object is as rendered once the apply that took it over returns, and a dry run of
// the same render finds it unchanged. Helm's own markers (the managed-by label, the
// release annotations) are such keys in every chart.
func TestTakeOverRemovesWhatTheFirstRenderLacks(t *testing.T) {
	e := integration(t)
	for _, c := range []struct {
		name string
		helm func(*unstructured.Unstructured)
	}{
		{"helm-ssa-lacks", func(u *unstructured.Unstructured) { e.helmApply(t, u) }},
		{"helm-csa-lacks", func(u *unstructured.Unstructured) {
			if err := e.client.Create(e.ctx, u.DeepCopy(), client.FieldOwner("helm")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		c.helm(configMap(e.ns, c.name, map[string]string{"a": "1", "b": "2"}))
		render := []Object{{Object: configMap(e.ns, c.name, map[string]string{"a": "1"})}}
		e.applyKnown(t, nil, nil, render...) // the first apply: not in the inventory
		e.mustHaveTakenOver(t, render[0].Object, map[string]any{"a": "1"})

		plan, err := e.applier.DryRun(e.ctx, render, nil, Entries(render)...)
		if err != nil {
			t.Fatal(err)
		}
		want := []Change{{Object: Entries(render)[0].ObjectReference, Action: Unchanged}}
		if diff := cmp.Diff(want, plan.Checked()); diff != "" {
			t.Errorf("%s: dry run of the same render after the take-over (-want +got):\n%s", c.name, diff)
		}
	}
}

// An object whose dry run finds it unchanged is still applied and taken over
// when the Release did not apply it before: here one seen by an earlier apply of the
// Release whose inventory was lost, which Helm applied again since, as rendered.
func TestTakeOverFieldsOfAnUnchangedObject(t *testing.T) {
	e := integration(t)
	both := configMap(e.ns, "helm-unchanged", map[string]string{"a": "1", "b": "2"})
	e.helmApply(t, both)
	render := []Object{{Object: both}}
	first := e.applyKnown(t, nil, nil, render...)
	e.helmApply(t, both)

	second := e.applyKnown(t, first.Seen(), nil, render...)
	if diff := cmp.Diff([]Change{{Object: Entries(render)[0].ObjectReference, Action: Unchanged}}, second.Checked()); diff != "" {
		t.Fatalf("dry run (-want +got):\n%s", diff)
	}
	e.applyKnown(t, nil, Entries(render), Object{Object: configMap(e.ns, "helm-unchanged", map[string]string{"a": "1"})})
	e.mustHaveTakenOver(t, both, map[string]any{"a": "1"})
}

// roundTripperFunc is an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// failingPatchApplier is an Applier whose JSON patches fail (the take-over's patch of
// metadata.managedFields), as when the API server restarts, or convoy is killed,
// between the apply and the patch.
func failingPatchApplier(t *testing.T) *Applier {
	t.Helper()
	cfg := cluster.RestConfig()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && r.Header.Get("Content-Type") == string(types.JSONPatchType) {
				return nil, errors.New("the test's connection reset")
			}
			return rt.RoundTrip(r)
		})
	}
	return New(newClient(t, cfg), Options{})
}

// A take-over cut short is made at the next apply, although the Release's inventory
// lists the object by then (the controller grows the inventory before it applies):
// what decides is whether Helm's managers still own fields of the object. Whether the
// patch failed after convoy's apply (the next dry run seen as rendered by that apply,
// or read after a restart), or convoy was killed before it applied the object at all,
// or the next sync is forced: a value the chart drops then goes from the object.
func TestTakeOverInterruptedIsMadeAtTheNextApply(t *testing.T) {
	e := integration(t)
	failing := failingPatchApplier(t)
	for _, c := range []struct {
		name string
		// cut applies render as far as the interrupted apply got; it returns what
		// that apply saw (nil: nothing).
		cut func(render []Object) Seen
		// forced: the next apply is a forced sync's (no dry run).
		forced bool
	}{
		{name: "helm-patch-failed", cut: func(render []Object) Seen {
			plan, err := failing.DryRun(e.ctx, render, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := failing.ApplyWave(e.ctx, plan, 0); err == nil || !strings.Contains(err.Error(), "take over the fields of Helm's field managers") {
				t.Fatalf("the apply with a failing patch: %v, want the take-over's failure", err)
			}
			return plan.Seen()
		}},
		{name: "helm-patch-failed-restart", cut: func(render []Object) Seen {
			plan, err := failing.DryRun(e.ctx, render, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := failing.ApplyWave(e.ctx, plan, 0); err == nil {
				t.Fatal("the apply with a failing patch got through")
			}
			return nil // a restart forgets what the apply saw
		}},
		{name: "helm-killed-before-apply", cut: func([]Object) Seen { return nil }},
		{name: "helm-forced", cut: func([]Object) Seen { return nil }, forced: true},
	} {
		both := configMap(e.ns, c.name, map[string]string{"a": "1", "b": "2"})
		e.helmApply(t, both)
		render := []Object{{Object: both}}
		seen := c.cut(render)

		inventory := Entries(render) // the inventory grown before the apply
		if c.forced {
			plan, err := NewPlan(render)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.applier.ApplyWave(e.ctx, plan, 0); err != nil {
				t.Fatalf("%s: forced apply: %v", c.name, err)
			}
		} else {
			e.applyKnown(t, seen, inventory, render...)
		}
		e.applyKnown(t, nil, inventory, Object{Object: configMap(e.ns, c.name, map[string]string{"a": "1"})})
		t.Run(c.name, func(t *testing.T) { e.mustHaveTakenOver(t, both, map[string]any{"a": "1"}) })
	}
}

// The take-over costs one patch, at the apply of an object Helm's managers own fields
// of, whether the inventory lists it or not; an object without them, or one taken
// over, costs nothing more.
func TestTakeOverCostsOnePatchOnlyWhenHelmOwnsFields(t *testing.T) {
	e := integration(t)
	applier, counter := countedApplier(t, schema.GroupKind{Kind: "ConfigMap"})
	helms := configMap(e.ns, "helms", map[string]string{"a": "1"})
	others := configMap(e.ns, "others", map[string]string{"a": "1"})
	helmsAgain := configMap(e.ns, "helms-again", map[string]string{"a": "1"})
	e.helmApply(t, helms)
	e.helmApply(t, helmsAgain)
	if err := e.client.Apply(e.ctx, client.ApplyConfigurationFromUnstructured(others.DeepCopy()), client.FieldOwner("helm-controller")); err != nil {
		t.Fatal(err)
	}
	apply := func(o *unstructured.Unstructured, applied ...v1alpha1.InventoryObject) string {
		t.Helper()
		plan, err := applier.DryRun(e.ctx, []Object{{Object: o}}, nil, applied...)
		applyOnlyChange(t, e.ctx, applier, plan, err)
		live, _ := e.get(t, o)
		return live.GetResourceVersion()
	}
	counter.Take()
	for _, step := range []struct {
		what     string
		object   *unstructured.Unstructured
		known    bool
		requests map[string]int
	}{
		{"Helm's, listed before its first apply", helms, true, map[string]int{"read": 1, "dry-run": 1, "write": 2}},
		{"Helm's, taken over, listed", helms, true, map[string]int{"read": 1, "dry-run": 1}},
		{"Helm's again, first apply", helmsAgain, false, map[string]int{"dry-run": 1, "write": 2}},
		{"helm-controller's, first apply", others, false, map[string]int{"dry-run": 1, "write": 1}},
	} {
		var applied []v1alpha1.InventoryObject
		if step.known {
			applied = Entries([]Object{{Object: step.object}})
		}
		before, _ := e.get(t, step.object)
		after := apply(step.object, applied...)
		if diff := cmp.Diff(step.requests, counter.Take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", step.what, diff)
		}
		if step.requests["write"] == 0 && after != before.GetResourceVersion() {
			t.Errorf("%s: resourceVersion %s after an unchanged apply, want %s", step.what, after, before.GetResourceVersion())
		}
	}
	live, _ := e.get(t, others)
	if got := managers(live); !cmp.Equal(got, []string{"convoy/Apply", "helm-controller/Apply"}) {
		t.Errorf("managers of an object helm-controller applied: %v, want convoy's and helm-controller's", got)
	}
}

// managers lists the manager/operation of u's managedFields entries, sorted.
func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, mf := range u.GetManagedFields() {
		out = append(out, mf.Manager+"/"+string(mf.Operation))
	}
	slices.Sort(out)
	return out
}

// TestTakeOverPatch checks which entries move to convoy's Apply entry, and whether
// Helm's own fields convoy's entry lacks.
func TestTakeOverPatch(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}, Subresource: subresource}
	}
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for name, tc := range map[string]struct {
		managed []metav1.ManagedFieldsEntry
		want    string // the patch; "" for none
		// lacks: helm owns fields convoy's Apply entry does not (an apply again).
		lacks bool
	}{
		"convoy's only": {
			managed: []metav1.ManagedFieldsEntry{entry("convoy", apply, "", `{"f:data":{"f:a":{}}}`)},
		},
		"other managers": {
			managed: []metav1.ManagedFieldsEntry{
				entry("helm-controller", apply, "", `{"f:data":{"f:a":{}}}`),
				entry("kubectl", update, "", `{"f:data":{"f:b":{}}}`),
				entry("helm", update, "status", `{"f:status":{}}`),
			},
		},
		"helm's apply merged into convoy's": {
			managed: []metav1.ManagedFieldsEntry{
				entry("helm", apply, "", `{"f:data":{"f:b":{}}}`),
				entry("convoy", apply, "", `{"f:data":{"f:a":{}}}`),
			},
			want:  `[{"op":"replace","path":"/metadata/managedFields","value":[{"manager":"convoy","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}]}]`,
			lacks: true,
		},
		"helm's fields all convoy's too": {
			managed: []metav1.ManagedFieldsEntry{
				entry("helm", update, "", `{"f:data":{"f:a":{}}}`),
				entry("convoy", apply, "", `{"f:data":{"f:a":{},"f:b":{}}}`),
			},
			want: `[{"op":"replace","path":"/metadata/managedFields","value":[{"manager":"convoy","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}]}]`,
		},
		"helm's update made convoy's": {
			managed: []metav1.ManagedFieldsEntry{
				entry("kubectl", update, "", `{"f:data":{"f:c":{}}}`),
				entry("helm", update, "", `{"f:data":{"f:a":{}}}`),
			},
			want:  `[{"op":"replace","path":"/metadata/managedFields","value":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:c":{}}}},{"manager":"convoy","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]}]`,
			lacks: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, lacks, err := takeOverPatch(tc.managed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			if lacks != tc.lacks {
				t.Errorf("helm owns fields convoy's entry does not: %v, want %v", lacks, tc.lacks)
			}
		})
	}
}

// TestHelmManages reads whether an answer lists an entry of HelmFieldManagers.
func TestHelmManages(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  string
		want bool
		err  bool
	}{
		"no managedFields":               {raw: `{"metadata":{"name":"web"}}`},
		"convoy's only":                  {raw: `{"metadata":{"managedFields":[{"manager":"convoy","operation":"Apply","fieldsV1":{"f:data":{}}}]}}`},
		"helm's apply":                   {raw: `{"metadata":{"managedFields":[{"manager":"convoy","operation":"Apply"},{"manager":"helm","operation":"Apply","fieldsV1":{"f:data":{}}}]}}`, want: true},
		"helm's update":                  {raw: `{"metadata":{"managedFields":[{"manager":"helm","operation":"Update","fieldsV1":{"f:data":{}}}]}}`, want: true},
		"helm's status":                  {raw: `{"metadata":{"managedFields":[{"manager":"helm","operation":"Update","subresource":"status"}]}}`},
		"helm-controller's":              {raw: `{"metadata":{"managedFields":[{"manager":"helm-controller","operation":"Apply"}]}}`},
		"helm as a value, not a manager": {raw: `{"metadata":{"labels":{"tool":"helm"},"managedFields":[{"manager":"convoy","operation":"Apply"}]}}`},
		// Not decoded without the string "helm"; an answer that has it is.
		"not JSON, without helm": {raw: `{"metadata":`},
		"not JSON, with helm":    {raw: `{"metadata":{"managedFields":[{"manager":"helm"`, err: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := helmManages([]byte(tc.raw))
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("helmManages: %v, want %v", got, tc.want)
			}
		})
	}
}
