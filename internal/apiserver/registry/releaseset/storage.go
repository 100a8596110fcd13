package releaseset

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"
	"kumodo.io/convoy/internal/apiserver/validation"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
)

// ShortName is the short name of releasesets: `kubectl get relset`. No built-in kind
// uses it (rs is ReplicaSet's).
const ShortName = "relset"

// NewStorage builds the storage of ReleaseSets, their /status and /promote on the
// etcd options of optsGetter. c is the clock approvals are timed with; access decides
// whether a user may write the Releases a set stands for; opts are what the operator
// allows in a Release (the template is validated as one); namespaces reads the
// namespace whose UID a set records (registry.RecordNamespaceUID; nil: none is recorded).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, c clock.PassiveClock,
	access ReleasesAccess, opts validation.ReleaseOptions, namespaces registry.Namespaces) (map[string]rest.Storage, error) {
	base := newStrategy(scheme, opts)
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.ReleaseSet{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.ReleaseSetList{} },
		Resource:    convoyv1alpha1.ResourceReleaseSets,
		Singular:    "releaseset",
		Strategy:    base,
		ResetFields: base,
		Attrs:       GetAttrs,
		Table:       tableConvertor,
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	store.Storage.Storage = registry.KeepGenerationOnDelete{Interface: store.Storage.Storage}
	status := statusStrategy{base}
	const resource = convoyv1alpha1.ResourceReleaseSets
	return map[string]rest.Storage{
		resource: &tenantREST{REST: &registry.REST{Store: registry.RecordNamespaceUID(store, "ReleaseSet", namespaces), Short: []string{ShortName}}, access: access},
		resource + "/" + convoyv1alpha1.SubresourceStatus:  &registry.SubresourceREST{Store: registry.WithUpdate(store, status, status)},
		resource + "/" + convoyv1alpha1.SubresourcePromote: &PromoteREST{store: registry.WithUpdate(store, keepStrategy{base}, base), clock: c},
	}, nil
}
