package diff

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Applied lists the objects an apply of a render puts on the target, from the
// objects of its manifests (render.Decode's input; every object of a Render's
// canonical stream): the objects that are not chart hooks, then the chart hooks
// of run (Install for a Release that was never applied successfully, else
// Upgrade) that are not Jobs, as the apply applies them (with convoy's hook
// label). Hook Jobs are run, not applied, so they are left out; an object hook
// of both phases is listed once.
func Applied(manifests []*unstructured.Unstructured, owner hooks.Owner, run hooks.Run) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	var chart []hooks.Chart
	for _, u := range manifests {
		if c, ok, _ := hooks.Parse(u, Describe(Reference(u))); ok {
			chart = append(chart, c)
			continue
		}
		out = append(out, u)
	}
	hs, err := hooks.ForRun(owner, "", run, nil, chart)
	if err != nil {
		return nil, err
	}
	seen := map[v1.ObjectReference]bool{}
	for _, h := range hs {
		if h.IsJob() || h.Object == nil {
			continue
		}
		if ref := Reference(h.Object); !seen[ref] {
			seen[ref] = true
			out = append(out, h.Object)
		}
	}
	return out, nil
}

// Release compares each of objects with the target (Check with
// DryRunMissing, concurrency at a time) and, when prune is true, adds a Prune
// for each inventory object that the objects lack, is still on the target and
// is not annotated convoy.kumodo.io/prune: disabled. The results are in the
// order of objects, then of inventory; Unchanged objects are included. Every
// object is tried; the error names each one that could not be compared.
func Release(ctx context.Context, target client.Client, objects []*unstructured.Unstructured, inventory []v1.InventoryObject, prune bool, concurrency int) ([]Result, error) {
	if concurrency < 1 {
		concurrency = 4
	}
	results := make([]Result, len(objects))
	errs := make([]error, len(objects))
	in := map[string]bool{}
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i, obj := range objects {
		ref := Reference(obj)
		in[key(ref)] = true
		g.Go(func() error {
			r, err := Check(ctx, target, obj, Options{DryRunMissing: true})
			if err != nil {
				err = fmt.Errorf("dry-run apply of %s: %w", Describe(ref), err)
			}
			results[i], errs[i] = r, err
			return nil
		})
	}
	_ = g.Wait()
	var out []Result
	for i := range results {
		if errs[i] == nil {
			out = append(out, results[i])
		}
	}
	if prune {
		for _, e := range inventory {
			if in[key(e.ObjectReference)] {
				continue
			}
			live, err := get(ctx, target, e.ObjectReference)
			if err != nil {
				errs = append(errs, fmt.Errorf("read %s: %w", Describe(e.ObjectReference), err))
				continue
			}
			if live == nil || live.GetAnnotations()[v1.AnnotationPrune] == v1.PruneDisabled {
				continue
			}
			c, err := Comparable(live)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, Result{Object: e.ObjectReference, Action: Prune, Live: c, LiveVersion: live.GetResourceVersion()})
		}
	}
	return out, errors.Join(errs...)
}

// get reads an object; nil when it is gone (or its kind is no longer served).
func get(ctx context.Context, target client.Client, ref v1.ObjectReference) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind})
	err := target.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	return u, err
}

// key identifies an object across versions of its kind.
func key(r v1.ObjectReference) string {
	return strings.Join([]string{r.Group, r.Kind, r.Namespace, r.Name}, "/")
}

// Describe names an object for people: Kind namespace/name, or Kind name when
// cluster-scoped.
func Describe(r v1.ObjectReference) string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Between compares two renders' objects offline: for each object of to, Create
// when from lacks it, else Configure with the changed Fields or Unchanged; then a
// Prune for each object of from that to lacks. Live is from's object and Want
// to's, Comparable. No server is asked, so defaults the API server would fill
// in are not compared.
func Between(from, to []*unstructured.Unstructured) ([]Result, error) {
	old := map[string]*unstructured.Unstructured{}
	for _, u := range from {
		old[key(Reference(u))] = u
	}
	var out []Result
	seen := map[string]bool{}
	for _, u := range to {
		ref := Reference(u)
		seen[key(ref)] = true
		want, err := Comparable(u)
		if err != nil {
			return nil, err
		}
		r := Result{Object: ref, Want: want, Action: Create}
		if o := old[key(ref)]; o != nil {
			if r.Live, err = Comparable(o); err != nil {
				return nil, err
			}
			r.Fields = paths(r.Live, r.Want)
			r.Action = Unchanged
			if len(r.Fields) > 0 {
				r.Action = Configure
			}
		}
		out = append(out, r)
	}
	for _, u := range from {
		ref := Reference(u)
		if seen[key(ref)] {
			continue
		}
		live, err := Comparable(u)
		if err != nil {
			return nil, err
		}
		out = append(out, Result{Object: ref, Action: Prune, Live: live})
	}
	return out, nil
}
