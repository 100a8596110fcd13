package targets

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Target is a connection to one target cluster, as one identity.
type Target struct {
	// Name is the Cluster's name; empty for the host cluster.
	Name string
	// Config is the connection's configuration. Do not modify it.
	Config *rest.Config
	// Client reads and writes objects on the target, as Identity. Its RESTMapper
	// discovers kinds as they appear, as internal/apply needs. It does not cache
	// reads.
	Client client.Client
	// Version is the target's version, read when the connection was made.
	Version *version.Info
	// Identity is who Client's requests are made as; zero: convoy's own identity
	// (the kubeconfig's, or the controller's on the host).
	Identity Identity
	// Base is the same cluster with convoy's own identity (the Target itself when
	// Identity is zero): for what convoy reads for itself, such as the observer's
	// shared informers.
	Base *Target

	httpClient *http.Client
	// reach is whether a remote cluster answers; nil for the host.
	reach     *reachability
	dynamic   dynamic.Interface
	versions  *discovery.DiscoveryClient
	discovery discovery.CachedDiscoveryInterface
	clock     clock.PassiveClock
	ttl       time.Duration

	mu        sync.Mutex
	fetchedAt time.Time
	// last is the Discovery read since fetchedAt; nil when none is or when a group
	// failed (read again at each call, as the cached discovery client retries it).
	last *Discovery
}

// Discovery is what a render needs to know about its target.
type Discovery struct {
	// KubeVersion is the target's gitVersion, such as v1.37.2.
	KubeVersion string
	// Resources are the group versions and resources the target serves.
	Resources []*metav1.APIResourceList
}

// newTarget connects to the cluster of cfg, checks that it answers (its /version)
// and returns the connection. name is the Cluster's name, empty for the host.
func newTarget(ctx context.Context, name string, cfg *rest.Config, clk clock.PassiveClock, ttl time.Duration) (*Target, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		// The requests name convoy in the target's audit log (client-go's default:
		// "<binary>/<version> (<os>/<arch>) kubernetes/<commit>"); a kubeconfig has no
		// user agent, and the clients below would send Go's.
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	var reach *reachability
	if name != "" {
		// A remote cluster: its requests are bounded and fail at once while it does
		// not answer (reachability.go). The identities' configs copy the wrapper, so
		// they share what it knows.
		reach = newReachability(cfg.Host)
		cfg.Wrap(reach.wrap)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, &configError{fmt.Errorf("make an HTTP client: %w", err)}
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, &configError{fmt.Errorf("make a discovery client: %w", err)}
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, &configError{fmt.Errorf("make a REST mapper: %w", err)}
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper, Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, &configError{fmt.Errorf("make a client: %w", err)}
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, &configError{fmt.Errorf("make a dynamic client: %w", err)}
	}
	t := &Target{
		Name: name, Config: cfg, Client: c,
		httpClient: httpClient, reach: reach, dynamic: dyn, versions: dc, discovery: memory.NewMemCacheClient(dc), clock: clk, ttl: ttl,
	}
	t.Base = t
	if t.Version, err = serverVersion(ctx, dc); err != nil {
		httpClient.CloseIdleConnections()
		return nil, err
	}
	return t, nil
}

// configError is a failure to build a client from a configuration (bad TLS
// data, say), before the target is contacted: the kubeconfig's fault, not the
// target's.
type configError struct{ error }

func (e *configError) Unwrap() error { return e.error }

// serverVersion reads /version, bounded by ctx and a short timeout.
func serverVersion(ctx context.Context, dc *discovery.DiscoveryClient) (*version.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	body, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("read /version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("read /version: %w", err)
	}
	return &info, nil
}

// Dynamic is a dynamic client on the target, as Identity, sharing Client's
// connections: for informers of any kind (the observer's watches).
func (t *Target) Dynamic() dynamic.Interface { return t.dynamic }

// ServerVersion reads the target's /version now (Version is the one read when the
// connection was made), with convoy's own identity: whether a cluster answers does
// not depend on who asks.
func (t *Target) ServerVersion(ctx context.Context) (*version.Info, error) {
	if t.Base != t && t.Base != nil {
		return t.Base.ServerVersion(ctx)
	}
	return serverVersion(ctx, t.versions)
}

// Discovery returns the target's version and the resources it serves. The
// resources are cached for a while (a minute by default) and read again
// after InvalidateDiscovery; until then each call returns the same *Discovery, so
// that what callers derive from it can be kept by its address (the controller's
// render Capabilities). Groups that fail discovery (a broken aggregated API) are left
// out rather than failing the whole answer, and such an answer is not kept.
func (t *Target) Discovery() (*Discovery, error) {
	if t.Base != t && t.Base != nil {
		return t.Base.Discovery() // discovery does not depend on who asks
	}
	t.mu.Lock()
	if now := t.clock.Now(); t.fetchedAt.IsZero() || now.Sub(t.fetchedAt) >= t.ttl {
		t.discovery.Invalidate()
		t.fetchedAt, t.last = now, nil
	}
	last, fetchedAt := t.last, t.fetchedAt
	t.mu.Unlock()
	if last != nil {
		return last, nil
	}
	_, resources, err := t.discovery.ServerGroupsAndResources()
	partial := discovery.IsGroupDiscoveryFailedError(err)
	if err != nil && !partial {
		t.InvalidateDiscovery()
		return nil, fmt.Errorf("discover the API of cluster %q: %w", t.Name, err)
	}
	d := &Discovery{KubeVersion: t.Version.GitVersion, Resources: resources}
	if !partial {
		t.mu.Lock()
		if t.fetchedAt.Equal(fetchedAt) && t.last == nil {
			t.last = d
		} else if t.last != nil {
			d = t.last // another call read it first: one *Discovery per read
		}
		t.mu.Unlock()
	}
	return d, nil
}

// InvalidateDiscovery makes the next Discovery read the target again, for
// example after a render installed CRDs.
func (t *Target) InvalidateDiscovery() {
	if t.Base != t && t.Base != nil {
		t.Base.InvalidateDiscovery()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fetchedAt, t.last = time.Time{}, nil
}

// close releases the connection's idle connections.
func (t *Target) close() { t.httpClient.CloseIdleConnections() }
