package targets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

const defaultDiscoveryTTL = time.Minute

// Resolver finds the target cluster of a Release. The controller depends on
// this interface only; Cache is the implementation, Static a fixed one.
type Resolver interface {
	// Resolve returns the target of release: the host cluster when
	// spec.cluster is empty, else the named Cluster, provided its
	// namespaceSelector selects the Release's namespace. The Target's Client
	// acts as the Release's identity (IdentityOf). Every error is a
	// *NotReadyError.
	Resolve(ctx context.Context, release *v1alpha1.Release) (*Target, error)
	// Host returns the host cluster acting as the Release's identity, for what
	// is read there for the Release whatever its target (valuesFrom, the
	// chart's credentials). Every error is a *NotReadyError.
	Host(ctx context.Context, release *v1alpha1.Release) (*Target, error)
}

// Options configure a Cache.
type Options struct {
	// Host is the configuration of the host cluster, the target of Releases
	// with an empty spec.cluster.
	Host *rest.Config
	// Reader reads Clusters, Secrets and Namespaces on the host cluster. Its
	// scheme must know convoy's API and the core API.
	Reader client.Reader
	// QPS and Burst limit each remote target's client when its kubeconfig
	// does not (defaults 50 and 100).
	QPS   float32
	Burst int
	// DiscoveryTTL is how long a target's discovery data is reused (default 1 minute).
	DiscoveryTTL time.Duration
	// Clock measures DiscoveryTTL (default: the real clock).
	Clock clock.PassiveClock
	// DefaultServiceAccount is the lockdown (flag --default-service-account):
	// a Release without spec.serviceAccountName acts as this ServiceAccount of
	// its namespace. Empty: such a Release acts as convoy itself.
	DefaultServiceAccount string
	// MaxIdentities bounds the connections kept per identity (default
	// DefaultMaxIdentities); the least recently used go first.
	MaxIdentities int
}

// Cache resolves targets and keeps one connection per cluster, keyed by the
// Cluster's name and the identity and resourceVersion of its kubeconfig
// Secret: a changed Secret makes a new connection, an unchanged one costs
// two cached reads.
type Cache struct {
	opts  Options
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]*entry // by Cluster name; "" is the host

	identities *lru.Cache // identityKey to *Target, acting as a ServiceAccount
}

type entry struct {
	source string // the kubeconfig Secret's namespace, name, key and resourceVersion
	target *Target
}

var _ Resolver = (*Cache)(nil)

// New returns a Cache. It connects to nothing until the first Resolve.
func New(opts Options) (*Cache, error) {
	if opts.Host == nil || opts.Reader == nil {
		return nil, errors.New("clusters: Options.Host and Options.Reader are required")
	}
	if opts.QPS == 0 {
		opts.QPS = 50
	}
	if opts.Burst == 0 {
		opts.Burst = 100
	}
	if opts.DiscoveryTTL <= 0 {
		opts.DiscoveryTTL = defaultDiscoveryTTL
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.MaxIdentities <= 0 {
		opts.MaxIdentities = DefaultMaxIdentities
	}
	return &Cache{opts: opts, entries: map[string]*entry{}, identities: newIdentityCache(opts.MaxIdentities)}, nil
}

// Resolve implements Resolver: the target with convoy's own connection, then,
// when the Release has an identity, the same target acting as it, once its
// ServiceAccount is known to exist.
func (c *Cache) Resolve(ctx context.Context, release *v1alpha1.Release) (*Target, error) {
	base, err := c.resolve(ctx, release)
	if err != nil {
		return nil, err
	}
	return c.actAs(ctx, release, base)
}

// ResolveAsSelf is Resolve without the Release's identity: the target as Options.Host's
// identity (the host) or as the Cluster's kubeconfig Secret says (a remote Cluster),
// never impersonating the Release's ServiceAccount. For kubectl convoy, which reads a
// target with its user's own credentials: a Cache whose Options.Host and Reader are
// the user's.
func (c *Cache) ResolveAsSelf(ctx context.Context, release *v1alpha1.Release) (*Target, error) {
	return c.resolve(ctx, release)
}

// Host implements Resolver.
func (c *Cache) Host(ctx context.Context, release *v1alpha1.Release) (*Target, error) {
	base, err := c.host(ctx)
	if err != nil {
		return nil, err
	}
	return c.actAs(ctx, release, base)
}

func (c *Cache) actAs(ctx context.Context, release *v1alpha1.Release, base *Target) (*Target, error) {
	id := IdentityOf(release, c.opts.DefaultServiceAccount)
	if id.IsZero() {
		return base, nil
	}
	if err := c.checkServiceAccount(ctx, release, id); err != nil {
		return nil, err
	}
	return c.as(base, id)
}

func (c *Cache) host(ctx context.Context) (*Target, error) {
	return c.connect(ctx, "", "host", func() (*rest.Config, error) { return c.opts.Host, nil })
}

// resolve is Resolve with convoy's own identity.
func (c *Cache) resolve(ctx context.Context, release *v1alpha1.Release) (*Target, error) {
	name := release.Spec.Cluster
	if name == "" {
		return c.host(ctx)
	}

	cluster, err := c.cluster(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := c.admits(ctx, cluster, release.Namespace); err != nil {
		return nil, err
	}
	return c.connectCluster(ctx, cluster)
}

// Cluster returns the Cluster name as its kubeconfig Secret says, whatever its
// namespaceSelector: for kubectl convoy orphans, which looks at every target with its
// user's own credentials (a Cache whose Options.Host and Reader are the user's).
// Every error is a *NotReadyError.
func (c *Cache) Cluster(ctx context.Context, name string) (*Target, error) {
	cluster, err := c.cluster(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.connectCluster(ctx, cluster)
}

// cluster reads the Cluster name.
func (c *Cache) cluster(ctx context.Context, name string) (*v1alpha1.Cluster, error) {
	cluster := &v1alpha1.Cluster{}
	if err := c.opts.Reader.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &NotReadyError{Kind: ClusterMissing, Cluster: name, Message: fmt.Sprintf(
				"Cluster %q does not exist: create it, or set spec.cluster to an existing Cluster (empty for the host cluster)", name)}
		}
		return nil, &NotReadyError{Kind: HostReadFailed, Cluster: name, Message: fmt.Sprintf("cannot read Cluster %q", name), Err: err}
	}
	return cluster, nil
}

// connectCluster connects to cluster as its kubeconfig Secret says.
func (c *Cache) connectCluster(ctx context.Context, cluster *v1alpha1.Cluster) (*Target, error) {
	name := cluster.Name
	ref := cluster.Spec.Kubeconfig.SecretRef
	key := ref.Key
	if key == "" {
		key = v1alpha1.DefaultKubeconfigKey
	}
	secret := &corev1.Secret{}
	where := fmt.Sprintf("Secret %s/%s", ref.Namespace, ref.Name)
	if err := c.opts.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &NotReadyError{Kind: KubeconfigNotReady, Cluster: name, Message: fmt.Sprintf(
				"the kubeconfig %s of Cluster %q does not exist: create it with the kubeconfig under key %q", where, name, key)}
		}
		return nil, &NotReadyError{Kind: HostReadFailed, Cluster: name, Message: fmt.Sprintf("cannot read the kubeconfig %s of Cluster %q", where, name), Err: err}
	}
	source := fmt.Sprintf("%s/%s#%s@%s", ref.Namespace, ref.Name, key, secret.ResourceVersion)
	return c.connect(ctx, name, source, func() (*rest.Config, error) {
		data, ok := secret.Data[key]
		if !ok || len(data) == 0 {
			return nil, &NotReadyError{Kind: KubeconfigNotReady, Cluster: name, Message: fmt.Sprintf(
				"%s of Cluster %q has no key %q: put the kubeconfig there, or set spec.kubeconfig.secretRef.key", where, name, key)}
		}
		cfg, err := restConfigFromKubeconfig(data)
		if err != nil {
			return nil, &NotReadyError{Kind: KubeconfigNotReady, Cluster: name, Message: fmt.Sprintf(
				"the kubeconfig in %s, key %q, of Cluster %q cannot be used: fix it", where, key, name), Err: err}
		}
		if cfg.QPS == 0 {
			cfg.QPS = c.opts.QPS
		}
		if cfg.Burst == 0 {
			cfg.Burst = c.opts.Burst
		}
		return cfg, nil
	})
}

// admits checks the Cluster's namespaceSelector against the labels of the
// Release's namespace (on the host). Unset or empty: every namespace.
func (c *Cache) admits(ctx context.Context, cluster *v1alpha1.Cluster, namespace string) error {
	sel := cluster.Spec.NamespaceSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return &NotReadyError{Kind: NotAdmitted, Cluster: cluster.Name, Message: fmt.Sprintf(
			"Cluster %q has an invalid namespaceSelector: fix the Cluster", cluster.Name), Err: err}
	}
	ns := &corev1.Namespace{}
	if err := c.opts.Reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return &NotReadyError{Kind: HostReadFailed, Cluster: cluster.Name, Message: fmt.Sprintf(
			"cannot read namespace %q to check the namespaceSelector of Cluster %q", namespace, cluster.Name), Err: err}
	}
	if !selector.Matches(labels.Set(ns.Labels)) {
		return &NotReadyError{Kind: NotAdmitted, Cluster: cluster.Name, Message: fmt.Sprintf(
			"Cluster %q does not admit Releases of namespace %q: its namespaceSelector (%s) does not select the namespace; "+
				"label the namespace to match, change the Cluster's namespaceSelector, or target another Cluster",
			cluster.Name, namespace, selector)}
	}
	return nil
}

// connect returns the cached target of name when it was made from source,
// else makes one with config (once, however many Releases ask at the same time).
func (c *Cache) connect(ctx context.Context, name, source string, config func() (*rest.Config, error)) (*Target, error) {
	c.mu.Lock()
	if e, ok := c.entries[name]; ok && e.source == source {
		c.mu.Unlock()
		return e.target, nil
	}
	c.mu.Unlock()

	v, err, _ := c.group.Do(name+"\x00"+source, func() (any, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		t, err := newTarget(ctx, name, cfg, c.opts.Clock, c.opts.DiscoveryTTL)
		if err != nil {
			what := "the host cluster"
			if name != "" {
				what = fmt.Sprintf("Cluster %q", name)
			}
			if _, ok := errors.AsType[*configError](err); ok {
				return nil, &NotReadyError{Kind: KubeconfigNotReady, Cluster: name, Message: fmt.Sprintf(
					"the kubeconfig of %s cannot be used: fix it", what), Err: err}
			}
			return nil, &NotReadyError{Kind: Unreachable, Cluster: name, Message: fmt.Sprintf(
				"cannot reach %s: check that it runs and that its kubeconfig's server and credentials are right", what), Err: err}
		}
		c.mu.Lock()
		if old, ok := c.entries[name]; ok {
			old.target.close()
		}
		c.entries[name] = &entry{source: source, target: t}
		c.mu.Unlock()
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Target), nil
}

// Forget drops the connection to a Cluster, for example when it is deleted.
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok {
		e.target.close()
		delete(c.entries, name)
	}
}

// Static is a Resolver with fixed targets, by Cluster name ("" for the host),
// for tests of code that needs a Resolver. It checks no namespaceSelector.
type Static map[string]*Target

// Host implements Resolver: the host's Target, whatever the Release's identity.
func (s Static) Host(_ context.Context, _ *v1alpha1.Release) (*Target, error) {
	if t, ok := s[""]; ok {
		return t, nil
	}
	return nil, &NotReadyError{Kind: ClusterMissing, Message: "no host cluster"}
}

// Resolve implements Resolver.
func (s Static) Resolve(_ context.Context, release *v1alpha1.Release) (*Target, error) {
	if t, ok := s[release.Spec.Cluster]; ok {
		return t, nil
	}
	return nil, &NotReadyError{Kind: ClusterMissing, Cluster: release.Spec.Cluster, Message: fmt.Sprintf(
		"Cluster %q does not exist: create it, or set spec.cluster to an existing Cluster", release.Spec.Cluster)}
}
