package receiver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrlbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Refresher forgets what the caches hold of a chart source's repository (the Git ref
// listing, the Helm index, the OCI tags), so that the next render reads it again:
// the controller's *source.Fetcher.
type Refresher interface {
	Refresh(src v1.ChartSource)
}

// Options configure the Receiver controller and the receiver server.
type Options struct {
	// BindAddress is where the receiver server listens (--receiver-bind-address);
	// empty: no server, and Receivers are Ready=False ReceiverServerDisabled.
	BindAddress string
	// Refresher is told the chart source of every object a call refreshes; nil:
	// none (the objects are still reconciled).
	Refresher Refresher
	// Releases and Sets receive the Releases and ReleaseSets a call refreshes: the
	// sources of their controllers (source.Channel). Nil: not sent.
	Releases, Sets chan<- event.GenericEvent
	// Metrics registers the metrics. Default: controller-runtime's registry.
	Metrics prometheus.Registerer
	// SkipNameValidation allows several controllers of the same name in one process (tests).
	SkipNameValidation bool
	// MaxBodyBytes, Rate, Burst and RecordEvery tune the server (Default*).
	MaxBodyBytes int64
	Rate         float64
	Burst        int
	RecordEvery  time.Duration
}

// Setup registers the Receiver controller with mgr and, with o.BindAddress, the
// receiver server (on every replica).
func Setup(ctx context.Context, mgr manager.Manager, o Options) error {
	if o.Metrics == nil {
		o.Metrics = ctrlmetrics.Registry
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1.Receiver{}, indexWebhookPath, indexReceiverPath); err != nil {
		return fmt.Errorf("index Receivers by %s: %w", indexWebhookPath, err)
	}
	r := &Reconciler{client: mgr.GetClient(), serving: o.BindAddress != "", refresher: o.Refresher,
		releases: o.Releases, sets: o.Sets, seen: map[types.UID]string{}}
	err := ctrlbuilder.ControllerManagedBy(mgr).
		Named("receiver").
		For(&v1.Receiver{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: ptr.To(o.SkipNameValidation)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the Receiver controller: %w", err)
	}
	m := newMetrics(o.Metrics)
	if o.BindAddress == "" {
		return nil
	}
	s := &server{
		addr: o.BindAddress, cache: mgr.GetClient(), secrets: mgr.GetAPIReader(), metrics: m,
		maxBody: cmpOr(o.MaxBodyBytes, DefaultMaxBodyBytes), rate: rateOr(o.Rate), burst: cmpOr(o.Burst, DefaultBurst),
		log:      mgr.GetLogger().WithName("receiver-server"),
		limiters: map[types.UID]*rate.Limiter{},
		recorder: &recorder{client: mgr.GetClient(), clock: clock.RealClock{}, every: cmpOr(o.RecordEvery, DefaultRecordEvery),
			log: mgr.GetLogger().WithName("receiver-server")},
	}
	return mgr.Add(s)
}

// Reconciler writes a Receiver's status (webhookPath, Ready, observedGeneration) and
// refreshes what it selects when its status.lastCall says a new call asks for it.
type Reconciler struct {
	client    client.Client
	serving   bool
	refresher Refresher
	releases  chan<- event.GenericEvent
	sets      chan<- event.GenericEvent

	mu sync.Mutex
	// seen is the lastCall of each Receiver when last reconciled, to act on a new one
	// once; a Receiver seen for the first time is not refreshed (after a start every
	// Release is reconciled and reads its source anyway).
	seen map[types.UID]string
}

// resecretAfter is how often a Receiver's Secret is read again, so that a new token
// moves status.webhookPath (Secrets are not watched: the controller caches none).
const resecretAfter = time.Minute

// Reconcile writes the status of one Receiver and refreshes on a new call.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rcv := &v1.Receiver{}
	if err := r.client.Get(ctx, req.NamespacedName, rcv); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !rcv.DeletionTimestamp.IsZero() {
		r.forget(rcv.UID)
		return reconcile.Result{}, nil
	}
	if call, isNew := r.newCall(rcv); isNew {
		if err := r.refresh(ctx, rcv); err != nil {
			return reconcile.Result{}, err
		}
		r.see(rcv.UID, call)
	}
	var secret corev1.Secret
	err := r.client.Get(ctx, client.ObjectKey{Namespace: rcv.Namespace, Name: rcv.Spec.SecretRef.Name}, &secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read the Secret %s: %w", rcv.Spec.SecretRef.Name, err)
	}
	token, found := secret.Data[v1.SecretKeyToken]
	want := DesiredStatus(rcv, err == nil, found, token, r.serving)
	if err := r.writeStatus(ctx, rcv, want); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: resecretAfter}, nil
}

// DesiredStatus is the status of rcv given whether its Secret exists, whether it has
// the key token (and its value), and whether the receiver server runs: webhookPath
// whenever the token is there, Ready as decision 0214 names it, observedGeneration;
// lastCall as it is.
func DesiredStatus(rcv *v1.Receiver, secretFound, tokenFound bool, token []byte, serving bool) v1.ReceiverStatus {
	st := *rcv.Status.DeepCopy()
	st.ObservedGeneration = rcv.Generation
	cond := metav1.Condition{Type: v1.ConditionReady, ObservedGeneration: rcv.Generation}
	switch {
	case !secretFound:
		st.WebhookPath = ""
		cond.Status, cond.Reason = metav1.ConditionFalse, v1.ReasonSecretNotFound
		cond.Message = fmt.Sprintf("The Secret %s is not in namespace %s; create it with the key %s.", rcv.Spec.SecretRef.Name, rcv.Namespace, v1.SecretKeyToken)
	case !tokenFound || len(token) == 0:
		st.WebhookPath = ""
		cond.Status, cond.Reason = metav1.ConditionFalse, v1.ReasonSecretNotFound
		cond.Message = fmt.Sprintf("The Secret %s has no key %s; add the shared token under it.", rcv.Spec.SecretRef.Name, v1.SecretKeyToken)
	case !serving:
		st.WebhookPath = v1.ReceiverWebhookPath(token, rcv.Name, rcv.Namespace)
		cond.Status, cond.Reason = metav1.ConditionFalse, v1.ReasonReceiverServerDisabled
		cond.Message = "The controller runs without --receiver-bind-address, so nothing answers status.webhookPath; " +
			"start it with the flag (chart value receiver.enabled)."
	default:
		st.WebhookPath = v1.ReceiverWebhookPath(token, rcv.Name, rcv.Namespace)
		cond.Status, cond.Reason = metav1.ConditionTrue, v1.ReasonServing
		cond.Message = fmt.Sprintf("The receiver server answers calls of type %s at status.webhookPath.", rcv.Spec.Type)
	}
	apimeta.SetStatusCondition(&st.Conditions, cond)
	return st
}

// writeStatus patches what changed of the status, nothing when nothing did; lastCall
// is the receiver server's and is left out of the patch.
func (r *Reconciler) writeStatus(ctx context.Context, rcv *v1.Receiver, want v1.ReceiverStatus) error {
	if statusEqual(rcv.Status, want) {
		return nil
	}
	patch := map[string]any{"status": map[string]any{
		"observedGeneration": want.ObservedGeneration,
		"conditions":         want.Conditions,
		"webhookPath":        want.WebhookPath,
	}}
	if err := r.client.Status().Patch(ctx, rcv, client.RawPatch(types.MergePatchType, mustJSON(patch))); err != nil {
		return fmt.Errorf("write the status: %w", err)
	}
	return nil
}

// statusEqual compares what the controller writes, the conditions' transition times
// aside (SetStatusCondition keeps them when the status does not change).
func statusEqual(a, b v1.ReceiverStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.WebhookPath != b.WebhookPath || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// newCall returns rcv's lastCall as a key and whether it is new since the last
// reconcile and asks for a refresh (then see records it once refreshed). A lastCall
// that asks for none is recorded at once.
func (r *Reconciler) newCall(rcv *v1.Receiver) (string, bool) {
	key := ""
	if c := rcv.Status.LastCall; c != nil {
		key = c.Time.UTC().Format(time.RFC3339) + " " + c.Result
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, seen := r.seen[rcv.UID]
	if seen && old != key && refreshes(rcv.Status.LastCall) {
		return key, true
	}
	r.seen[rcv.UID] = key
	return key, false
}

func (r *Reconciler) see(uid types.UID, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[uid] = key
}

func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, uid)
}

// refresh forgets the cached listings of the sources of what rcv selects and sends
// each object to its controller.
func (r *Reconciler) refresh(ctx context.Context, rcv *v1.Receiver) error {
	releases, sets, err := selected(ctx, r.client, rcv)
	if err != nil {
		return fmt.Errorf("list what the Receiver selects: %w", err)
	}
	for i := range releases {
		rel := &releases[i]
		if r.refresher != nil {
			r.refresher.Refresh(rel.Spec.Chart)
		}
		if err := send(ctx, r.releases, rel); err != nil {
			return err
		}
	}
	for i := range sets {
		set := &sets[i]
		if r.refresher != nil {
			r.refresher.Refresh(set.Spec.Template.Spec.Chart)
		}
		if err := send(ctx, r.sets, set); err != nil {
			return err
		}
	}
	ctrllog.FromContext(ctx).Info("Refreshed on a call", "releases", len(releases), "releaseSets", len(sets),
		"call", rcv.Status.LastCall.Result)
	return nil
}

func send(ctx context.Context, ch chan<- event.GenericEvent, obj client.Object) error {
	if ch == nil {
		return nil
	}
	select {
	case ch <- event.GenericEvent{Object: obj}:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("the controller stops"), ctx.Err())
	}
}

func cmpOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func rateOr(v float64) rate.Limit {
	if v > 0 {
		return rate.Limit(v)
	}
	return DefaultRate
}
