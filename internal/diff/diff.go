package diff

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/ssa/normalize"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// IgnoredMetadata are the metadata fields the API server maintains: every write
// changes them by itself, so they are never a change. status is ignored too.
var IgnoredMetadata = []string{
	"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink",
}

// Action is what an apply would do to an object.
type Action string

// Actions.
const (
	// Create: the object is not on the target; the apply creates it.
	Create Action = "Create"
	// Configure: the object exists and the apply would change Fields.
	Configure Action = "Configure"
	// Unchanged: the object exists and the apply would change nothing.
	Unchanged Action = "Unchanged"
	// Prune: the object is in the inventory, not in the render; a prune deletes
	// it. Check never returns it; the CLI and the UI use it for the prune list.
	Prune Action = "Prune"
)

// Result is what an apply would do to one object.
type Result struct {
	// Object names the object (the rendered object's apiVersion).
	Object v1.ObjectReference
	// Action is what the apply would do.
	Action Action
	// Fields are the changed field paths of a Configure, sorted (see Fields).
	Fields []string
	// Live is the live object, Comparable; nil when it is not on the target.
	Live *unstructured.Unstructured
	// Want is the result of the dry run, Comparable; nil when there was none
	// (a Create without Options.DryRunMissing, a Prune).
	Want *unstructured.Unstructured
	// LiveVersion is the live object's resourceVersion; empty when absent.
	LiveVersion string
	// LiveGeneration is the live object's metadata.generation; 0 when absent.
	LiveGeneration int64
	// LiveUID is the live object's uid; empty when absent.
	LiveUID string
	// Managers are the entries of metadata.managedFields in the dry run's answer
	// (who owns the object's fields once the apply is made), without their fields
	// (FieldsV1 is nil): the apply reads whether Helm's field managers own any; nil
	// without a dry run.
	Managers []metav1.ManagedFieldsEntry
}

// Options tune Check. The zero value is the drift check's: an object that is not
// on the target is a Create without a dry run (which would need the right to
// create it).
type Options struct {
	// DryRunMissing dry-runs the apply of an object that is not on the target as
	// well, so that Want shows what would be created and the server validates it
	// (the pre-apply dry run, `kubectl convoy release diff`).
	DryRunMissing bool
}

// Reference names u.
func Reference(u *unstructured.Unstructured) v1.ObjectReference {
	gvk := u.GroupVersionKind()
	return v1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Check compares obj with its live counterpart on target: one GET and, when the
// object exists (or opts.DryRunMissing), one server-side apply with dryRun=All by
// the field manager convoy, forcing conflicts, as convoy's apply does. obj is not
// modified. Errors are the API server's, unwrapped, so that callers can classify
// them (apierrors); a dry run that finds the object gone answers NotFound.
func Check(ctx context.Context, target client.Client, obj *unstructured.Unstructured, opts Options) (Result, error) {
	r := Result{Object: Reference(obj)}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := target.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		live = nil
	case err != nil:
		return r, err
	default:
		r.LiveVersion, r.LiveGeneration, r.LiveUID = live.GetResourceVersion(), live.GetGeneration(), string(live.GetUID())
	}
	if live == nil && !opts.DryRunMissing {
		r.Action = Create
		return r, nil
	}
	dryRun := obj.DeepCopy()
	if err := target.Apply(ctx, client.ApplyConfigurationFromUnstructured(dryRun),
		client.DryRunAll, client.ForceOwnership, client.FieldOwner(v1.FieldManager)); err != nil {
		return r, err
	}
	r.Managers = managers(dryRun)
	if r.Want, err = Comparable(dryRun); err != nil {
		return r, err
	}
	if live == nil || dryRun.GetResourceVersion() == "" {
		// Not there, or deleted since the read: the apply creates it.
		r.Action = Create
		return r, nil
	}
	if r.Live, err = Comparable(live); err != nil {
		return r, err
	}
	r.Fields = paths(r.Live, r.Want)
	r.Action = Unchanged
	if len(r.Fields) > 0 {
		r.Action = Configure
	}
	return r, nil
}

// managers are the entries of u's metadata.managedFields, without their fields, read
// from the map as it is (unstructured's GetManagedFields copies and converts each
// entry's fields).
func managers(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	md, _ := u.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	if len(entries) == 0 {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, metav1.ManagedFieldsEntry{Manager: str("manager"),
			Operation:  metav1.ManagedFieldsOperationType(str("operation")),
			APIVersion: str("apiVersion"), Subresource: str("subresource")})
	}
	return out
}

// Comparable is a copy of u as it is compared: without status and
// IgnoredMetadata, normalised as fluxcd/pkg/ssa normalises dry-run results
// (fixes for known API server quirks).
func Comparable(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	c := u.DeepCopy()
	delete(c.Object, "status")
	for _, f := range IgnoredMetadata {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	if err := normalize.DryRunUnstructured(c); err != nil {
		return nil, fmt.Errorf("normalise %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return c, nil
}

// Fields lists the field paths where dryRun (the result of a server-side apply
// dry run of the rendered object) differs from live: what convoy's apply would
// change. Both are made Comparable first. Paths are dotted (spec.replicas),
// with list indexes and map keys that contain a dot or a bracket in brackets
// (spec.template.spec.containers[0].image, metadata.labels[app.kubernetes.io/name]),
// sorted. A field present on one side only is reported at that field; a list of
// another length at the list. nil when either is nil.
func Fields(live, dryRun *unstructured.Unstructured) ([]string, error) {
	if live == nil || dryRun == nil {
		return nil, nil
	}
	a, err := Comparable(live)
	if err != nil {
		return nil, err
	}
	b, err := Comparable(dryRun)
	if err != nil {
		return nil, err
	}
	return paths(a, b), nil
}

func paths(a, b *unstructured.Unstructured) []string {
	var out []string
	walk("", a.Object, b.Object, &out)
	slices.Sort(out)
	return out
}

func walk(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			walk(join(path, k), x, y, out)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				*out = append(*out, join(path, k))
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*out = append(*out, path)
			return
		}
		for i := range av {
			walk(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
		}
	default:
		if !scalarEqual(a, b) {
			*out = append(*out, path)
		}
	}
}

// scalarEqual compares JSON scalars; numbers compare by value (int64 and float64).
func scalarEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func join(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
