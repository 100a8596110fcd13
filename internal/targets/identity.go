package targets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/api/v1alpha1"
)

// DefaultMaxIdentities bounds the connections kept per identity (Options.MaxIdentities).
const DefaultMaxIdentities = 512

// Identity is who the requests made for a Release are made as: a ServiceAccount
// of the Release's namespace, or, when zero, convoy's own identity.
type Identity struct {
	// Namespace and ServiceAccount name the ServiceAccount.
	Namespace, ServiceAccount string
}

// IsZero reports whether the identity is convoy's own.
func (i Identity) IsZero() bool { return i.ServiceAccount == "" }

// UserName is the user the requests are made as: system:serviceaccount:<ns>:<name>,
// empty for convoy's own identity.
func (i Identity) UserName() string {
	if i.IsZero() {
		return ""
	}
	return serviceaccount.MakeUsername(i.Namespace, i.ServiceAccount)
}

// String is the user name, or "convoy" for convoy's own identity.
func (i Identity) String() string {
	if i.IsZero() {
		return "convoy"
	}
	return i.UserName()
}

// IdentityOf returns the identity of release: its spec.serviceAccountName, else
// defaultServiceAccount (the lockdown flag, empty when off), in the Release's
// namespace; zero when neither is set.
func IdentityOf(release *v1alpha1.Release, defaultServiceAccount string) Identity {
	sa := release.Spec.ServiceAccountName
	if sa == "" {
		sa = defaultServiceAccount
	}
	if sa == "" {
		return Identity{}
	}
	return Identity{Namespace: release.Namespace, ServiceAccount: sa}
}

// Impersonating returns a copy of cfg whose requests are made as id (Kubernetes
// impersonation: the user system:serviceaccount:<ns>:<name> and the groups of
// that ServiceAccount, which the API server adds). A zero id returns a copy of cfg.
func Impersonating(cfg *rest.Config, id Identity) *rest.Config {
	out := rest.CopyConfig(cfg)
	if !id.IsZero() {
		out.Impersonate = rest.ImpersonationConfig{UserName: id.UserName()}
	}
	return out
}

// checkServiceAccount makes sure the ServiceAccount of id exists on the host: a
// Release must not act as an identity that nobody created for it.
func (c *Cache) checkServiceAccount(ctx context.Context, release *v1alpha1.Release, id Identity) error {
	sa := &corev1.ServiceAccount{}
	err := c.opts.Reader.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.ServiceAccount}, sa)
	switch {
	case apierrors.IsNotFound(err):
		from := "spec.serviceAccountName"
		if release.Spec.ServiceAccountName == "" {
			from = "the controller's --default-service-account"
		}
		return &NotReadyError{Kind: ServiceAccountMissing, Cluster: release.Spec.Cluster, Message: fmt.Sprintf(
			"the ServiceAccount %s/%s that Release %s/%s acts as (%s) does not exist: create it in namespace %q "+
				"and bind to it the Roles the chart needs, or set spec.serviceAccountName to an existing ServiceAccount",
			id.Namespace, id.ServiceAccount, release.Namespace, release.Name, from, id.Namespace)}
	case err != nil:
		return &NotReadyError{Kind: HostReadFailed, Cluster: release.Spec.Cluster, Message: fmt.Sprintf(
			"cannot read the ServiceAccount %s/%s that Release %s/%s acts as", id.Namespace, id.ServiceAccount,
			release.Namespace, release.Name), Err: err}
	}
	return nil
}

// identityKey keys the connections per identity: the base connection (a new one
// for a changed kubeconfig) and the identity.
type identityKey struct {
	base *Target
	id   Identity
}

// as returns base acting as id, from the cache of connections per identity, or
// made now. A zero id is base itself.
func (c *Cache) as(base *Target, id Identity) (*Target, error) {
	if id.IsZero() {
		return base, nil
	}
	key := identityKey{base: base, id: id}
	if t, ok := c.identities.Get(key); ok {
		return t.(*Target), nil
	}
	t, err := base.as(id)
	if err != nil {
		return nil, &NotReadyError{Kind: KubeconfigNotReady, Cluster: base.Name, Message: fmt.Sprintf(
			"cannot make a connection as %s", id), Err: err}
	}
	c.identities.Add(key, t)
	return t, nil
}

// newIdentityCache is the bounded cache of connections per identity; an evicted
// connection closes its idle connections.
func newIdentityCache(size int) *lru.Cache {
	return lru.NewWithEvictionFunc(size, func(_ lru.Key, v any) { v.(*Target).close() })
}

// as returns a Target on the same cluster as t whose requests are made as id. It
// shares t's discovery data, version and REST mapper (discovery does not depend
// on who asks); only the HTTP client and the client differ.
func (t *Target) as(id Identity) (*Target, error) {
	cfg := Impersonating(t.Config, id)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("make an HTTP client: %w", err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: t.Client.RESTMapper(), Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("make a client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("make a dynamic client: %w", err)
	}
	return &Target{
		Name: t.Name, Config: cfg, Client: c, Version: t.Version, Identity: id, Base: t,
		httpClient: httpClient, dynamic: dyn,
	}, nil
}
