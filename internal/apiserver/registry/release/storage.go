package release

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// Storage is the REST storage of releases and their subresources, keyed as the API
// group's storage map wants them (releases, releases/status, ...).
type Storage map[string]rest.Storage

// NewStorage builds the storage of Releases on the etcd options of optsGetter. c is
// the clock sync times are read from; opts are what validation allows beyond the defaults.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c clock.PassiveClock, opts validation.ReleaseOptions) (Storage, error) {
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
	store.Storage.Storage = keepGenerationOnDelete{store.Storage.Storage}
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
		convoyv1alpha1.ResourceReleases:                                             &registry.REST{Store: store, Short: []string{"rel"}}, // kubectl get rel
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceStatus:    &registry.SubresourceREST{Store: with(status)},
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourcePin:       locked(with(pin)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceMutations: locked(with(mutations)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceLifecycle: locked(with(lifecycle)),
		convoyv1alpha1.ResourceReleases + "/" + convoyv1alpha1.SubresourceSync:      &SyncREST{store: registry.WithUpdate(store, keepStrategy{base}, base), clock: c, locks: locks},
	}, nil
}

// keepGenerationOnDelete is the etcd storage of Releases, except that the write that
// marks a Release as being deleted (sets metadata.deletionTimestamp) keeps its
// metadata.generation. The generic registry raises the generation of an object with
// finalizers when it marks it (markAsDeleting, as it does for CRDs), but a Release's
// generation changes only with its spec (the sync policy: "Only a change to spec
// changes the generation"), and the Releases of higher cluster waves compare it with
// the observedGeneration of its conditions: a raised one held them until the deletion
// ended, for good when a pre-delete hook failed (issue 33). The deletion is seen
// through metadata.deletionTimestamp.
type keepGenerationOnDelete struct {
	storage.Interface
}

func (s keepGenerationOnDelete) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	keep := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		before, err := meta.Accessor(input)
		if err != nil {
			return tryUpdate(input, res)
		}
		generation, deleting := before.GetGeneration(), before.GetDeletionTimestamp() != nil
		out, ttl, err := tryUpdate(input, res)
		if err != nil || out == nil || deleting {
			return out, ttl, err
		}
		if after, aerr := meta.Accessor(out); aerr == nil && after.GetDeletionTimestamp() != nil {
			// Only a deletion sets deletionTimestamp: an update keeps the stored one
			// (rest.BeforeUpdate), and it does not change the spec.
			after.SetGeneration(generation)
		}
		return out, ttl, err
	}
	return s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, keep, cachedExistingObject)
}
