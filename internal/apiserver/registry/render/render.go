// Package render is the storage of Renders: immutable snapshots of one render of a
// Release. A create is validated; an update that changes anything but metadata is
// rejected with 422. A user who may not read the Secrets of a Render's namespace reads
// its rendered Secrets with digests in place of their data.
package render

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

// NewStorage builds the storage of Renders. access decides who is served the data of
// rendered Secrets; the others get digests in its place (RedactSecrets).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, access SecretsAccess) (map[string]rest.Storage, error) {
	store, err := registry.NewStore(registry.Kind{
		New:      func() runtime.Object { return &convoyv1alpha1.Render{} },
		NewList:  func() runtime.Object { return &convoyv1alpha1.RenderList{} },
		Resource: convoyv1alpha1.ResourceRenders,
		Singular: "render",
		Strategy: strategy{registry.NewStrategy(scheme)},
		Attrs:    getAttrs,
		Table:    tableConvertor,
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{convoyv1alpha1.ResourceRenders: &redactingREST{REST: &registry.REST{Store: store}, access: access}}, nil
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	r, ok := obj.(*convoyv1alpha1.Render)
	if !ok {
		return nil, nil, fmt.Errorf("not a Render: %T", obj)
	}
	return labels.Set(r.Labels), generic.AddObjectMetaFieldsSet(fields.Set{
		convoyv1alpha1.FieldRenderRelease: r.Release,
		convoyv1alpha1.FieldRenderRef:     r.RenderRef,
	}, &r.ObjectMeta, true), nil
}

type strategy struct {
	registry.Strategy
}

func (strategy) NamespaceScoped() bool                                            { return true }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Render(obj.(*convoyv1alpha1.Render))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.RenderUpdate(obj.(*convoyv1alpha1.Render), old.(*convoyv1alpha1.Render))
}

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Release", Type: "string", Description: "The Release rendered."},
		{Name: "Chart", Type: "string", Description: "Chart name and version."},
		{Name: "Objects", Type: "integer", Description: "Number of objects."},
		registry.AgeColumn,
		{Name: "Ref", Type: "string", Priority: 1, Description: "The render ref."},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		r, ok := obj.(*convoyv1alpha1.Render)
		if !ok {
			return nil, fmt.Errorf("not a Render: %T", obj)
		}
		chart := r.Chart.Name
		if r.Chart.Version != "" {
			chart += ":" + r.Chart.Version
		}
		return []interface{}{r.Release, chart, r.ObjectCount, registry.Age(r.CreationTimestamp), r.RenderRef}, nil
	},
}
