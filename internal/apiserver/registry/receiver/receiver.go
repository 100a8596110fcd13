// Package receiver is the storage of Receivers (namespaced) and their /status: writes
// of the main resource keep status, and only a spec change raises the generation. It
// decides nothing about serving the calls.
package receiver

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

const resource = convoyv1alpha1.ResourceReceivers

// NewStorage builds the storage of Receivers and their /status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := strategy{registry.NewStrategy(scheme)}
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.Receiver{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.ReceiverList{} },
		Resource:    resource,
		Singular:    "receiver",
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
	r, ok := obj.(*convoyv1alpha1.Receiver)
	if !ok {
		return nil, nil, fmt.Errorf("not a Receiver: %T", obj)
	}
	return labels.Set(r.Labels), generic.ObjectMetaFieldsSet(&r.ObjectMeta, true), nil
}

type strategy struct {
	registry.Strategy
}

func (strategy) NamespaceScoped() bool { return true }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r := obj.(*convoyv1alpha1.Receiver)
	r.Status = convoyv1alpha1.ReceiverStatus{}
	r.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Receiver), old.(*convoyv1alpha1.Receiver)
	r.Status = oldR.Status
	if !registry.Semantic.DeepEqual(r.Spec, oldR.Spec) {
		r.Generation = oldR.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Receiver(obj.(*convoyv1alpha1.Receiver))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReceiverUpdate(obj.(*convoyv1alpha1.Receiver), old.(*convoyv1alpha1.Receiver))
}

// statusStrategy: a /status write changes only status, never the generation.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("spec", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*convoyv1alpha1.Receiver), old.(*convoyv1alpha1.Receiver)
	r.Spec = oldR.Spec
	metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &oldR.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ReceiverStatusUpdate(obj.(*convoyv1alpha1.Receiver), old.(*convoyv1alpha1.Receiver))
}

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "True, or the reason of the Ready condition."},
		{Name: "Type", Type: "string", Description: "Who calls the Receiver (spec.type)."},
		{Name: "Path", Type: "string", Description: "Where calls go on the receiver server (status.webhookPath)."},
		registry.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		r, ok := obj.(*convoyv1alpha1.Receiver)
		if !ok {
			return nil, fmt.Errorf("not a Receiver: %T", obj)
		}
		return []interface{}{registry.ReadyCell(r.Status.Conditions), string(r.Spec.Type), r.Status.WebhookPath,
			registry.Age(r.CreationTimestamp)}, nil
	},
}
