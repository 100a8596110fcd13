package clusterstatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/targets"
)

// Recheck is how often the Cluster status reconciler checks every Cluster
// again (its /version), whether or not anything changed. It is a constant, not a
// flag. A Cluster change (a new generation) is checked at once, and so is a change
// of a kubeconfig Secret the manager's cache can see (the Secrets are watched as
// metadata only); a Secret outside the namespaces the manager watches is picked up
// at the next recheck.
const Recheck = time.Minute

// reconciler writes the status of Clusters: the Ready condition
// (Reachable, Unreachable or KubeconfigNotReady), kubernetesVersion and
// observedGeneration. It connects through its own targets.Cache (see Setup),
// writes only when the status changed, and comes back every Recheck.
type reconciler struct {
	client   client.Client
	clusters *targets.Cache
	clock    clock.Clock
}

// Options configure the Cluster status reconciler.
type Options struct {
	// Clock stamps the Ready condition. Default: the real clock.
	Clock clock.Clock
	// SkipNameValidation allows several controllers of the same name in one process
	// (tests).
	SkipNameValidation bool
}

// Setup registers the Cluster status reconciler with mgr.
//
// Its targets.Cache is its own, not the release controller's Resolver: it reads
// Clusters without their namespaceSelector (the status says whether the cluster can
// be reached, not which namespaces it admits), which costs one more connection per
// Cluster.
func Setup(mgr manager.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	cache, err := targets.New(targets.Options{
		Host:   mgr.GetConfig(),
		Reader: anyNamespaceReader{targets.HostReader{Cached: mgr.GetClient(), Direct: mgr.GetAPIReader()}},
		Clock:  o.Clock,
	})
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), clusters: cache, clock: o.Clock}
	err = builder.ControllerManagedBy(mgr).
		Named("cluster-status").
		// A status write (ours) does not change the generation: it starts nothing.
		For(&v1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSecret), builder.OnlyMetadata).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 2,
			SkipNameValidation:      ptr.To(o.SkipNameValidation),
		}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the cluster status controller: %w", err)
	}
	return nil
}

// clustersOfSecret enqueues the Clusters whose kubeconfig is the Secret obj.
func (r *reconciler) clustersOfSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &v1.ClusterList{}
	if err := r.client.List(ctx, list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, c := range list.Items {
		ref := c.Spec.Kubeconfig.SecretRef
		if ref.Namespace == obj.GetNamespace() && ref.Name == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
		}
	}
	return out
}

// Reconcile checks one Cluster and writes its status when it changed.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cl := &v1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cl); err != nil {
		if apierrors.IsNotFound(err) {
			r.clusters.Forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !cl.DeletionTimestamp.IsZero() {
		r.clusters.Forget(cl.Name)
		return reconcile.Result{}, nil
	}
	version, cond, err := r.check(ctx, cl)
	if err != nil {
		return reconcile.Result{}, err
	}
	status := cl.Status.DeepCopy()
	status.ObservedGeneration = cl.Generation
	status.KubernetesVersion = version
	cond.Type = v1.ConditionReady
	cond.ObservedGeneration = cl.Generation
	cond.LastTransitionTime = metav1.Time{Time: r.clock.Now().Truncate(time.Second).UTC()}
	// lastTransitionTime changes only when the condition's status does.
	apimeta.SetStatusCondition(&status.Conditions, cond)
	if !equality.Semantic.DeepEqual(*status, cl.Status) {
		cl.Status = *status
		if err := r.client.Status().Update(ctx, cl); err != nil {
			return reconcile.Result{}, fmt.Errorf("write the status of Cluster %q: %w", cl.Name, err)
		}
	}
	return reconcile.Result{RequeueAfter: Recheck}, nil
}

// check connects to the Cluster through internal/targets and reads its /version. It
// returns the version (empty unless reachable) and the Ready condition without type
// or times; an error only when the host cannot be read (a retry will do).
func (r *reconciler) check(ctx context.Context, cl *v1.Cluster) (string, metav1.Condition, error) {
	target, err := r.clusters.Resolve(ctx, &v1.Release{Spec: v1.ReleaseSpec{Cluster: cl.Name}})
	if err != nil {
		cond, err := notReadyCondition(err)
		return "", cond, err
	}
	// A cached connection was checked when it was made: read /version again now.
	info, err := target.ServerVersion(ctx)
	if err != nil {
		r.clusters.Forget(cl.Name)
		return "", clusterCondition(v1.ReasonUnreachable, fmt.Sprintf(
			"cannot reach Cluster %q: check that it runs and that its kubeconfig's server and credentials are right: %v", cl.Name, err)), nil
	}
	return info.GitVersion, metav1.Condition{
		Status:  metav1.ConditionTrue,
		Reason:  v1.ReasonReachable,
		Message: fmt.Sprintf("Cluster %q answers, Kubernetes %s", cl.Name, info.GitVersion),
	}, nil
}

// notReadyCondition is the Ready condition (without type or times) of a Cluster
// that internal/targets could not resolve, by the kind of its *NotReadyError. It
// returns err itself when the failure is not the Cluster's: the host could not be
// read, or the Cluster vanished meanwhile (a retry will do).
func notReadyCondition(err error) (metav1.Condition, error) {
	nre, ok := errors.AsType[*targets.NotReadyError](err)
	if !ok {
		return metav1.Condition{}, err
	}
	switch nre.Kind {
	case targets.Unreachable:
		return clusterCondition(v1.ReasonUnreachable, nre.Error()), nil
	case targets.KubeconfigNotReady:
		return clusterCondition(v1.ReasonKubeconfigNotReady, nre.Error()), nil
	case targets.HostReadFailed, targets.ClusterMissing:
		return metav1.Condition{}, err
	case targets.NotAdmitted:
		// The status check reads Clusters without their namespaceSelector: a bug.
		return metav1.Condition{}, fmt.Errorf("the Cluster status check met a namespaceSelector: %w", err)
	default:
		return metav1.Condition{}, fmt.Errorf("unknown kind %q of cluster failure: %w", nre.Kind, err)
	}
}

func clusterCondition(reason, message string) metav1.Condition {
	return metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, Message: capitalize(message)}
}

// anyNamespaceReader reads as targets.HostReader does, but returns Clusters without
// their namespaceSelector, so that targets.Cache.Resolve checks the connection only.
type anyNamespaceReader struct{ targets.HostReader }

func (a anyNamespaceReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := a.HostReader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if c, ok := obj.(*v1.Cluster); ok {
		c.Spec.NamespaceSelector = nil
	}
	return nil
}

// capitalize makes a message start with a capital letter, without a final period.
func capitalize(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
