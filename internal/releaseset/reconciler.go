package releaseset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// EventRecorder records events about a ReleaseSet (the events.k8s.io API's recorder,
// as controller-runtime's manager gives it).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// cacheCatchUp bounds the wait for the cache to show the reconcile's own writes.
const cacheCatchUp = 10 * time.Second

// Reconciler reconciles ReleaseSets: it observes the set, the Clusters, the set's
// namespace and its Releases from the cache, makes the plan (Decide), writes the
// plan's Releases and, when it changed, the set's status.
type Reconciler struct {
	client  client.Client
	clock   clock.Clock
	events  EventRecorder
	metrics *metrics
	// apiReader reads ConfigMaps and Secrets (the values copies) uncached, and a
	// namespace the cache does not hold.
	apiReader client.Reader
	// resolver resolves the template's chart source; nil: the set resolves nothing.
	resolver SourceResolver
	// hosts gives the identity the set's Releases act as; nil: convoy's own.
	hosts    HostResolver
	schedule *sourceSchedule
}

// Reconcile makes one set's Releases and status what its plan says.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrllog.FromContext(ctx).WithValues("releaseSet", req.NamespacedName)
	ctx = ctrllog.IntoContext(ctx, log)
	set := &v1.ReleaseSet{}
	if err := r.client.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if set.DeletionTimestamp != nil {
		// The garbage collector deletes the Releases and the values copies (ownerReferences).
		r.schedule.forget(set.UID)
		return reconcile.Result{}, nil
	}
	if outlived, err := r.checkNamespace(ctx, set); err != nil || outlived {
		if outlived {
			r.schedule.forget(set.UID)
		}
		return reconcile.Result{}, err
	}
	in, err := r.observe(ctx, set)
	if err != nil {
		return reconcile.Result{}, err
	}
	var after time.Duration
	var resolved bool
	in.Source, in.SourceErr, after, resolved = r.source(ctx, set)
	plan := Decide(in)
	// The status says what was observed, so it is written whether the writes of
	// Releases succeed or not; a Release that cannot be written holds back none of it.
	werr := r.writeReleases(ctx, set, plan)
	serr := r.writeStatus(ctx, set, plan.Status)
	var cerr error
	if werr == nil && (resolved || plan.Writes()) {
		// The copies of the values no Release reads any more (once per resolution, and
		// after the Releases moved).
		cerr = r.collectCopies(ctx, set, in.Source, inUse(set, in.Releases, plan))
	}
	// The next resolution, or the end of a bake or a progressDeadline: nothing else
	// wakes the set up then.
	if plan.RequeueAfter > 0 && (after == 0 || plan.RequeueAfter < after) {
		after = plan.RequeueAfter
	}
	return reconcile.Result{RequeueAfter: after}, errors.Join(werr, serr, cerr)
}

// inUse are the Releases of the set once plan is written: those created and updated,
// and the others that the set controls, but for those deleted.
func inUse(set *v1.ReleaseSet, observed []v1.Release, plan Plan) []*v1.Release {
	written := map[string]bool{}
	var out []*v1.Release
	for _, rel := range append(slices.Clone(plan.Create), plan.Update...) {
		written[rel.Name] = true
		out = append(out, rel)
	}
	for _, rel := range plan.Delete {
		written[rel.Name] = true
	}
	for i := range observed {
		if rel := &observed[i]; !written[rel.Name] && controlledBy(rel, set) {
			out = append(out, rel)
		}
	}
	return out
}

// observe reads what a plan is made from.
func (r *Reconciler) observe(ctx context.Context, set *v1.ReleaseSet) (Input, error) {
	in := Input{Set: set, Now: metav1.NewTime(r.clock.Now())}
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: set.Namespace}, ns); err != nil {
		return in, fmt.Errorf("read namespace %s of ReleaseSet %s: %w", set.Namespace, set.Name, err)
	}
	in.NamespaceLabels = ns.Labels
	clusters := &v1.ClusterList{}
	if err := r.client.List(ctx, clusters); err != nil {
		return in, fmt.Errorf("list Clusters for ReleaseSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	in.Clusters = clusters.Items
	releases := &v1.ReleaseList{}
	if err := r.client.List(ctx, releases, client.InNamespace(set.Namespace),
		client.MatchingLabels{v1.LabelReleaseSet: v1.LabelValue(set.Name)}); err != nil {
		return in, fmt.Errorf("list the Releases of ReleaseSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	in.Releases = releases.Items
	return in, nil
}

// writeReleases creates, updates and deletes the plan's Releases, then waits until the
// cache shows every write, so that the next reconcile decides on what this one did
// (maxParallel counts the Releases in flight).
func (r *Reconciler) writeReleases(ctx context.Context, set *v1.ReleaseSet, plan Plan) error {
	if !plan.Writes() {
		return nil
	}
	log := ctrllog.FromContext(ctx)
	rev := plan.Status.Revision
	var written []client.Object
	var errs []error
	for _, rel := range plan.Create {
		log.Info("Creating Release", "release", rel.Name, "cluster", rel.Spec.Cluster,
			"revision", rel.Annotations[v1.AnnotationReleaseSetRevision])
		if err := r.client.Create(ctx, rel); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// The cache shows every Release the set controls once its own writes are
				// seen (waitCached): this one is someone else's.
				err = fmt.Errorf("a Release of that name exists that this ReleaseSet does not control: delete or "+
					"rename it, or rename the ReleaseSet: %w", err)
			}
			errs = append(errs, fmt.Errorf("create Release %s/%s: %w", rel.Namespace, rel.Name, err))
			r.events.Eventf(set, rel, corev1.EventTypeWarning, EventReleaseCreated, "Create",
				"Cannot create Release %s for Cluster %s: %v", rel.Name, rel.Spec.Cluster, err)
			continue
		}
		written = append(written, rel)
		r.metrics.wrote("created")
		r.events.Eventf(set, rel, corev1.EventTypeNormal, EventReleaseCreated, "Create",
			"Created Release %s for Cluster %s at revision %s.", rel.Name, rel.Spec.Cluster, rel.Annotations[v1.AnnotationReleaseSetRevision])
	}
	for _, rel := range plan.Update {
		orig := &v1.Release{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(rel), orig); err != nil {
			errs = append(errs, fmt.Errorf("read Release %s/%s: %w", rel.Namespace, rel.Name, err))
			continue
		}
		orig.ResourceVersion = rel.ResourceVersion
		log.Info("Updating Release", "release", rel.Name, "cluster", rel.Spec.Cluster, "revision", rev)
		if err := r.client.Patch(ctx, rel, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			errs = append(errs, fmt.Errorf("update Release %s/%s: %w", rel.Namespace, rel.Name, err))
			continue
		}
		written = append(written, rel)
		r.metrics.wrote("updated")
		r.events.Eventf(set, rel, corev1.EventTypeNormal, EventReleaseUpdated, "Update",
			"Updated Release %s for Cluster %s to revision %s.", rel.Name, rel.Spec.Cluster, rel.Annotations[v1.AnnotationReleaseSetRevision])
	}
	for _, rel := range plan.Delete {
		log.Info("Deleting Release: its Cluster is no longer selected", "release", rel.Name, "cluster", rel.Spec.Cluster)
		if err := r.client.Delete(ctx, rel, client.Preconditions{UID: &rel.UID}); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete Release %s/%s: %w", rel.Namespace, rel.Name, err))
			}
			continue
		}
		written = append(written, rel)
		r.metrics.wrote("deleted")
		r.events.Eventf(set, rel, corev1.EventTypeNormal, EventReleaseDeleted, "Delete",
			"Deleted Release %s: Cluster %s is no longer selected.", rel.Name, rel.Spec.Cluster)
	}
	if err := r.waitCached(ctx, written, plan.Delete); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitCached waits until the cache shows the written objects at their resourceVersion
// or later, and the deleted ones gone or being deleted.
func (r *Reconciler) waitCached(ctx context.Context, written []client.Object, deleted []*v1.Release) error {
	gone := map[client.ObjectKey]bool{}
	for _, d := range deleted {
		gone[client.ObjectKeyFromObject(d)] = true
	}
	var pending client.ObjectKey
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, cacheCatchUp, true, func(ctx context.Context) (bool, error) {
		for _, w := range written {
			key := client.ObjectKeyFromObject(w)
			cached := w.DeepCopyObject().(client.Object)
			err := r.client.Get(ctx, key, cached)
			switch {
			case gone[key] && (apierrors.IsNotFound(err) || (err == nil && cached.GetDeletionTimestamp() != nil)):
				continue
			case err == nil && !gone[key]:
				if c, cerr := resourceversion.CompareResourceVersion(cached.GetResourceVersion(), w.GetResourceVersion()); cerr != nil || c >= 0 {
					continue
				}
			case err != nil && !apierrors.IsNotFound(err):
				return false, err
			}
			pending = key
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the cache to show the write of %s: %w", pending, err)
	}
	return nil
}

// writeStatus writes status through /status when it differs from the set's, and
// records the events of the change.
func (r *Reconciler) writeStatus(ctx context.Context, set *v1.ReleaseSet, status v1.ReleaseSetStatus) error {
	if equality.Semantic.DeepEqual(set.Status, status) {
		return nil
	}
	changed := set.DeepCopy()
	changed.Status = status
	if err := r.client.Status().Patch(ctx, changed, client.MergeFromWithOptions(set, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write the status of ReleaseSet %s/%s: %w", set.Namespace, set.Name, err)
	}
	for _, e := range Transitions(set.Status, status) {
		r.events.Eventf(set, nil, e.Type, e.Reason, "Rollout", "%s", e.Message)
	}
	return r.waitCached(ctx, []client.Object{changed}, nil)
}
