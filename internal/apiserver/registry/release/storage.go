package release

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

// Storage is the REST storage of releases and their subresources, keyed as the API
// group's storage map wants them (releases, releases/status, ...).
type Storage map[string]rest.Storage

// NewStorage builds the storage of Releases on the etcd options of optsGetter. c is
// the clock sync times are read from.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c clock.PassiveClock) (Storage, error) {
	base := newStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &convoyv1alpha1.Release{} },
		NewListFunc:               func() runtime.Object { return &convoyv1alpha1.ReleaseList{} },
		PredicateFunc:             Matcher,
		DefaultQualifiedResource:  convoyv1alpha1.Resource(convoyv1alpha1.ResourceReleases),
		SingularQualifiedResource: convoyv1alpha1.Resource("release"),

		CreateStrategy:      base,
		UpdateStrategy:      base,
		DeleteStrategy:      base,
		ResetFieldsStrategy: base,

		TableConvertor: tableConvertor,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("building the storage of releases: %w", err)
	}

	with := func(s rest.RESTUpdateStrategy, reset rest.ResetFieldsStrategy) *genericregistry.Store {
		copied := *store
		copied.UpdateStrategy = s
		copied.ResetFieldsStrategy = reset
		return &copied
	}
	status := statusStrategy{base}
	pin := newFieldStrategy(base, c, convoyv1alpha1.SubresourcePin, takePin)
	mutations := newFieldStrategy(base, c, convoyv1alpha1.SubresourceMutations, takeMutations)
	lifecycle := newFieldStrategy(base, c, convoyv1alpha1.SubresourceLifecycle, takeLifecycle)
	// /sync, /pin, /mutations and /lifecycle share one lock per Release.
	locks := newKeyLock()
	locked := func(s *genericregistry.Store) rest.Storage {
		return &lockedSubresourceREST{SubresourceREST: &registry.SubresourceREST{Store: s}, locks: locks}
	}

	return Storage{
		convoyv1alpha1.ResourceReleases:                                             &REST{store},
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceStatus:    &registry.SubresourceREST{Store: with(status, status)},
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourcePin:       locked(with(pin, pin)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceMutations: locked(with(mutations, mutations)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceLifecycle: locked(with(lifecycle, lifecycle)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceSync:      &SyncREST{store: with(keepStrategy{base}, base), clock: c, locks: locks},
	}, nil
}

// REST is the main resource's storage.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}
var _ rest.CategoriesProvider = &REST{}

// ShortNames makes `kubectl get rel` work.
func (r *REST) ShortNames() []string { return []string{"rel"} }

// Categories puts Releases in `kubectl get convoy`.
func (r *REST) Categories() []string { return []string{"convoy"} }
