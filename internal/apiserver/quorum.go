package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	storagefactory "k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/klog/v2"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// Without a quorum etcd never answers, and k8s.io/apiserver passes that on as a 504
// after the request timeout (60 s for a GET, 34 s for a write). etcdQuorum probes etcd
// in the background, as /readyz's etcd check does (a linearizable read of the
// prefix's health key through the storage's own prober), and while the probes fail
// it answers every resource request of convoy's group at once with 503, Retry-After
// and a message that names etcd. /healthz, /readyz, /livez, discovery and OpenAPI
// pass through untouched.
const (
	quorumProbeInterval = time.Second
	quorumProbeTimeout  = 2 * time.Second
	// quorumFailures consecutive failed probes make etcd unavailable: one slow read
	// during a leader election (which takes about a second) answers nothing with 503.
	quorumFailures = 2
	// quorumRetryAfter is the Retry-After of the 503, in seconds: the filter's answer
	// can change at the next probe.
	quorumRetryAfter = 1
)

// etcdQuorum holds the outcome of the last probes of etcd.
type etcdQuorum struct {
	mu       sync.RWMutex
	failures int   // consecutive failed probes
	err      error // the last probe's error
}

// withEtcdQuorum puts the 503 filter innermost in cfg's handler chain (after
// authentication and authorization, so only a caller allowed to ask learns why) and
// starts the probes when the server starts.
func withEtcdQuorum(cfg *genericapiserver.RecommendedConfig, etcd *genericoptions.EtcdOptions) error {
	if etcd == nil {
		return nil
	}
	q := &etcdQuorum{}
	build := cfg.BuildHandlerChainFunc
	serializer := cfg.Serializer
	cfg.BuildHandlerChainFunc = func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
		return build(q.filter(apiHandler, serializer), c)
	}
	sc := etcd.StorageConfig
	return cfg.AddPostStartHook("convoy-etcd-quorum", func(ctx genericapiserver.PostStartHookContext) error {
		go q.run(ctx, func() (storagefactory.Prober, error) { return storagefactory.CreateProber(sc) })
		return nil
	})
}

// run probes etcd every quorumProbeInterval until ctx is done.
func (q *etcdQuorum) run(ctx context.Context, newProber func() (storagefactory.Prober, error)) {
	var prober storagefactory.Prober
	defer func() {
		if prober != nil {
			_ = prober.Close()
		}
	}()
	t := time.NewTicker(quorumProbeInterval)
	defer t.Stop()
	for {
		var err error
		if prober == nil {
			prober, err = newProber()
		}
		if err == nil {
			c, cancel := context.WithTimeout(ctx, quorumProbeTimeout)
			err = prober.Probe(c)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		q.observe(ctx, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// observe records one probe's outcome and logs when the availability changes.
func (q *etcdQuorum) observe(ctx context.Context, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	was := q.failures >= quorumFailures
	if err == nil {
		q.failures, q.err = 0, nil
	} else {
		q.failures, q.err = q.failures+1, err
	}
	switch now := q.failures >= quorumFailures; {
	case now && !was:
		klog.FromContext(ctx).Error(err, "etcd has no quorum, answering convoy's requests with 503")
	case was && !now:
		klog.FromContext(ctx).Info("etcd answers again, serving convoy's requests")
	}
}

// unavailable is the error to answer with while etcd has no quorum, else nil.
func (q *etcdQuorum) unavailable() error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.failures < quorumFailures {
		return nil
	}
	msg := fmt.Sprintf("convoy's storage (etcd) has no quorum: %v; the API answers again when a majority of etcd's members is back (docs/operations.md)", q.err)
	err := apierrors.NewServiceUnavailable(msg)
	err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: quorumRetryAfter}
	return err
}

// filter answers the resource requests of convoy's group with 503 while etcd has no
// quorum and passes every other request on.
func (q *etcdQuorum) filter(next http.Handler, serializer runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok || !info.IsResourceRequest || info.APIGroup != convoyv1alpha1.GroupName {
			next.ServeHTTP(w, r)
			return
		}
		if err := q.unavailable(); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(quorumRetryAfter))
			responsewriters.ErrorNegotiated(err, serializer, convoyv1alpha1.SchemeGroupVersion, w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
