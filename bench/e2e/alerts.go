package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// With -alerts, every namespace of the run has an Alert that sends the event Applied
// (a new render of a Release reached Ready) of all its Releases to a signed webhook
// that the bench serves (sink): the N Releases reaching Ready are N notifications
// delivered while the controller works through them. The report adds how many arrived,
// and each one's delay after its Release's Ready, beside the to-Ready figures to
// compare with a run without -alerts.

const alertName = "bench"

// sink is the webhook the Alerts post to: it records when each Release's
// notification first arrived, and counts the repeats.
type sink struct {
	srv      *http.Server
	url      string
	mu       sync.Mutex
	arrived  map[string]time.Time
	repeats  int
	rejected int
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{arrived: map[string]time.Time{}, url: "http://" + ln.Addr().String() + "/notify"}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var n struct {
		Event  string `json:"event"`
		Object struct {
			Name string `json:"name"`
		} `json:"object"`
	}
	if err == nil {
		err = json.Unmarshal(body, &n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || n.Object.Name == "" {
		s.rejected++
		http.Error(w, "not a notification", http.StatusBadRequest)
		return
	}
	if _, ok := s.arrived[n.Object.Name]; ok {
		s.repeats++
	} else {
		s.arrived[n.Object.Name] = now
	}
	w.WriteHeader(http.StatusOK)
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.arrived)
}

func (s *sink) stop() { _ = s.srv.Close() }

// createAlerts makes, in each namespace, the Secret of the sink's address and the
// Alert of the event Applied of every Release, as the admin.
func (e *env) createAlerts(ctx context.Context, namespaces []string, url string) error {
	for _, ns := range namespaces {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: alertName + "-webhook"},
			StringData: map[string]string{"address": url, "token": "bench"},
		}
		if _, err := e.Kube.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the Secret of the Alert in %s: %w", ns, err)
		}
		alert := &convoyv1alpha1.Alert{
			TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Alert"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: alertName},
			Spec: convoyv1alpha1.AlertSpec{
				Events: []convoyv1alpha1.AlertEvent{convoyv1alpha1.AlertEventApplied},
				Provider: convoyv1alpha1.AlertProvider{
					Type:      convoyv1alpha1.AlertProviderWebhook,
					SecretRef: convoyv1alpha1.LocalObjectReference{Name: secret.Name},
				},
			},
		}
		err := e.Convoy.Post().Namespace(ns).Resource("alerts").Body(alert).Do(ctx).Error()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the Alert in %s: %w", ns, err)
		}
	}
	return nil
}

// alertResult is what the sink received of the run's N Releases.
type alertResult struct {
	delivered, repeats, rejected int
	// p50, p99, max: Ready → notification arrived, per Release.
	p50, p99, max time.Duration
	// lastAfterReady: the last notification after the last Ready.
	lastAfterReady time.Duration
}

// waitDelivered waits up to timeout for the notification of each of the n Releases,
// then reports them against the times the Releases became Ready (ready).
func (s *sink) waitDelivered(ctx context.Context, n int, ready map[string]time.Time, timeout time.Duration) *alertResult {
	deadline := time.Now().Add(timeout)
	for s.count() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := &alertResult{delivered: len(s.arrived), repeats: s.repeats, rejected: s.rejected}
	var lats []time.Duration
	var lastReady, lastArrived time.Time
	for name, at := range s.arrived {
		if r, ok := ready[name]; ok {
			lats = append(lats, at.Sub(r))
			lastReady = maxTime(lastReady, r)
		}
		lastArrived = maxTime(lastArrived, at)
	}
	if len(lats) > 0 {
		slices.Sort(lats)
		res.p50, res.p99, res.max = lats[len(lats)/2], lats[min(len(lats)-1, len(lats)*99/100)], lats[len(lats)-1]
		res.lastAfterReady = lastArrived.Sub(lastReady)
	}
	return res
}

func (a *alertResult) print(w io.Writer, n int) {
	fmt.Fprintf(w, "\nAlerts (-alerts: one Alert per namespace, event Applied, to a webhook served by the bench):\n")
	fmt.Fprintf(w, "  notifications delivered: %d of %d (repeats %d, rejected %d)\n", a.delivered, n, a.repeats, a.rejected)
	fmt.Fprintf(w, "  Ready → delivered per Release: p50 %s, p99 %s, max %s; last delivery %s after the last Ready\n",
		a.p50.Round(time.Millisecond), a.p99.Round(time.Millisecond), a.max.Round(time.Millisecond), a.lastAfterReady.Round(time.Millisecond))
}
