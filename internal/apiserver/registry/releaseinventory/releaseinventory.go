// Package releaseinventory is the storage of ReleaseInventories and their /status:
// the controller writes the object list through the main resource, the observer the
// health data through /status; neither write can change the other's part.
package releaseinventory

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
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

const resource = convoyv1alpha1.ResourceReleaseInventories

// NewStorage builds the storage of ReleaseInventories and their /status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := strategy{registry.NewStrategy(scheme)}
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.ReleaseInventory{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.ReleaseInventoryList{} },
		Resource:    resource,
		Singular:    "releaseinventory",
		Strategy:    s,
		ResetFields: s,
		Attrs:       getAttrs,
		Table:       tableConvertor,
	}, optsGetter)
	if err != nil {
		return nil, err
	}
	status := statusStrategy{s}
	return map[string]rest.Storage{
		// `kubectl get rinv`
		resource:             &registry.REST{Store: store, Short: []string{"rinv"}},
		resource + "/status": &registry.SubresourceREST{Store: registry.WithUpdate(store, status, status)},
	}, nil
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	inv, ok := obj.(*convoyv1alpha1.ReleaseInventory)
	if !ok {
		return nil, nil, fmt.Errorf("not a ReleaseInventory: %T", obj)
	}
	return labels.Set(inv.Labels), generic.AddObjectMetaFieldsSet(fields.Set{
		convoyv1alpha1.FieldReleaseInventoryCluster: inv.Cluster,
	}, &inv.ObjectMeta, true), nil
}

type strategy struct {
	registry.Strategy
}

func (strategy) NamespaceScoped() bool { return true }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	inv := obj.(*convoyv1alpha1.ReleaseInventory)
	inv.Status = convoyv1alpha1.ReleaseInventoryStatus{}
	inv.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	inv, oldInv := obj.(*convoyv1alpha1.ReleaseInventory), old.(*convoyv1alpha1.ReleaseInventory)
	inv.Status = oldInv.Status
	if inv.Cluster != oldInv.Cluster || inv.RenderRef != oldInv.RenderRef ||
		!registry.Semantic.DeepEqual(inv.Objects, oldInv.Objects) {
		inv.Generation = oldInv.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ReleaseInventory(obj.(*convoyv1alpha1.ReleaseInventory))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReleaseInventoryUpdate(obj.(*convoyv1alpha1.ReleaseInventory), old.(*convoyv1alpha1.ReleaseInventory))
}

// statusStrategy: a /status write changes only status.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("cluster", "renderRef", "objects", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	inv, oldInv := obj.(*convoyv1alpha1.ReleaseInventory), old.(*convoyv1alpha1.ReleaseInventory)
	status, meta := inv.Status, inv.ObjectMeta
	*inv = *oldInv.DeepCopy()
	inv.Status, inv.ObjectMeta = status, meta
	metav1.ResetObjectMetaForStatus(&inv.ObjectMeta, &oldInv.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ObjectMetaUpdate(&obj.(*convoyv1alpha1.ReleaseInventory).ObjectMeta,
		&old.(*convoyv1alpha1.ReleaseInventory).ObjectMeta)
}

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string", Description: "The Cluster the objects live on."},
		{Name: "Render", Type: "string", Description: "The render the objects come from."},
		{Name: "Objects", Type: "integer", Description: "Number of objects."},
		{Name: "Health", Type: "string", Description: "Health of the whole render."},
		registry.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		inv, ok := obj.(*convoyv1alpha1.ReleaseInventory)
		if !ok {
			return nil, fmt.Errorf("not a ReleaseInventory: %T", obj)
		}
		return []interface{}{inv.Cluster, convoyv1alpha1.RenderRef(inv.RenderRef).Short(), int64(len(inv.Objects)),
			string(inv.Status.Health), registry.Age(inv.CreationTimestamp)}, nil
	},
}
