package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/sigstore/sigstore-go/pkg/root"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/source"
	"kumodo.io/convoy/internal/targets"
)

// ChartFetcher fetches a Release's chart; *source.Fetcher is the implementation.
// maxAge is how old a Git ref listing may be (0: the fetcher's index lifetime).
type ChartFetcher interface {
	Fetch(ctx context.Context, chart v1.ChartSource, maxAge time.Duration, creds *source.Credentials) (*source.Chart, error)
}

// EventRecorder records events about a Release (the events.k8s.io API's recorder,
// as controller-runtime's manager gives it).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Reconciler reconciles Releases. Build it with New.
type Reconciler struct {
	// client reads from the manager's cache and writes to the host API server.
	client client.Client
	// waves reads the Releases of a Cluster for its cluster waves: the manager's cache,
	// or a shard's view of every shard (waveView).
	waves client.Reader
	// apiReader reads from the API server directly: the ReleaseInventory before it is
	// grown, Render objects with their manifests, ConfigMaps and Secrets.
	apiReader client.Reader
	clock     clock.Clock
	source    ChartFetcher
	clusters  targets.Resolver
	events    EventRecorder
	failures  *policy.FailureCounter
	// retries is the work queue's rate limiter, told when a reconcile keeps the count.
	retries *retryLimiter
	// writes holds the resourceVersion of the last write to each Release.
	writes *writeLog
	// renders holds the latest render of each Release, to reuse it while its inputs stay.
	renders *renderMemory
	// capabilities are the render Capabilities of each target's current discovery.
	capabilities *capabilitiesMemo
	// seen is what each Release's last apply saw of its objects (apply.Seen).
	seen *releaseMemory[apply.Seen]
	// inventories is the spec of each Release's ReleaseInventory as this controller
	// last wrote or read it (liveInventory).
	inventories *releaseMemory[inventorySpec]
	applyOpts   apply.Options
	metrics     *metrics
	// deletionWarnAfter is how long a deletion may wait for the objects to go before
	// each retry also warns.
	deletionWarnAfter time.Duration
	// overdueAfter is the bound of a wait on the observer's assessment (0: none).
	overdueAfter time.Duration
	// dueSince is when each Release's ReleaseInventory fell behind the observer's
	// assessment, while it stays behind (assessment).
	dueSince *releaseMemory[time.Time]
	// adopted holds each Release whose labelled objects this controller adopted into
	// its inventory since it started (adoptLabelled).
	adopted *releaseMemory[struct{}]
	// verified remembers the charts verified (verifyChart).
	verified *verifications
	// requireVerified refuses Releases that do not ask for chart verification
	// (--require-verified-charts).
	requireVerified bool
	// sigstoreRoot is the trusted root of keyless cosign signatures (nil: none).
	sigstoreRoot root.TrustedMaterial
}

// Reconcile carries out one reconcile of one Release (docs/architecture.md, "The
// reconcile of a Release").
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := policy.Key{Namespace: req.Namespace, Name: req.Name}
	rel, err := r.readRelease(ctx, key)
	if err != nil {
		return r.readFailed(ctx, key, rel, err)
	}
	if rel == nil {
		r.forget(key)
		return reconcile.Result{}, r.releaseOrphanedInventory(ctx, req.NamespacedName)
	}
	logger := log.FromContext(ctx).WithValues("release", req.String(), "cluster", rel.Spec.Cluster)
	ctx = logr.NewContext(ctx, logger)

	if rel.DeletionTimestamp != nil {
		return r.reconcileDelete(ctx, rel)
	}
	if outlived, ns, err := r.checkNamespace(ctx, rel); err != nil {
		return r.ownFailureOf(ctx, rel, err)
	} else if outlived {
		// Its deletion event brings it back, to reconcileDelete.
		if err := r.deleteOutlived(ctx, rel, ns); err != nil {
			return r.ownFailureOf(ctx, rel, err)
		}
		return reconcile.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(rel, v1.Finalizer) {
		logger.V(1).Info("Adding the finalizer")
		if err := r.patchFinalizer(ctx, rel, controllerutil.AddFinalizer); err != nil {
			return r.ownFailureOf(ctx, rel, fmt.Errorf("add the finalizer to Release %s: %w", req.NamespacedName, err))
		}
	}
	return r.reconcileRelease(ctx, key, rel)
}

// ownFailureOf reports err, a failure of convoy's own reads and writes before the
// reconcile's decision (the finalizer's patch, reading the Release's namespace), as
// ownFailure does inside it: Applied=False/DeployFailed, counted, retried with the
// Release's retryBackoff.
func (r *Reconciler) ownFailureOf(ctx context.Context, rel *v1.Release, err error) (reconcile.Result, error) {
	res, err := ownFailure(ctx, err)
	if err != nil {
		return reconcile.Result{}, err
	}
	return r.reportFailure(ctx, rel, *res)
}

// readFailed ends a reconcile whose Release could not be read. When the cache holds
// it (only the read from the API server, of a Release the cache had not caught up
// with, failed), the failure is counted once and retried with the Release's
// retryBackoff; nothing is written from a copy older than the last write. Else the
// work queue retries.
func (r *Reconciler) readFailed(ctx context.Context, key policy.Key, cached *v1.Release, err error) (reconcile.Result, error) {
	if cached == nil || ctx.Err() != nil {
		return reconcile.Result{}, err
	}
	logr.FromContextOrDiscard(ctx).Error(err, "Cannot read the Release", "release", key.Namespace+"/"+key.Name)
	in := policy.Input{Now: r.clock.Now(), Policy: syncPolicy(cached.Spec.SyncPolicy), Failures: r.failures.Get(key)}
	out := policy.Unrecorded(in, policy.Outcome{Result: policy.Result{Reason: v1.ReasonDeployFailed, Message: err.Error()}})
	return r.requeue(key, out, err), requeueError(out, err)
}

// readRelease reads the Release of key from the cache, or from the API server when the
// cached one predates the controller's last write to it. It returns nil when the
// Release does not exist. When the read from the API server fails, it returns the
// cached Release with the error.
func (r *Reconciler) readRelease(ctx context.Context, key policy.Key) (*v1.Release, error) {
	objKey := client.ObjectKey{Namespace: key.Namespace, Name: key.Name}
	rel := &v1.Release{}
	err := r.client.Get(ctx, objKey, rel)
	if err == nil && r.writes.predates(key, rel.ResourceVersion) {
		logr.FromContextOrDiscard(ctx).V(1).Info("The cached Release predates the last write: reading it from the API server",
			"resourceVersion", rel.ResourceVersion)
		fresh := &v1.Release{}
		if err = r.apiReader.Get(ctx, objKey, fresh); err == nil || apierrors.IsNotFound(err) {
			rel = fresh
		} else {
			return rel, fmt.Errorf("read Release %s/%s: %w", key.Namespace, key.Name, err)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return rel, nil
}

// reconcileRelease is steps 2–12 and the status write.
func (r *Reconciler) reconcileRelease(ctx context.Context, key policy.Key, rel *v1.Release) (reconcile.Result, error) {
	started := r.clock.Now()
	st := &state{rel: rel, now: started}
	in, err := r.gather(ctx, st)
	if err != nil {
		if in.Preflight, err = ownFailure(ctx, err); err != nil {
			return reconcile.Result{}, err
		}
	}
	in.Failures = r.failures.Get(key)

	plan := policy.Decide(in)
	var ap applied
	if plan.Apply != nil {
		if ap, err = r.applyStep(ctx, st, in, plan.Apply); errors.Is(err, errOutlived) {
			// Its deletion event brings it back, to reconcileDelete.
			return reconcile.Result{}, nil
		} else if err != nil {
			var res *policy.Result
			if res, err = ownFailure(ctx, err); err != nil {
				return reconcile.Result{}, err
			}
			ap.result = *res
		}
	}
	out := policy.Finish(in, plan, ap.attempt())
	out = policy.Reassessing(healthyCondition(rel), in, out)
	out = policy.CheckAssessment(in, r.assessment(key, st, ap), out)

	logger := logr.FromContextOrDiscard(ctx).WithValues("reason", out.Result.Reason)
	if st.render != nil {
		logger = logger.WithValues("renderRef", st.render.Ref)
	}
	ctx = logr.NewContext(ctx, logger)

	status := newStatus(rel, st, ap, out)
	changed := !equality.Semantic.DeepEqual(rel.Status, status)
	if changed {
		logger.V(1).Info("Writing the status")
		if err := r.patchStatus(ctx, rel, status); err != nil {
			if ctx.Err() != nil {
				return reconcile.Result{}, err
			}
			// Nothing records this reconcile: one transient failure, counted once
			// (not also as the failure it may have reported), retried with the
			// Release's retryBackoff.
			logger.Error(err, "Cannot write the status")
			out = policy.Unrecorded(in, out)
			return r.requeue(key, out, err), requeueError(out, err)
		}
	}
	r.emitEvents(ctx, st, plan, ap, out)
	r.metrics.observe(key, plan, out, ap.changes, r.clock.Since(started))
	if st.newRender && rel.Status.Render != nil {
		// A new render beside an earlier one may push an old Render out of the
		// history; the first render of a Release cannot.
		r.pruneHistory(ctx, rel, status)
	}
	return r.requeue(key, out, nil), requeueError(out, nil)
}

// ownFailure turns err, a failure to read or write convoy's own objects on the host
// (the cache, a Render to store, the Render of the render to apply), into the Result
// of the reconcile: DeployFailed, transient, so that it is reported in the Applied
// condition, counted, and retried with the Release's retryBackoff like any transient
// failure (decision 0166). A cancelled context (the controller stops) is no failure
// of the Release: it is returned as it is, and nothing is written.
func ownFailure(ctx context.Context, err error) (*policy.Result, error) {
	if ctx.Err() != nil {
		return nil, err
	}
	logr.FromContextOrDiscard(ctx).Error(err, "Cannot read or write convoy's own objects")
	return &policy.Result{Reason: v1.ReasonDeployFailed, Message: fmt.Sprintf(
		"Convoy cannot read or write its own objects on the host cluster: %s. It retries.", strings.TrimSuffix(strings.TrimSpace(err.Error()), "."))}, nil
}

// reasonError is a transient failure handed to the work queue, whose default rate
// limiter then schedules the retry (no retryBackoff.initial; SP-42).
type reasonError struct {
	reason, message string
}

func (e *reasonError) Error() string { return e.reason + ": " + e.message }

// patchStatus writes status through the /status subresource in one merge patch.
func (r *Reconciler) patchStatus(ctx context.Context, rel *v1.Release, status v1.ReleaseStatus) error {
	updated := rel.DeepCopy()
	updated.Status = status
	if err := r.client.Status().Patch(ctx, updated, client.MergeFrom(rel)); err != nil {
		return fmt.Errorf("write the status of Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	r.writes.record(policy.Key{Namespace: rel.Namespace, Name: rel.Name}, updated.ResourceVersion)
	return nil
}

// patchFinalizer adds or removes the finalizer of obj (a Release or its
// ReleaseInventory) in one merge patch, which fails on a conflict rather than
// overwrite another writer's finalizers; nothing is written when nothing changes.
func (r *Reconciler) patchFinalizer(ctx context.Context, obj client.Object, change func(client.Object, string) bool) error {
	orig, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("cannot copy %T", obj)
	}
	if !change(obj, v1.Finalizer) {
		return nil
	}
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	if _, ok := obj.(*v1.Release); ok {
		r.writes.record(policy.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}, obj.GetResourceVersion())
	}
	return nil
}

// forget drops the in-memory state of a Release that is gone.
func (r *Reconciler) forget(key policy.Key) {
	r.failures.Reset(key)
	r.writes.forget(key)
	r.renders.forget(key)
	r.seen.forget(key)
	r.inventories.forget(key)
	r.dueSince.forget(key)
	r.adopted.forget(key)
	r.metrics.forget(key)
}
