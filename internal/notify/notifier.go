package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Defaults of Options.
const (
	// DefaultQueueBound is how many notifications may wait for delivery, all Alerts
	// together; beyond it new ones are dropped (and counted).
	DefaultQueueBound = 10000
	// DefaultMaxAttempts is how many times a notification is posted before it is
	// given up.
	DefaultMaxAttempts = 8
	// DefaultBaseDelay and DefaultMaxDelay bound the exponential backoff between the
	// attempts of one notification: 1s, 2s, 4s, … up to 5 minutes.
	DefaultBaseDelay = time.Second
	DefaultMaxDelay  = 5 * time.Minute
	// DefaultWorkers is how many Alerts deliver at the same time (one notification
	// at a time per Alert, in order).
	DefaultWorkers = 4
	// DefaultTimeout bounds one post.
	DefaultTimeout = 10 * time.Second
	// sentBound is how many event keys per Alert the deduplication remembers, all
	// Alerts together; the oldest are forgotten first.
	sentBound = 100000
)

// EventRecorder records Kubernetes Events (the controller's recorder).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Options configure the Notifier.
type Options struct {
	// Events records a Warning on an Alert whose delivery fails. Default: the
	// manager's recorder.
	Events EventRecorder
	// Metrics registers the metrics. Nil: not registered.
	Metrics prometheus.Registerer
	// HTTPClient posts. Default: a client with DefaultTimeout.
	HTTPClient *http.Client
	// QueueBound, MaxAttempts, BaseDelay, MaxDelay, Workers: see the defaults.
	QueueBound  int
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
	Workers     int
	// Clock gives the time of deliveries. Default: the real clock.
	Clock clock.Clock
}

// Notifier delivers the notifications of the Alerts in the manager's cache. It runs
// on the leader only (a manager.Runnable that needs leader election).
type Notifier struct {
	cache   cache.Cache
	client  client.Client
	secrets client.Reader
	events  EventRecorder
	http    *http.Client
	clock   clock.Clock
	o       Options
	metrics *metrics
	queue   workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// pending are the notifications of each Alert (namespace/name) waiting, oldest
	// first; the first is the one being delivered.
	pending map[string]*alertQueue
	total   int
	sent    *keySet
	ctx     context.Context
	// started is closed once the handlers are registered.
	started chan struct{}
	// dropped are the notifications of each Alert dropped because the queue was full
	// since its last delivery; drops has the Alerts whose drops are to be reported.
	dropped map[string]*drops
	drops   workqueue.TypedDelayingInterface[string]
}

// drops are the notifications of an Alert dropped since its last delivery.
type drops struct {
	count int
	since time.Time
	last  Event
}

// dropReportDelay bounds how often the drops of one Alert are reported (status and
// Event): the reports of a flood of drops are merged.
const dropReportDelay = time.Second

type alertQueue struct {
	items    []Event
	attempts int
}

// Setup adds a Notifier to mgr.
func Setup(mgr manager.Manager, o Options) (*Notifier, error) {
	if o.Events == nil {
		o.Events = mgr.GetEventRecorder("convoy-notifier")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: DefaultTimeout}
	}
	if o.QueueBound <= 0 {
		o.QueueBound = DefaultQueueBound
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = DefaultBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	n := &Notifier{
		cache:   mgr.GetCache(),
		client:  mgr.GetClient(),
		secrets: mgr.GetAPIReader(),
		events:  o.Events,
		http:    o.HTTPClient,
		clock:   o.Clock,
		o:       o,
		metrics: newMetrics(o.Metrics),
		pending: map[string]*alertQueue{},
		sent:    newKeySet(sentBound),
		started: make(chan struct{}),
		dropped: map[string]*drops{},
	}
	if err := mgr.Add(n); err != nil {
		return nil, fmt.Errorf("add the notifier: %w", err)
	}
	return n, nil
}

// Started is closed once the Notifier watches the objects: a transition after it is
// notified.
func (n *Notifier) Started() <-chan struct{} { return n.started }

// NeedLeaderElection: only the leader (of a shard) notifies.
func (n *Notifier) NeedLeaderElection() bool { return true }

// Start registers the informer handlers once the Alerts are in the cache, then
// delivers until ctx ends.
func (n *Notifier) Start(ctx context.Context) error {
	n.ctx = ctx
	n.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](n.o.BaseDelay, n.o.MaxDelay),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "convoy-notifier"})
	defer n.queue.ShutDown()
	n.drops = workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "convoy-notifier-drops"})
	defer n.drops.ShutDown()

	alerts, err := n.cache.GetInformer(ctx, &v1.Alert{})
	if err != nil {
		return fmt.Errorf("notifier: watch Alerts: %w", err)
	}
	if _, err := alerts.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.alertChanged(obj) },
		UpdateFunc: func(_, obj any) { n.alertChanged(obj) },
		DeleteFunc: func(obj any) { n.alertDeleted(obj) },
	}); err != nil {
		return fmt.Errorf("notifier: watch Alerts: %w", err)
	}
	kinds := []client.Object{&v1.Release{}, &v1.ReleaseSet{}, &v1.ReleaseInventory{}}
	informers := make([]cache.Informer, len(kinds))
	for i, obj := range kinds {
		if informers[i], err = n.cache.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("notifier: watch %T: %w", obj, err)
		}
	}
	// The Alerts are cached before the objects are looked at, so that the objects
	// seen at start find the Alerts that select them; the handlers registered on
	// synced informers get the objects of their initial list first (catch-up).
	if !n.cache.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	for i, inf := range informers {
		obj := kinds[i]
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, initial bool) { n.observe(nil, obj, initial) },
			UpdateFunc: func(old, obj any) { n.observe(old, obj, false) },
		}); err != nil {
			return fmt.Errorf("notifier: watch %T: %w", obj, err)
		}
	}
	close(n.started)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n.reportNextDrops(ctx) {
		}
	}()
	for range n.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	n.queue.ShutDown()
	n.drops.ShutDown()
	wg.Wait()
	return nil
}

// observe turns the change of an object into notifications. It never blocks: it reads
// the cache and appends to the queues. catchUp (the object as the cache found it at
// start) sends only what happened after the last delivery of each Alert (decision
// 0217).
func (n *Notifier) observe(prev, cur any, catchUp bool) {
	var rel *v1.Release
	if inv, ok := cur.(*v1.ReleaseInventory); ok {
		rel = &v1.Release{}
		if err := n.cache.Get(n.ctx, client.ObjectKey{Namespace: inv.Namespace, Name: inv.Name}, rel); err != nil {
			return
		}
	}
	events := Transition(prev, cur, rel)
	if len(events) == 0 {
		return
	}
	var alerts v1.AlertList
	if err := n.cache.List(n.ctx, &alerts, client.InNamespace(events[0].Object.Namespace)); err != nil {
		return
	}
	for i := range alerts.Items {
		a := &alerts.Items[i]
		for _, e := range events {
			if !Selects(a, e) {
				continue
			}
			if catchUp && !e.Time.After(watermark(a)) {
				continue
			}
			n.enqueue(a, e)
		}
	}
}

// watermark is the time before which an Alert has handled every event: its last
// delivery, or its creation.
func watermark(a *v1.Alert) time.Time {
	if d := a.Status.LastDelivery; d != nil {
		return d.Time.Time
	}
	return a.CreationTimestamp.Time
}

func alertKey(a *v1.Alert) string { return a.Namespace + "/" + a.Name }

// enqueue appends e to a's queue unless a has taken e already or the queue is full.
func (n *Notifier) enqueue(a *v1.Alert, e Event) {
	k := alertKey(a)
	sentKey := string(a.UID) + "|" + e.Key
	n.mu.Lock()
	if n.sent.has(sentKey) {
		n.mu.Unlock()
		return
	}
	if n.total >= n.o.QueueBound {
		d := n.dropped[k]
		if d == nil {
			d = &drops{since: n.clock.Now()}
			n.dropped[k] = d
		}
		d.count++
		d.last = e
		n.mu.Unlock()
		n.metrics.delivery(a.Spec.Provider.Type, resultDropped)
		klog.Background().Info("notification dropped: the queue is full", "alert", k, "event", e.Type,
			"object", e.Object.Kind+"/"+e.Object.Name, "bound", n.o.QueueBound)
		// Reported on the Alert by reportNextDrops, never here: an informer handler
		// does not wait on the API server.
		n.drops.AddAfter(k, dropReportDelay)
		return
	}
	n.sent.add(sentKey)
	q := n.pending[k]
	if q == nil {
		q = &alertQueue{}
		n.pending[k] = q
	}
	q.items = append(q.items, e)
	n.total++
	n.metrics.pending.Set(float64(n.total))
	n.mu.Unlock()
	n.queue.Add(k)
}

func (n *Notifier) alertChanged(obj any) {
	a, ok := obj.(*v1.Alert)
	if !ok || a.DeletionTimestamp != nil {
		return
	}
	if a.Status.ObservedGeneration != a.Generation && n.queue != nil {
		// A new or changed Alert: check its Secret and record the generation.
		n.queue.Add(alertKey(a))
	}
}

func (n *Notifier) alertDeleted(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	a, ok := obj.(*v1.Alert)
	if !ok {
		return
	}
	n.drop(alertKey(a))
}

// drop forgets the notifications of an Alert that is gone.
func (n *Notifier) drop(k string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if q := n.pending[k]; q != nil {
		n.total -= len(q.items)
		delete(n.pending, k)
		n.metrics.pending.Set(float64(n.total))
	}
	delete(n.dropped, k)
}

// dropNote says how many notifications of the Alert k were dropped since its last
// delivery ("" if none).
func (n *Notifier) dropNote(k string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.dropped[k]
	if d == nil || d.count == 0 {
		return ""
	}
	return fmt.Sprintf("%d dropped since %s as the queue was full", d.count, d.since.UTC().Format(time.RFC3339))
}

// reportNextDrops reports the drops of the next Alert that has some: a Warning Event
// on the Alert and its Ready condition NotificationsDropped, saying how many were
// dropped since when and what to do.
func (n *Notifier) reportNextDrops(ctx context.Context) bool {
	k, shutdown := n.drops.Get()
	if shutdown {
		return false
	}
	defer n.drops.Done(k)
	n.mu.Lock()
	d := n.dropped[k]
	var count int
	var since time.Time
	var last Event
	if d != nil {
		count, since, last = d.count, d.since, d.last
	}
	n.mu.Unlock()
	if count == 0 {
		return true
	}
	ns, name, _ := strings.Cut(k, "/")
	alert := &v1.Alert{}
	if err := n.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, alert); err != nil {
		return true
	}
	noun := "notifications"
	if count == 1 {
		noun = "notification"
	}
	msg := fmt.Sprintf("%d %s dropped since %s (the last: %s of %s): the notifier's queue is full (%d waiting, all Alerts); "+
		"the provider of this or another Alert is slow or failing: check its address and the Alerts' DeliveryFailed Events",
		count, noun, since.UTC().Format(time.RFC3339), last.Type, objectName(last), n.o.QueueBound)
	n.events.Eventf(alert, nil, corev1.EventTypeWarning, v1.ReasonNotificationsDropped, "Enqueue", "%s", msg)
	ready := &metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: v1.ReasonNotificationsDropped, Message: msg}
	if err := n.writeStatus(ctx, alert, ready, nil); err != nil {
		klog.FromContext(ctx).Error(err, "write the Alert's status", "alert", k)
		n.drops.AddAfter(k, dropReportDelay)
	}
	return true
}

// head is the notification an Alert delivers next, and how many attempts it had.
func (n *Notifier) head(k string) (Event, int, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	q := n.pending[k]
	if q == nil || len(q.items) == 0 {
		return Event{}, 0, false
	}
	return q.items[0], q.attempts, true
}

// pop removes the head of an Alert's queue; it says whether more wait.
func (n *Notifier) pop(k string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	q := n.pending[k]
	if q == nil || len(q.items) == 0 {
		return false
	}
	q.items = q.items[1:]
	q.attempts = 0
	n.total--
	n.metrics.pending.Set(float64(n.total))
	if len(q.items) == 0 {
		delete(n.pending, k)
		return false
	}
	return true
}

func (n *Notifier) failedAttempt(k string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if q := n.pending[k]; q != nil {
		q.attempts++
		return q.attempts
	}
	return 0
}

func (n *Notifier) processNext(ctx context.Context) bool {
	k, shutdown := n.queue.Get()
	if shutdown {
		return false
	}
	defer n.queue.Done(k)
	n.process(ctx, k)
	return true
}

// process delivers the head of the Alert k's queue, or, with none, checks the Alert's
// Secret and records its generation.
func (n *Notifier) process(ctx context.Context, k string) {
	ns, name, _ := strings.Cut(k, "/")
	alert := &v1.Alert{}
	if err := n.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, alert); err != nil {
		if apierrors.IsNotFound(err) {
			n.drop(k)
			n.queue.Forget(k)
		} else {
			n.queue.AddRateLimited(k)
		}
		return
	}
	log := klog.FromContext(ctx).WithValues("alert", k)
	e, _, ok := n.head(k)
	address, token, secretErr := n.secret(ctx, alert)
	if !ok {
		// Nothing to deliver: the status records the generation and a missing Secret.
		var ready *metav1.Condition
		if secretErr != nil && errors.Is(secretErr, errSecretNotFound) {
			ready = &metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: v1.ReasonSecretNotFound, Message: secretErr.Error()}
		}
		if err := n.writeStatus(ctx, alert, ready, nil); err != nil {
			log.Error(err, "write the Alert's status")
			n.queue.AddRateLimited(k)
		}
		return
	}
	now := n.clock.Now()
	var ready metav1.Condition
	var result string
	var failed bool
	if secretErr != nil {
		failed, result = true, secretErr.Error()
		reason := v1.ReasonDeliveryFailed
		if errors.Is(secretErr, errSecretNotFound) {
			reason = v1.ReasonSecretNotFound
		}
		ready = metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason,
			Message: fmt.Sprintf("%s; %s of %s was not sent", secretErr.Error(), e.Type, objectName(e))}
	} else {
		status, err := n.post(ctx, alert.Spec.Provider.Type, address, token, e, alert.Spec.UIURL)
		result = status
		if err != nil {
			failed = true
			if result == "" {
				result = err.Error()
			}
			ready = metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1.ReasonDeliveryFailed,
				Message: fmt.Sprintf("%s of %s: %v; check the URL in key %s of Secret %s", e.Type, objectName(e), err,
					v1.SecretKeyAddress, alert.Spec.Provider.SecretRef.Name)}
		} else {
			ready = metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonDelivered,
				Message: fmt.Sprintf("%s of %s delivered: %s", e.Type, objectName(e), status)}
		}
	}
	delivery := &v1.AlertDelivery{Time: metav1.NewTime(now), Event: e.Type,
		Object: v1.AlertObjectReference{Kind: e.Object.Kind, Name: e.Object.Name}, Result: result}
	if !failed {
		n.metrics.delivery(alert.Spec.Provider.Type, resultDelivered)
		n.mu.Lock()
		delete(n.dropped, k)
		n.mu.Unlock()
		more := n.pop(k)
		n.queue.Forget(k)
		if err := n.writeStatus(ctx, alert, &ready, delivery); err != nil {
			log.Error(err, "write the Alert's status")
		}
		if more {
			n.queue.Add(k)
		}
		return
	}
	if ctx.Err() != nil {
		// The notifier stops: the post was cut short, not refused; nothing to record.
		return
	}
	n.metrics.delivery(alert.Spec.Provider.Type, resultFailed)
	attempts := n.failedAttempt(k)
	n.events.Eventf(alert, nil, corev1.EventTypeWarning, ready.Reason, "Deliver", "%s", ready.Message)
	if attempts >= n.o.MaxAttempts {
		ready.Message += fmt.Sprintf(" (given up after %d attempts)", attempts)
		n.metrics.delivery(alert.Spec.Provider.Type, resultDropped)
		more := n.pop(k)
		n.queue.Forget(k)
		if more {
			n.queue.Add(k)
		}
	} else {
		ready.Message += fmt.Sprintf(" (attempt %d of %d, retried with backoff)", attempts, n.o.MaxAttempts)
		n.queue.AddRateLimited(k)
	}
	log.Info("notification not delivered", "event", e.Type, "object", objectName(e), "result", result, "attempt", attempts)
	if note := n.dropNote(k); note != "" {
		// A failure does not hide the drops it caused.
		ready.Message += "; " + note
	}
	if err := n.writeStatus(ctx, alert, &ready, delivery); err != nil {
		log.Error(err, "write the Alert's status")
	}
}

func objectName(e Event) string { return e.Object.Kind + " " + e.Object.Name }

// errSecretNotFound marks a missing Secret or key.
var errSecretNotFound = errors.New("secret not found")

type secretError struct{ msg string }

func (s secretError) Error() string        { return s.msg }
func (s secretError) Is(target error) bool { return target == errSecretNotFound }

// secret reads the Alert's Secret, of the Alert's own namespace only: the address and
// the token.
func (n *Notifier) secret(ctx context.Context, a *v1.Alert) (address string, token []byte, err error) {
	name := a.Spec.Provider.SecretRef.Name
	s := &corev1.Secret{}
	if err := n.secrets.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil, secretError{fmt.Sprintf("Secret %s/%s not found: create it with the key %s (the URL to post to)",
				a.Namespace, name, v1.SecretKeyAddress)}
		}
		return "", nil, fmt.Errorf("read Secret %s/%s: %w", a.Namespace, name, err)
	}
	address = strings.TrimSpace(string(s.Data[v1.SecretKeyAddress]))
	if address == "" {
		return "", nil, secretError{fmt.Sprintf("Secret %s/%s has no key %s: add the URL to post to",
			a.Namespace, name, v1.SecretKeyAddress)}
	}
	return address, s.Data[v1.SecretKeyToken], nil
}

// post sends e to address: the HTTP status, and an error unless it is 2xx.
func (n *Notifier) post(ctx context.Context, t v1.AlertProviderType, address string, token []byte, e Event, uiURL string) (string, error) {
	body, err := Body(t, e, uiURL)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, address, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("the address is not a URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "convoy-notifier")
	if t == v1.AlertProviderWebhook && len(token) > 0 {
		req.Header.Set(v1.HeaderSignature, Signature(body, token))
	}
	resp, err := n.http.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			// url.Error names the URL, which holds the webhook's secret path.
			err = ue.Unwrap()
		}
		return "", fmt.Errorf("no answer: %w", err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("the provider answered %s", resp.Status)
		if s := strings.TrimSpace(string(snippet)); s != "" {
			msg += ": " + s
		}
		return resp.Status, errors.New(msg)
	}
	return resp.Status, nil
}

// writeStatus writes the Alert's status when it changes: the generation, the Ready
// condition (when given) and the delivery (when given).
func (n *Notifier) writeStatus(ctx context.Context, a *v1.Alert, ready *metav1.Condition, d *v1.AlertDelivery) error {
	st := a.Status.DeepCopy()
	st.ObservedGeneration = a.Generation
	if ready != nil {
		ready.ObservedGeneration = a.Generation
		if c := apimeta.FindStatusCondition(st.Conditions, v1.ConditionReady); c == nil || c.Status != ready.Status {
			ready.LastTransitionTime = metav1.NewTime(n.clock.Now())
		}
		apimeta.SetStatusCondition(&st.Conditions, *ready)
	}
	if d != nil {
		st.LastDelivery = d
	}
	if equality.Semantic.DeepEqual(st, &a.Status) {
		return nil
	}
	next := a.DeepCopy()
	next.Status = *st
	if err := n.client.Status().Patch(ctx, next, client.MergeFrom(a)); err != nil {
		return fmt.Errorf("write the status of Alert %s/%s: %w", a.Namespace, a.Name, err)
	}
	return nil
}

// keySet is a set of strings that forgets its oldest keys beyond a bound.
type keySet struct {
	bound int
	keys  map[string]struct{}
	order []string
}

func newKeySet(bound int) *keySet { return &keySet{bound: bound, keys: map[string]struct{}{}} }

func (s *keySet) has(k string) bool { _, ok := s.keys[k]; return ok }

func (s *keySet) add(k string) {
	if s.has(k) {
		return
	}
	s.keys[k] = struct{}{}
	s.order = append(s.order, k)
	for len(s.order) > s.bound {
		delete(s.keys, s.order[0])
		s.order = s.order[1:]
	}
}
