package drift

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
)

// Missing is the field path reported for a render object that is not on the
// target (not found, or its kind is no longer served): convoy's apply would
// create it, so the whole object has drifted.
const Missing = "(missing)"

// Options tune a Checker. The zero value is usable.
type Options struct {
	// Concurrency bounds the objects checked at once, each costing up to two
	// requests (default 4).
	Concurrency int
}

// Checker compares the live objects of renders with the renders. It holds no
// state between calls; one Checker serves every target.
type Checker struct {
	opts Options
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.Concurrency < 1 {
		opts.Concurrency = 4
	}
	return &Checker{opts: opts}
}

// Check compares each object of a render with its live counterpart on target
// and returns the drifted objects, sorted by group, kind, namespace, name and
// version, each with its sorted field paths (see diff.Fields), or
// with the single path Missing when the object is not on the target. An object
// that has not drifted is not in the result.
//
// Each object costs one GET and, when it exists, one server-side apply with
// dryRun=All by the field manager convoy, forcing conflicts, as convoy's apply
// does. Check never writes; target's identity needs get and patch on the
// objects' kinds (Kubernetes authorises a dry run as the write it simulates),
// not create.
//
// An object that cannot be checked (a failed read, a dry run the server
// rejects or fails) does not stop the others: Check returns the drift of the
// objects it could check and an error naming each object it could not. A
// caller that records the result should treat it as incomplete when the error
// is not nil. The objects are not modified.
func (c *Checker) Check(ctx context.Context, target client.Client, objects []*unstructured.Unstructured) ([]v1alpha1.DriftedObject, error) {
	for i, obj := range objects {
		if obj == nil {
			return nil, fmt.Errorf("drift check: object %d of the render is nil", i)
		}
	}
	fields := make([][]string, len(objects))
	errs := make([]error, len(objects))
	var g errgroup.Group
	g.SetLimit(c.opts.Concurrency)
	for i, obj := range objects {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				errs[i] = fmt.Errorf("drift check of %s: %w", describe(obj), err)
				return nil
			}
			fields[i], errs[i] = checkOne(ctx, target, obj)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("drift check: %w", err)
	}

	var drifted []v1alpha1.DriftedObject
	for i, obj := range objects {
		if len(fields[i]) > 0 {
			drifted = append(drifted, v1alpha1.DriftedObject{ObjectReference: reference(obj), Fields: fields[i]})
		}
	}
	slices.SortFunc(drifted, func(a, b v1alpha1.DriftedObject) int { return compareRefs(a.ObjectReference, b.ObjectReference) })
	return drifted, errors.Join(errs...)
}

// checkOne returns the drifted field paths of one object: nil when it has not
// drifted, [Missing] when it is not on the target. The comparison is
// internal/diff's, the one convoy's apply and `kubectl convoy release diff` use.
func checkOne(ctx context.Context, target client.Client, obj *unstructured.Unstructured) ([]string, error) {
	r, err := diff.Check(ctx, target, obj, diff.Options{})
	switch {
	case err != nil && r.LiveVersion == "":
		return nil, fmt.Errorf("drift check of %s: read the live object: %w", describe(obj), err)
	case apierrors.IsNotFound(err):
		// Deleted since the read (or its namespace is gone).
		return []string{Missing}, nil
	case err != nil:
		return nil, fmt.Errorf("drift check of %s: server-side apply dry run: %w", describe(obj), err)
	case r.Action == diff.Create:
		// Not found, or its kind (a CRD's) is gone: no dry run, which would need
		// the right to create it; or the dry run would create it (deleted since the
		// read).
		return []string{Missing}, nil
	}
	return r.Fields, nil
}

func reference(u *unstructured.Unstructured) v1alpha1.ObjectReference {
	gvk := u.GroupVersionKind()
	return v1alpha1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

func compareRefs(a, b v1alpha1.ObjectReference) int {
	return cmp.Or(
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.Version, b.Version),
	)
}

// describe names an object for messages: Kind namespace/name (group).
func describe(u *unstructured.Unstructured) string {
	s := u.GetKind() + " " + u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		s = u.GetKind() + " " + ns + "/" + u.GetName()
	}
	if g := u.GroupVersionKind().Group; g != "" {
		s += " (" + g + ")"
	}
	return s
}
