package release

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// Storage is the REST storage of releases and their subresources, keyed as the API
// group's storage map wants them (releases, releases/status, ...).
type Storage map[string]rest.Storage

// NewStorage builds the storage of Releases on the etcd options of optsGetter. c is
// the clock sync times are read from; opts are what validation allows beyond the defaults;
// namespaces reads the namespace whose UID a Release records (registry.RecordNamespaceUID;
// nil: none is recorded).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c clock.PassiveClock, opts validation.ReleaseOptions,
	namespaces registry.Namespaces) (Storage, error) {
	base := newStrategy(scheme)
	base.validation = opts
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.Release{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.ReleaseList{} },
		Resource:    convoyv1alpha1.ResourceReleases,
		Singular:    "release",
		Strategy:    base,
		ResetFields: base,
		Attrs:       GetAttrs,
		Table:       tableConvertor,
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	store.Storage.Storage = registry.KeepGenerationOnDelete{Interface: store.Storage.Storage}
	with := func(s interface {
		rest.RESTUpdateStrategy
		rest.ResetFieldsStrategy
	}) *genericregistry.Store {
		return registry.WithUpdate(store, s, s)
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
		convoyv1alpha1.ResourceReleases:                                             &registry.REST{Store: registry.RecordNamespaceUID(store, "Release", namespaces), Short: []string{"rel"}}, // kubectl get rel
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceStatus:    &registry.SubresourceREST{Store: with(status)},
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourcePin:       locked(with(pin)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceMutations: locked(with(mutations)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceLifecycle: locked(with(lifecycle)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceSync:      &SyncREST{store: registry.WithUpdate(store, keepStrategy{base}, base), clock: c, locks: locks},
	}, nil
}
