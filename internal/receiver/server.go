package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Defaults of the receiver server.
const (
	// DefaultMaxBodyBytes bounds a call's body: GitHub's push payloads hold at most
	// 20 commits and are far smaller.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultRate and DefaultBurst limit the calls of each Receiver: beyond them the
	// server answers 429 without reading the Secret.
	DefaultRate  = rate.Limit(2)
	DefaultBurst = 20
	// DefaultRecordEvery is how often, at most, the server writes a Receiver's
	// status.lastCall: calls in between are recorded together, at the end of it.
	DefaultRecordEvery = time.Second
)

// indexWebhookPath indexes Receivers by status.webhookPath.
const indexWebhookPath = "status.webhookPath"

func indexReceiverPath(obj client.Object) []string {
	if p := obj.(*v1.Receiver).Status.WebhookPath; p != "" {
		return []string{p}
	}
	return nil
}

// server is the receiver server: a manager Runnable on every replica (not only the
// leader), since a Service sends a call to any of them; what the call does is carried
// by the Receiver's status to the leader (recorder).
type server struct {
	addr     string
	cache    client.Reader // the manager's cache: Receivers by path, Releases, ReleaseSets
	secrets  client.Reader // the API server: Secrets are not cached
	recorder *recorder
	metrics  *metrics
	maxBody  int64
	rate     rate.Limit
	burst    int
	log      logr.Logger

	mu       sync.Mutex
	limiters map[types.UID]*rate.Limiter
}

// NeedLeaderElection: every replica serves.
func (s *server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("receiver server: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	s.log.Info("Serving Receivers", "address", ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	case err := <-done:
		return fmt.Errorf("receiver server: %w", err)
	}
}

// ServeHTTP answers one call: 404 for a path no Receiver has, 405 for another method
// than POST, 429 beyond the Receiver's rate, 413 for a body too large, then as Verify
// decides (401, 400, 200); an accepted call is recorded in the Receiver's
// status.lastCall, which makes the controller refresh.
func (s *server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	typ, result, status, msg := s.serve(req)
	s.metrics.calls.WithLabelValues(string(typ), result).Inc()
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	if status >= 400 && result != ResultNotFound {
		s.log.V(1).Info("Refused a call", "path", req.URL.Path, "status", status, "result", result, "message", msg)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

func (s *server) serve(req *http.Request) (typ v1.ReceiverType, result string, status int, msg string) {
	ctx := req.Context()
	path := req.URL.Path
	if !v1.IsReceiverWebhookPath(path) {
		return "", ResultNotFound, http.StatusNotFound, "not found"
	}
	var list v1.ReceiverList
	if err := s.cache.List(ctx, &list, client.MatchingFields{indexWebhookPath: path}); err != nil {
		return "", ResultError, http.StatusInternalServerError, "cannot list Receivers"
	}
	if len(list.Items) != 1 {
		return "", ResultNotFound, http.StatusNotFound, "not found"
	}
	rcv := &list.Items[0]
	typ = rcv.Spec.Type
	if req.Method != http.MethodPost {
		return typ, ResultBadMethod, http.StatusMethodNotAllowed, "only POST"
	}
	if !s.limiter(rcv.UID).Allow() {
		return typ, ResultRateLimited, http.StatusTooManyRequests, "too many calls of this Receiver; try again later"
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, req.Body, s.maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return typ, ResultTooLarge, http.StatusRequestEntityTooLarge, "the body is larger than " + strconv.FormatInt(s.maxBody, 10) + " bytes"
		}
		return typ, ResultError, http.StatusBadRequest, "cannot read the body"
	}
	var secret corev1.Secret
	// The Secret of the Receiver's own namespace: secretRef has only a name.
	err = s.secrets.Get(ctx, client.ObjectKey{Namespace: rcv.Namespace, Name: rcv.Spec.SecretRef.Name}, &secret)
	token, ok := secret.Data[v1.SecretKeyToken]
	if err != nil || !ok || v1.ReceiverWebhookPath(token, rcv.Name, rcv.Namespace) != path {
		// The token changed (or went) since the path was written: the old path is no
		// longer served.
		return typ, ResultNotFound, http.StatusNotFound, "not found"
	}
	v := Verify(typ, token, req.Header, body)
	if v.Status != http.StatusOK {
		return typ, v.Result, v.Status, v.Message
	}
	call := v1.ReceiverCall{Result: v.Event + ": nothing to refresh"}
	if v.Refresh {
		releases, sets, err := selected(ctx, s.cache, rcv)
		if err != nil {
			return typ, ResultError, http.StatusInternalServerError, "cannot list the selected objects"
		}
		call.Result = fmt.Sprintf("%s%s%s and %s", v.Event, refreshing, count(len(releases), "Release"), count(len(sets), "ReleaseSet"))
	}
	if err := s.recorder.record(ctx, rcv, call); err != nil {
		s.log.Error(err, "Cannot record a call", "receiver", client.ObjectKeyFromObject(rcv))
		return typ, ResultError, http.StatusServiceUnavailable, "cannot record the call; try again"
	}
	return typ, v.Result, http.StatusOK, call.Result
}

// refreshing follows the event in the status.lastCall.result of a call that
// refreshes ("push: refreshing 2 Releases and 0 ReleaseSets"): the controller
// refreshes on a new lastCall with it, not on a ping's ("ping: nothing to refresh").
const refreshing = ": refreshing "

// refreshes reports whether a lastCall asks for a refresh.
func refreshes(c *v1.ReceiverCall) bool { return c != nil && strings.Contains(c.Result, refreshing) }

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func (s *server) limiter(uid types.UID) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limiters[uid]
	if l == nil {
		l = rate.NewLimiter(s.rate, s.burst)
		s.limiters[uid] = l
	}
	return l
}

// recorder writes status.lastCall, at most once per every per Receiver: the first
// call after a quiet time at once, the calls that follow within every together at
// its end (the last of them). Each write's time is at least every after the one
// before, so that a new lastCall differs from the one before even at the second
// precision of status.
type recorder struct {
	client client.Client
	clock  clock.PassiveClock
	every  time.Duration
	log    logr.Logger

	mu      sync.Mutex
	entries map[types.NamespacedName]*recordEntry
}

type recordEntry struct {
	last    time.Time
	pending *v1.ReceiverCall
}

func (r *recorder) record(ctx context.Context, rcv *v1.Receiver, call v1.ReceiverCall) error {
	key := client.ObjectKeyFromObject(rcv)
	r.mu.Lock()
	if r.entries == nil {
		r.entries = map[types.NamespacedName]*recordEntry{}
	}
	e := r.entries[key]
	if e == nil {
		e = &recordEntry{}
		r.entries[key] = e
	}
	now := r.clock.Now()
	if e.pending != nil {
		e.pending = &call // written at the end of the current period
		r.mu.Unlock()
		return nil
	}
	if wait := e.last.Add(r.every).Sub(now); wait > 0 {
		e.pending = &call
		r.mu.Unlock()
		time.AfterFunc(wait, func() {
			r.mu.Lock()
			c := e.pending
			e.pending, e.last = nil, r.clock.Now()
			c.Time = metav1.NewTime(e.last)
			r.mu.Unlock()
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := r.write(wctx, key, *c); err != nil {
				r.log.Error(err, "Cannot record a call", "receiver", key)
			}
		})
		return nil
	}
	e.last = now
	r.mu.Unlock()
	call.Time = metav1.NewTime(now)
	return r.write(ctx, key, call)
}

// write patches status.lastCall alone (a merge patch: the controller's conditions stay).
func (r *recorder) write(ctx context.Context, key types.NamespacedName, call v1.ReceiverCall) error {
	patch := map[string]any{"status": map[string]any{"lastCall": call}}
	rcv := &v1.Receiver{}
	rcv.Namespace, rcv.Name = key.Namespace, key.Name
	return r.client.Status().Patch(ctx, rcv, client.RawPatch(types.MergePatchType, mustJSON(patch)))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// selected are the Releases and ReleaseSets of rcv's namespace its selector selects,
// from the cache.
func selected(ctx context.Context, c client.Reader, rcv *v1.Receiver) ([]v1.Release, []v1.ReleaseSet, error) {
	sel := labels.Everything()
	if rcv.Spec.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(rcv.Spec.Selector); err != nil {
			return nil, nil, fmt.Errorf("spec.selector: %w", err)
		}
	}
	opts := []client.ListOption{client.InNamespace(rcv.Namespace), client.MatchingLabelsSelector{Selector: sel}}
	var releases v1.ReleaseList
	if err := c.List(ctx, &releases, opts...); err != nil {
		return nil, nil, err
	}
	var sets v1.ReleaseSetList
	if err := c.List(ctx, &sets, opts...); err != nil {
		return nil, nil, err
	}
	return releases.Items, sets.Items, nil
}
