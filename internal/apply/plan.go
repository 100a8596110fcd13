package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"

	ssaerrors "github.com/fluxcd/pkg/ssa/errors"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
)

// state is what the dry run found out about an object.
type state int

const (
	// unchecked: no dry run (forced, or skipped); the apply checks it itself.
	unchecked state = iota
	// created: the object does not exist on the target.
	created
	// configured: the object exists and the apply would change it.
	configured
	// unchanged: the object exists and the apply would change nothing.
	unchanged
	// existing: the object exists; whether the apply changes it is not known
	// (its dry run went without a GET). The apply finds out.
	existing
)

type planned struct {
	Object
	entry v1alpha1.InventoryObject
	state state
	// liveVersion is the resourceVersion of an existing object at the dry run, and
	// after the apply the one of its answer.
	liveVersion string
	// liveUID is the uid of the live object, set only when the dry run found it
	// unchanged or the apply got through: liveUID and liveVersion are then the object
	// as rendered (Plan.Seen).
	liveUID string
	// liveGeneration is the generation of an unchanged object at the dry run.
	liveGeneration int64
	// digest is the rendered object's (digestOf), computed when first needed; 0: not yet.
	digest uint64
	// body is the rendered object's JSON (bodyOf); nil: not made yet.
	body []byte
	// helm: the dry run's answer lists an entry of HelmFieldManagers in the object's
	// managedFields, so an object the dry run found unchanged is applied all the same,
	// for the take-over (takeOver). Whether an object that is applied anyway is taken
	// over, its apply's answer tells.
	helm bool
}

// Plan is a render ready to be applied wave by wave. A Plan from DryRun
// remembers which objects the apply would leave unchanged, so that applying
// them costs no further request; it describes the target as it was at the
// dry run, so use it in the reconcile that made it.
type Plan struct {
	objects []*planned
}

// NewPlan returns a Plan of objects without a dry run (a forced sync): every
// object is checked as its wave is applied. The objects are copied.
func NewPlan(objects []Object) (*Plan, error) {
	if err := mustNotBeNil(objects); err != nil {
		return nil, err
	}
	p := &Plan{objects: make([]*planned, 0, len(objects))}
	for _, o := range objects {
		o.Object = o.Object.DeepCopy()
		p.objects = append(p.objects, &planned{Object: o, entry: o.Entry()})
	}
	return p, nil
}

// Waves returns the plan's sync waves in ascending order.
func (p *Plan) Waves() []int32 {
	var waves []int32
	for _, o := range p.objects {
		if !slices.Contains(waves, o.Wave) {
			waves = append(waves, o.Wave)
		}
	}
	slices.Sort(waves)
	return waves
}

// Entries returns the inventory entries of the plan's objects in wave (all
// waves when wave is nil), in inventory order.
func (p *Plan) Entries(wave *int32) []v1alpha1.InventoryObject {
	var out []v1alpha1.InventoryObject
	for _, o := range p.objects {
		if wave == nil || o.Wave == *wave {
			out = append(out, o.entry)
		}
	}
	return Merge(nil, out)
}

// Unchecked returns the objects the dry run skipped (or all, without a dry
// run): custom resources of a CRD the render installs, objects in a
// Namespace the render creates.
func (p *Plan) Unchecked() []v1alpha1.ObjectReference {
	var out []v1alpha1.ObjectReference
	for _, o := range p.objects {
		if o.state == unchecked {
			out = append(out, o.entry.ObjectReference)
		}
	}
	return out
}

// Checked returns what the dry run found out for each object: Created,
// Configured or Unchanged, in plan order. Objects it cannot tell (those it
// skipped, and those it only dry-ran without a GET that turned out to exist)
// are left out. `kubectl convoy release
// diff` and the drift check agree with it (internal/diff).
func (p *Plan) Checked() []Change {
	var out []Change
	for _, o := range p.objects {
		var a Action
		switch o.state {
		case created:
			a = Created
		case configured:
			a = Configured
		case unchanged:
			a = Unchanged
		default:
			continue
		}
		out = append(out, Change{Object: o.entry.ObjectReference, Action: a})
	}
	return out
}

// Writes reports whether applying the plan may write to the target: an object the
// dry run did not find unchanged (or did not check), or one whose fields Helm still
// manages (the take-over applies it all the same). A plan of a render in steady
// state writes nothing.
func (p *Plan) Writes() bool {
	for _, o := range p.objects {
		if o.state != unchanged || o.helm {
			return true
		}
	}
	return false
}

// DryRun checks the whole render against the target with a server-side
// apply in dryRun=All mode, before anything is applied, and returns the Plan
// to apply it with.
//
// The CRDs and Namespaces of the render are checked first. Objects whose
// kind a CRD of the render defines and the target does not serve yet, and
// objects in a Namespace the render creates, cannot be checked before their
// CRD or Namespace exists: they are skipped here and checked when their wave
// is applied.
//
// Every object is tried; the error is an *Error listing each failure. Its
// Reason is ReasonUnappliable when the server rejected an object (see
// IsRejection), else ReasonDeployFailed.
//
// applied lists the objects an earlier apply made (the ReleaseInventory); it
// may be stale or empty. An object it lists is read (GET) and dry-run, so that
// an unchanged object costs no apply. An object it does not list is most
// likely new: it is only dry-run (a dry-run create answers without a
// resourceVersion) and applied; if it existed after all, the apply tells
// whether it changed anything. A new object thus costs two requests instead
// of three.
//
// The apply of an object whose managedFields list an entry of Helm's field managers
// (HelmFieldManagers) takes over their fields, whether applied lists the object or
// not: also when the dry run found it unchanged (it is applied then, when the dry
// run's answer lists such an entry). An object whose dry run finds it unchanged and
// Helm's managers owning nothing costs nothing more.
//
// seen is what the Release's last apply saw of its objects (Plan.Seen; nil: nothing):
// an object seen as rendered, rendered the same and not written since costs the dry
// run only.
func (a *Applier) DryRun(ctx context.Context, objects []Object, seen Seen, applied ...v1alpha1.InventoryObject) (*Plan, error) {
	known := map[identity]bool{}
	for _, e := range applied {
		known[identityOf(e.ObjectReference)] = true
	}
	plan, err := NewPlan(objects)
	if err != nil {
		return nil, err
	}
	var defs, rest []*planned
	for _, o := range plan.objects {
		if isCRD(o.entry.Group, o.entry.Kind) || isNamespace(o.entry.Group, o.entry.Kind) {
			defs = append(defs, o)
		} else {
			rest = append(rest, o)
		}
	}
	byObject := seen.index()
	failures := a.diff(ctx, defs, known, byObject)

	newNamespaces := map[string]bool{}
	for _, o := range defs {
		if isNamespace(o.entry.Group, o.entry.Kind) && (o.state == created || o.state == unchecked) {
			newNamespaces[o.entry.Name] = true
		}
	}
	renderKinds := crdKinds(plan.objects)
	var check []*planned
	for _, o := range rest {
		if newNamespaces[o.entry.Namespace] {
			continue
		}
		if gvk := gvkOf(o.entry.ObjectReference); renderKinds[gvk] {
			known, err := a.serves(gvk)
			if err != nil {
				failures = append(failures, failure{o, fmt.Errorf("dry run of %s: look up its kind: %w", Describe(o.entry.ObjectReference), err), false})
				continue
			}
			if !known {
				continue
			}
		}
		check = append(check, o)
	}
	failures = append(failures, a.diff(ctx, check, known, byObject)...)
	return plan, dryRunError(failures)
}

type failure struct {
	o        *planned
	err      error
	rejected bool
}

// diff dry-runs objects concurrently and records their state: the objects
// seen as rendered with a dry run (and a GET when written since), the others
// known to exist with a GET and a dry run, the rest with a dry run only.
func (a *Applier) diff(ctx context.Context, objects []*planned, known map[identity]bool, seen map[uint64]sighting) []failure {
	results := make([]*failure, len(objects))
	var g errgroup.Group
	g.SetLimit(a.opts.Concurrency)
	for i, o := range objects {
		g.Go(func() error {
			var err error
			id := identityOf(o.entry.ObjectReference)
			if s, ok := seen[idOf(id)]; ok && s.digest == o.digestOf() {
				err = a.diffSeen(ctx, o, s)
			} else if known[id] {
				err = a.diffKnown(ctx, o)
			} else {
				err = a.dryRunNew(ctx, o)
			}
			if err != nil {
				if dr, ok := errors.AsType[*ssaerrors.DryRunErr](err); ok {
					err = dr.Unwrap()
				}
				rejected := IsRejection(err)
				verb := "failed"
				if rejected {
					verb = "rejected"
				}
				results[i] = &failure{o, fmt.Errorf("dry run of %s %s: %w", Describe(o.entry.ObjectReference), verb, explain(err)), rejected}
			}
			return nil
		})
	}
	_ = g.Wait()
	var out []failure
	for _, f := range results {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// diffKnown compares the live object with its dry-run apply (a GET and a dry
// run), with internal/diff: the comparison the drift check and `kubectl convoy
// release diff` make, so that an object they report changed is applied.
func (a *Applier) diffKnown(ctx context.Context, o *planned) error {
	r, err := diff.Check(ctx, a.client, o.Object.Object, diff.Options{DryRunMissing: true})
	if err != nil {
		return err
	}
	switch r.Action {
	case diff.Create:
		o.state = created
	case diff.Unchanged:
		o.state, o.liveGeneration = unchanged, r.LiveGeneration
		o.liveUID, o.liveVersion = r.LiveUID, r.LiveVersion
	default:
		o.state = configured
	}
	o.helm = slices.ContainsFunc(r.Managers, isHelms)
	return nil
}

// dryRunNew dry-runs the apply of an object that is probably new, without a
// GET: the server answers a dry-run create without a resourceVersion. The field
// validation is the server's default, whose warnings about unknown fields are logged.
func (a *Applier) dryRunNew(ctx context.Context, o *planned) error {
	dryRun, err := a.send(ctx, o, client.DryRunAll)
	if err != nil {
		return err
	}
	if dryRun.head.ResourceVersion == "" {
		o.state = created
	} else {
		o.state, o.liveVersion = existing, dryRun.head.ResourceVersion
	}
	return nil
}

func dryRunError(failures []failure) error {
	reason := v1alpha1.ReasonDeployFailed
	var objs []objectError
	for _, f := range failures {
		if f.rejected {
			reason = v1alpha1.ReasonUnappliable
		}
		objs = append(objs, objectError{ref: f.o.entry.ObjectReference, err: f.err})
	}
	return newError(reason, objs)
}

// serves reports whether the target serves gvk.
func (a *Applier) serves(gvk schema.GroupVersionKind) (bool, error) {
	_, err := a.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, err
	}
}

// crdKinds returns the kinds (each served version) that the render's CRDs define.
func crdKinds(objects []*planned) map[schema.GroupVersionKind]bool {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, o := range objects {
		if !isCRD(o.entry.Group, o.entry.Kind) {
			continue
		}
		u := o.Object.Object
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for _, v := range versions {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			// A version kept with served: false (charts keep an old version so that
			// stored objects still convert) is never in discovery: waiting for it
			// runs to the timeout.
			if served, ok := m["served"].(bool); ok && !served {
				continue
			}
			if name, ok := m["name"].(string); ok {
				kinds[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = true
			}
		}
	}
	return kinds
}
