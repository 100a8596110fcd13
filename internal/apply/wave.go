package apply

import (
	"context"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// Action is what an apply did to an object.
type Action string

const (
	// Created means the object did not exist and was created.
	Created Action = "created"
	// Configured means the object existed and was changed.
	Configured Action = "configured"
	// Unchanged means the object existed as rendered; nothing was written.
	Unchanged Action = "unchanged"
)

// Change is what an apply did to one object.
type Change struct {
	Object v1alpha1.ObjectReference
	Action Action
	// Generation is the object's metadata.generation in the server's answer to the
	// apply, or at the dry run when no apply was sent (Unchanged by the dry run); 0
	// when the object has none.
	Generation int64
	// UID is the object's metadata.uid in the same answer; empty when not known.
	UID types.UID
}

// WaveResult is the outcome of applying one sync wave.
type WaveResult struct {
	// Wave is the sync wave.
	Wave int32
	// Entries are the inventory entries of every object of the wave, also on
	// error: merge them into the inventory (Merge), so that nothing the apply
	// may have created is lost track of.
	Entries []v1alpha1.InventoryObject
	// Changes are the objects the apply got through, in the order applied.
	Changes []Change
}

// Changed reports whether the apply wrote anything.
func (r *WaveResult) Changed() bool {
	for _, c := range r.Changes {
		if c.Action != Unchanged {
			return true
		}
	}
	return false
}

// ApplyWave applies the objects of one sync wave of plan by server-side
// apply (field manager convoy, conflicts forced): first the wave's CRDs and
// Namespaces, waiting until the CRDs are established and the Namespaces
// active, then everything else, a few at a time. An object the dry run found
// unchanged costs no request, one it found new or changed costs the apply;
// an object it did not check costs a GET and a dry run, and an apply only
// when it differs. An object whose managedFields list an entry of Helm's field
// managers (HelmFieldManagers) has their fields taken over: one more patch, and
// the apply of an object the dry run found unchanged, which is skipped otherwise.
//
// Which waves to apply, and whether the previous waves are healthy enough to
// go on, is the caller's decision. An error is an *Error with
// ReasonDeployFailed, or ReasonUnappliable when the server refused an object as
// rendered (IsRefused: 422 Invalid, 400 BadRequest, a value it cannot convert to
// the schema of its kind): the dry run catches that too, but a forced sync skips
// it, and the custom resources of a CRD the render installs and the objects of a
// Namespace it creates are first checked here.
func (a *Applier) ApplyWave(ctx context.Context, plan *Plan, wave int32) (*WaveResult, error) {
	res := &WaveResult{Wave: wave, Entries: plan.Entries(&wave)}
	var defs, rest []*planned
	for _, o := range plan.objects {
		switch {
		case o.Wave != wave:
		case isCRD(o.entry.Group, o.entry.Kind) || isNamespace(o.entry.Group, o.entry.Kind):
			defs = append(defs, o)
		default:
			rest = append(rest, o)
		}
	}

	changes, failures := a.applyAll(ctx, defs)
	res.Changes = append(res.Changes, changes...)
	if err := newError(applyReason(failures), failures); err != nil {
		return res, err
	}
	if err := a.waitReady(ctx, defs, changes); err != nil {
		return res, err
	}

	changes, failures = a.applyAll(ctx, rest)
	res.Changes = append(res.Changes, changes...)
	return res, newError(applyReason(failures), failures)
}

// applyReason is the reason of an apply's failures: DeployFailed, as the next
// attempt may succeed, unless the server refused an object as rendered
// (IsRefused), which only a new render fixes: then Unappliable.
func applyReason(failures []objectError) string {
	for _, f := range failures {
		if IsRefused(f.err) {
			return v1alpha1.ReasonUnappliable
		}
	}
	return v1alpha1.ReasonDeployFailed
}

// applyAll applies objects concurrently; it returns the changes in the
// objects' order and the failures.
func (a *Applier) applyAll(ctx context.Context, objects []*planned) ([]Change, []objectError) {
	changes := make([]*Change, len(objects))
	errs := make([]*objectError, len(objects))
	var g errgroup.Group
	g.SetLimit(a.opts.Concurrency)
	for i, o := range objects {
		g.Go(func() error {
			action, generation, err := a.applyOne(ctx, o)
			if err != nil {
				f := applyFailure(o.entry.ObjectReference, err)
				errs[i] = &f
				return nil
			}
			changes[i] = &Change{Object: o.entry.ObjectReference, Action: action, Generation: generation, UID: types.UID(o.liveUID)}
			return nil
		})
	}
	_ = g.Wait()
	var out []Change
	var failures []objectError
	for i := range objects {
		if changes[i] != nil {
			out = append(out, *changes[i])
		}
		if errs[i] != nil {
			failures = append(failures, *errs[i])
		}
	}
	return out, failures
}

// applyOne applies o unless the dry run found it unchanged, and returns what the
// apply did and the object's generation in the server's answer. An object whose
// apply answers with an entry of Helm's field managers in its managedFields has
// their fields taken over (one JSON patch); one the dry run found unchanged is
// applied when the dry run's answer listed such an entry (o.helm), whether the
// Release applied it before or not, so that a take-over an error or a restart cut
// short is made at the next apply. When Helm owned fields the render lacks, the
// object is applied once more, which removes them, so that the object is as
// rendered when applyOne returns. An object without a dry run (a forced sync's, or
// one a later reconcile carries on at a later sync wave) is first read (metadata
// only) to tell a create from a change: a GET and the apply, and no dry run, which a
// forced sync skips; its apply's answer tells whether Helm's managers own fields.
func (a *Applier) applyOne(ctx context.Context, o *planned) (Action, int64, error) {
	st, liveVersion := o.state, o.liveVersion
	switch st {
	case unchanged:
		if !o.helm {
			return Unchanged, o.liveGeneration, nil
		}
	case unchecked:
		var err error
		if st, liveVersion, err = a.stateOf(ctx, o.Object.Object); err != nil {
			return "", 0, err
		}
	}
	var opts []client.PatchOption
	if o.state != unchecked {
		// Its dry run sent the same object and the server's warnings were logged then.
		opts = append(opts, client.FieldValidation(metav1.FieldValidationIgnore))
	}
	applied, err := a.send(ctx, o, opts...)
	if err != nil {
		return "", 0, err
	}
	head := applied.head
	o.liveUID, o.liveVersion = head.UID, head.ResourceVersion
	changed := st == created || head.ResourceVersion != liveVersion
	helm, err := helmManages(applied.raw)
	if err != nil {
		return "", 0, fmt.Errorf("read the field managers of %s: %w", Describe(o.entry.ObjectReference), err)
	}
	if helm {
		if applied, err = a.takeOver(ctx, o, applied, opts...); err != nil {
			return "", 0, err
		}
		if applied != nil {
			changed = changed || applied.head.ResourceVersion != o.liveVersion
			head = applied.head
			o.liveUID, o.liveVersion = head.UID, head.ResourceVersion
		}
	}
	switch {
	case st == created:
		return Created, head.Generation, nil
	case !changed:
		// The server stored nothing: the object was as rendered.
		return Unchanged, head.Generation, nil
	default:
		return Configured, head.Generation, nil
	}
}

// stateOf reads whether obj exists on the target: created (it does not) or existing
// with its resourceVersion.
func (a *Applier) stateOf(ctx context.Context, obj *unstructured.Unstructured) (state, string, error) {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := a.client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		return created, "", nil
	case err != nil:
		return 0, "", err
	}
	return existing, live.GetResourceVersion(), nil
}

// waitReady waits until the CRDs and Namespaces that the apply created or
// changed are established or active (kstatus Current), and the kinds of those
// CRDs are served.
func (a *Applier) waitReady(ctx context.Context, defs []*planned, changes []Change) error {
	changed := map[v1alpha1.ObjectReference]bool{}
	for _, c := range changes {
		if c.Action != Unchanged {
			changed[c.Object] = true
		}
	}
	var changedDefs []*planned
	var objs []*unstructured.Unstructured
	for _, o := range defs {
		if changed[o.entry.ObjectReference] {
			changedDefs = append(changedDefs, o)
			objs = append(objs, o.Object.Object)
		}
	}
	if len(objs) == 0 {
		return nil
	}
	failed := func(err error) error {
		e := &Error{reason: v1alpha1.ReasonDeployFailed}
		for _, o := range objs {
			e.Objects = append(e.Objects, refOf(o))
		}
		e.Errs = []error{err}
		return e
	}
	err := a.rm.WaitForSetWithContext(ctx, object.UnstructuredSetToObjMetadataSet(objs),
		ssa.WaitOptions{Interval: a.opts.WaitInterval, Timeout: a.opts.WaitTimeout})
	if err != nil {
		return failed(fmt.Errorf("wait for the wave's CRDs and Namespaces: %w", err))
	}
	// An Established CRD is not at once in the API server's discovery: its custom
	// resources, applied next, met "no matches for kind" (a CI run of
	// TestConversionFailureIsUnappliable). Wait until the target's RESTMapper serves
	// every kind of the CRDs just applied.
	kinds := crdKinds(changedDefs)
	if len(kinds) == 0 {
		return nil
	}
	var missing schema.GroupVersionKind
	err = wait.PollUntilContextTimeout(ctx, a.opts.WaitInterval, a.opts.WaitTimeout, true, func(context.Context) (bool, error) {
		for gvk := range kinds {
			ok, err := a.serves(gvk)
			if err != nil || !ok {
				missing = gvk
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return failed(fmt.Errorf("wait for the API server to serve %s of the wave's CRDs: %w", missing.Kind, err))
	}
	return nil
}

func refOf(u *unstructured.Unstructured) v1alpha1.ObjectReference {
	gvk := u.GroupVersionKind()
	return v1alpha1.ObjectReference{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}
