package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/reasons"
	"kumodo.io/convoy/internal/targets"
)

// The failures that end a reconcile outside its decision — a deletion that cannot go
// on, the finalizer's patch, the status write itself — reported and retried as any
// failure (policy.Failed, policy.Unrecorded): a condition when there is a Release to
// write it to, one count in the FailureCounter, the Release's retryBackoff.

// reportFailure writes res, a failure that ended the reconcile of rel outside its
// decision, to the Applied and Ready conditions (Healthy stays as it is), in one
// status write skipped when nothing changes, and returns the retry of its kind. A
// failed status write is counted once, as the reconcile's one failure.
func (r *Reconciler) reportFailure(ctx context.Context, rel *v1.Release, res policy.Result) (reconcile.Result, error) {
	key := policy.Key{Namespace: rel.Namespace, Name: rel.Name}
	in := policy.Input{Now: r.clock.Now(), Policy: syncPolicy(rel.Spec.SyncPolicy), Failures: r.failures.Get(key)}
	out := policy.Failed(in, res, currentHealthy(rel))
	logger := logr.FromContextOrDiscard(ctx).WithValues("reason", res.Reason)
	s := *rel.Status.DeepCopy()
	for _, c := range []policy.Condition{out.Applied, out.Healthy, out.Ready} {
		setCondition(&s.Conditions, c, rel.Generation, in.Now)
	}
	var writeErr error
	if !equality.Semantic.DeepEqual(rel.Status, s) {
		logger.V(1).Info("Writing the status of a failure", "message", res.Message)
		if writeErr = r.patchStatus(ctx, rel, s); writeErr != nil {
			if ctx.Err() != nil {
				return reconcile.Result{}, writeErr
			}
			logger.Error(writeErr, "Cannot write the status")
			out = policy.Unrecorded(in, out)
		}
	}
	return r.requeue(key, out, writeErr), requeueError(out, writeErr)
}

// requeue applies the reconcile's one change to the failure count and returns when to
// come back: the Outcome's. A reconcile that ends in a non-transient failure keeps the
// work queue's count too.
func (r *Reconciler) requeue(key policy.Key, out policy.Outcome, writeErr error) reconcile.Result {
	r.failures.Update(key, out.Counter)
	if out.Counter == policy.CounterKeep {
		// A non-transient failure returns no error; the work queue's count stays too.
		r.retries.keep(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: key.Namespace, Name: key.Name}})
	}
	if out.Requeue.ReturnError {
		return reconcile.Result{}
	}
	return reconcile.Result{RequeueAfter: out.Requeue.After}
}

// requeueError is the error handed to the work queue: only for a transient failure of
// a Release without retryBackoff.initial, whose limiter then schedules the retry.
func requeueError(out policy.Outcome, writeErr error) error {
	switch {
	case !out.Requeue.ReturnError:
		return nil
	case writeErr != nil:
		return writeErr
	}
	return &reasonError{reason: out.Result.Reason, message: out.Result.Message}
}

// currentHealthy is the Healthy condition as rel reports it, which a failure outside
// the decision leaves as it is; Unknown/NotAssessed when it has none.
func currentHealthy(rel *v1.Release) policy.Condition {
	if c := healthyCondition(rel); c != nil {
		return *c
	}
	lastSuccessful := ""
	if ls := rel.Status.LastSuccessful; ls != nil {
		lastSuccessful = ls.RenderRef
	}
	return policy.HealthyCondition(nil, lastSuccessful)
}

// healthyCondition is the Healthy condition rel reports; nil when it has none.
func healthyCondition(rel *v1.Release) *policy.Condition {
	c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionHealthy)
	if c == nil {
		return nil
	}
	return &policy.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

// deletionFailure is the Result of a deletion that err stopped: ClusterNotReady when
// the target cluster does not answer (or cannot be resolved), else DeleteFailed. Both
// say that the deletion waits, that convoy retries, and the way out.
func deletionFailure(rel *v1.Release, err error) policy.Result {
	why := strings.TrimSuffix(strings.TrimSpace(err.Error()), ".")
	if clusterUnanswered(err) {
		if errors.Is(err, targets.ErrUnreachable) {
			// The request's URL says nothing more, and would repeat itself.
			why = targets.ErrUnreachable.Error()
		}
		where := "the host cluster"
		if rel.Spec.Cluster != "" {
			where = fmt.Sprintf("Cluster %q", rel.Spec.Cluster)
		}
		return policy.Result{Reason: v1.ReasonClusterNotReady, Message: fmt.Sprintf(
			"The deletion waits: convoy cannot reach %s to delete what the Release applied: %s. It retries, and the "+
				"deletion goes on once the cluster answers (kubectl convoy cluster status says why it does not); to delete "+
				"the Release and leave its objects on the cluster, set spec.deletionPolicy to Orphan.", where, why)}
	}
	return policy.Result{Reason: v1.ReasonDeleteFailed, Message: fmt.Sprintf(
		"The deletion waits: deleting what the Release applied failed: %s. Convoy retries: fix what refuses the "+
			"deletion (a permission, an admission policy), or set spec.deletionPolicy to Orphan to delete the Release "+
			"and leave its objects on the cluster.", why)}
}

// clusterUnanswered reports whether err says that a cluster did not answer: it could
// not be resolved or reached (a *targets.NotReadyError of reason ClusterNotReady), a
// remote cluster known to be down (targets.ErrUnreachable), or a connection refused,
// reset or timed out.
func clusterUnanswered(err error) bool {
	if reasons.Of(err, "") == v1.ReasonClusterNotReady || errors.Is(err, targets.ErrUnreachable) {
		return true
	}
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
