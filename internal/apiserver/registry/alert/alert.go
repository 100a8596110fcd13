// Package alert is the storage of Alerts (namespaced) and their /status: writes of
// the main resource keep status, and only a spec change raises the generation. It
// decides nothing about delivering notifications.
package alert

import (
	"context"
	"fmt"
	"strings"

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

const resource = convoyv1alpha1.ResourceAlerts

// NewStorage builds the storage of Alerts and their /status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := strategy{registry.NewStrategy(scheme)}
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.Alert{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.AlertList{} },
		Resource:    resource,
		Singular:    "alert",
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
		resource: &registry.REST{Store: store},
		resource + "/" + convoyv1alpha1.SubresourceStatus: &registry.SubresourceREST{Store: registry.WithUpdate(store, status, status)},
	}, nil
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	a, ok := obj.(*convoyv1alpha1.Alert)
	if !ok {
		return nil, nil, fmt.Errorf("not an Alert: %T", obj)
	}
	return labels.Set(a.Labels), generic.ObjectMetaFieldsSet(&a.ObjectMeta, true), nil
}

type strategy struct {
	registry.Strategy
}

func (strategy) NamespaceScoped() bool { return true }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	a := obj.(*convoyv1alpha1.Alert)
	a.Status = convoyv1alpha1.AlertStatus{}
	a.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	a, oldA := obj.(*convoyv1alpha1.Alert), old.(*convoyv1alpha1.Alert)
	a.Status = oldA.Status
	if !registry.Semantic.DeepEqual(a.Spec, oldA.Spec) {
		a.Generation = oldA.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Alert(obj.(*convoyv1alpha1.Alert))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.AlertUpdate(obj.(*convoyv1alpha1.Alert), old.(*convoyv1alpha1.Alert))
}

// statusStrategy: a /status write changes only status, never the generation.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("spec", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	a, oldA := obj.(*convoyv1alpha1.Alert), old.(*convoyv1alpha1.Alert)
	a.Spec = oldA.Spec
	metav1.ResetObjectMetaForStatus(&a.ObjectMeta, &oldA.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.AlertStatusUpdate(obj.(*convoyv1alpha1.Alert), old.(*convoyv1alpha1.Alert))
}

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "True, or the reason of the Ready condition (the provider's answer to the last delivery)."},
		{Name: "Events", Type: "string", Description: "The events the Alert sends (spec.events)."},
		{Name: "Provider", Type: "string", Description: "The provider type (spec.provider.type)."},
		{Name: "Last Delivery", Type: "string", Description: "The event of the last delivery and how long ago it was."},
		registry.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		a, ok := obj.(*convoyv1alpha1.Alert)
		if !ok {
			return nil, fmt.Errorf("not an Alert: %T", obj)
		}
		events := make([]string, len(a.Spec.Events))
		for i, e := range a.Spec.Events {
			events[i] = string(e)
		}
		return []interface{}{registry.ReadyCell(a.Status.Conditions), strings.Join(events, ","),
			string(a.Spec.Provider.Type), LastDeliveryCell(a.Status.LastDelivery), registry.Age(a.CreationTimestamp)}, nil
	},
}

// LastDeliveryCell is the LAST DELIVERY cell: the event and how long ago it was
// delivered ("RolledBack 5m ago"); "" before the first delivery.
func LastDeliveryCell(d *convoyv1alpha1.AlertDelivery) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("%s %s ago", d.Event, registry.Age(d.Time))
}
