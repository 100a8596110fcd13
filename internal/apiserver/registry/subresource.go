package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// SubresourceREST serves GET, PUT and PATCH of a subresource whose body is the whole
// object (status, and a Release's pin, mutations and lifecycle); the store's update
// strategy decides what the write changes. It never creates.
type SubresourceREST struct {
	Store *genericregistry.Store
}

var _ rest.Patcher = &SubresourceREST{}

// New returns an empty object of the resource.
func (r *SubresourceREST) New() runtime.Object { return r.Store.New() }

// Destroy does nothing: the main resource's storage owns the store.
func (r *SubresourceREST) Destroy() {}

// Get returns the object.
func (r *SubresourceREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.Store.Get(ctx, name, options)
}

// Update writes what the strategy lets through, in one read-modify-write in storage.
func (r *SubresourceREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo,
	createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	_ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields names the fields a write through the subresource never sets.
func (r *SubresourceREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.Store.GetResetFields()
}

// ConvertToTable prints the object.
func (r *SubresourceREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.Store.ConvertToTable(ctx, object, tableOptions)
}
