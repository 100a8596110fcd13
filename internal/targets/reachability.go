package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// How a remote cluster that does not answer is noticed, and what its requests cost
// meanwhile (docs/decisions/0189-unreachable-cluster.md). The controller's and the
// observer's workers are shared by every cluster: a request that waits for an
// unreachable cluster holds a worker that the Releases of every other cluster need.
const (
	// ReadAnswerTimeout bounds the wait for the response headers of a read (a GET that
	// is not a watch) of a remote cluster; WriteAnswerTimeout that of any other request
	// but a watch. The dial and the TLS handshake are inside. A request past it fails,
	// and marks the cluster unreachable.
	ReadAnswerTimeout  = 3 * time.Second
	WriteAnswerTimeout = 15 * time.Second
	// probeInterval is how often an unreachable cluster's /version is read to find it
	// back; probeIdle stops probing when no request came for that long (a Cluster that
	// was deleted or is no longer used): the next request starts it again.
	probeInterval = time.Second
	probeIdle     = time.Minute
)

// ErrUnreachable is the error of a request to a remote cluster that did not answer
// its last request: it fails at once, until a probe of the cluster's /version gets
// an answer. It is not a network error, so client-go does not retry it (it retries a
// GET whose connection was reset: ten times, a second apart).
var ErrUnreachable = errors.New("the cluster did not answer its last request")

// errNoAnswer is the cause of a request cancelled by its answer timeout.
var errNoAnswer = errors.New("no answer within the timeout")

// reachability is what the connections to one remote cluster know of whether it
// answers, shared by every identity's client of that cluster (they wrap its
// transport): a request that gets no answer (a refused or reset connection, a dial,
// handshake or answer timeout) marks the cluster down; while it is down, requests
// fail at once with ErrUnreachable and one goroutine probes /version every
// probeInterval until it answers. Any HTTP answer, whatever its status, counts as
// reachable.
type reachability struct {
	host string // the server's URL, for the probe

	mu      sync.Mutex
	down    error // why the cluster is down; nil while it answers
	probing bool
	lastUse time.Time
	probe   http.RoundTripper // the first transport wrapped, for the probe
}

func newReachability(host string) *reachability { return &reachability{host: host} }

// wrap is a rest.Config's WrapTransport.
func (r *reachability) wrap(rt http.RoundTripper) http.RoundTripper {
	r.mu.Lock()
	if r.probe == nil {
		r.probe = rt
	}
	r.mu.Unlock()
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) { return r.roundTrip(rt, req) })
}

// Down is why the cluster is down, nil while it answers.
func (r *reachability) Down() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}

func (r *reachability) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if err := r.use(); err != nil {
		// Not the first failure's text: client-go retries an error whose message
		// reads like a reset connection (net.IsProbableEOF).
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), ErrUnreachable)
	}
	timeout := answerTimeout(req)
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(timeout, func() { cancel(errNoAnswer) })
	if timeout == 0 {
		timer.Stop()
	}
	resp, err := next.RoundTrip(req.WithContext(ctx))
	timedOut := !timer.Stop() && timeout > 0 && errors.Is(context.Cause(ctx), errNoAnswer)
	if err != nil {
		cancel(nil)
		if timedOut {
			err = fmt.Errorf("%s %s: no answer within %s: %w", req.Method, req.URL.Redacted(), timeout, err)
		}
		if req.Context().Err() == nil { // the caller did not give up: the cluster failed
			r.fail(err)
		}
		return nil, err
	}
	r.answered()
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
	return resp, nil
}

// answerTimeout is how long req may wait for its response headers; 0 for a watch,
// whose answer may take as long as the watch lasts.
func answerTimeout(req *http.Request) time.Duration {
	q := req.URL.Query()
	if w := q.Get("watch"); w == "true" || w == "1" || strings.Contains(req.URL.Path, "/watch/") {
		return 0
	}
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return ReadAnswerTimeout
	}
	return WriteAnswerTimeout
}

// use records a request; it returns why the cluster is down, when it is, and then
// makes sure a probe runs.
func (r *reachability) use() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastUse = time.Now()
	if r.down != nil && !r.probing {
		r.probing = true
		go r.probeUntilAnswered()
	}
	return r.down
}

func (r *reachability) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down == nil {
		r.down = err
	}
	if !r.probing {
		r.probing = true
		go r.probeUntilAnswered()
	}
}

func (r *reachability) answered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = nil
}

// probeUntilAnswered reads /version every probeInterval until the cluster answers
// (it is up again) or no request came for probeIdle.
func (r *reachability) probeUntilAnswered() {
	ticker := time.NewTicker(probeInterval)
	defer ticker.Stop()
	for range ticker.C {
		r.mu.Lock()
		if r.down == nil || time.Since(r.lastUse) > probeIdle {
			r.probing = false
			r.mu.Unlock()
			return
		}
		probe := r.probe
		r.mu.Unlock()
		if r.probeOnce(probe) {
			r.answered()
		}
	}
}

// probeOnce reports whether the cluster answers a GET of /version within
// ReadAnswerTimeout.
func (r *reachability) probeOnce(rt http.RoundTripper) bool {
	ctx, cancel := context.WithTimeout(context.Background(), ReadAnswerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.host, "/")+"/version", nil)
	if err != nil {
		return false
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return true
}

// cancelOnClose ends the request's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
