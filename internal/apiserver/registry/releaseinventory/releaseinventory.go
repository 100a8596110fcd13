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
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apiserver/registry"
	"kumodo.io/convoy/internal/apiserver/validation"
)

const resource = convoyv1alpha1.ResourceReleaseInventories

// NewStorage builds the storage of ReleaseInventories and their /status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := strategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &convoyv1alpha1.ReleaseInventory{} },
		NewListFunc:               func() runtime.Object { return &convoyv1alpha1.ReleaseInventoryList{} },
		PredicateFunc:             matcher,
		DefaultQualifiedResource:  convoyv1alpha1.Resource(resource),
		SingularQualifiedResource: convoyv1alpha1.Resource("releaseinventory"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            tableConvertor,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: getAttrs}); err != nil {
		return nil, fmt.Errorf("building the storage of releaseinventories: %w", err)
	}
	statusStore := *store
	statusStore.UpdateStrategy = statusStrategy{s}
	statusStore.ResetFieldsStrategy = statusStrategy{s}
	return map[string]rest.Storage{
		resource:             &REST{store},
		resource + "/status": &registry.SubresourceREST{Store: &statusStore},
	}, nil
}

// REST is the storage of ReleaseInventories.
type REST struct {
	*genericregistry.Store
}

// ShortNames makes `kubectl get rinv` work.
func (r *REST) ShortNames() []string { return []string{"rinv"} }

// Categories puts ReleaseInventories in `kubectl get convoy`.
func (r *REST) Categories() []string { return []string{"convoy"} }

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	inv, ok := obj.(*convoyv1alpha1.ReleaseInventory)
	if !ok {
		return nil, nil, fmt.Errorf("not a ReleaseInventory: %T", obj)
	}
	return labels.Set(inv.Labels), generic.AddObjectMetaFieldsSet(fields.Set{
		convoyv1alpha1.FieldReleaseInventoryCluster: inv.Cluster,
	}, &inv.ObjectMeta, true), nil
}

func matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
}

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

func (strategy) NamespaceScoped() bool { return true }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(convoyv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
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

func (strategy) AllowCreateOnUpdate(context.Context) bool                  { return false }
func (strategy) AllowUnconditionalUpdate(context.Context) bool             { return true }
func (strategy) Canonicalize(runtime.Object)                               {}
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// statusStrategy: a /status write changes only status.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(convoyv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("cluster"),
			fieldpath.MakePathOrDie("renderRef"),
			fieldpath.MakePathOrDie("objects"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
		),
	}
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
		return []interface{}{inv.Cluster, registry.ShortRef(inv.RenderRef), int64(len(inv.Objects)),
			string(inv.Status.Health), registry.Age(inv.CreationTimestamp)}, nil
	},
}
