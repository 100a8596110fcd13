// Package cluster is the storage of Clusters (cluster-scoped) and their /status.
package cluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

const resource = convoyv1alpha1.ResourceClusters

// NewStorage builds the storage of Clusters and their /status.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := strategy{registry.NewStrategy(scheme)}
	store, err := registry.NewStore(registry.Kind{
		New:         func() runtime.Object { return &convoyv1alpha1.Cluster{} },
		NewList:     func() runtime.Object { return &convoyv1alpha1.ClusterList{} },
		Resource:    resource,
		Singular:    "cluster",
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
		resource:             &registry.REST{Store: store},
		resource + "/status": &registry.SubresourceREST{Store: registry.WithUpdate(store, status, status)},
	}, nil
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	c, ok := obj.(*convoyv1alpha1.Cluster)
	if !ok {
		return nil, nil, fmt.Errorf("not a Cluster: %T", obj)
	}
	return labels.Set(c.Labels), generic.ObjectMetaFieldsSet(&c.ObjectMeta, false), nil
}

type strategy struct {
	registry.Strategy
}

func (strategy) NamespaceScoped() bool { return false }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("status")
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	c := obj.(*convoyv1alpha1.Cluster)
	c.Status = convoyv1alpha1.ClusterStatus{}
	c.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*convoyv1alpha1.Cluster), old.(*convoyv1alpha1.Cluster)
	c.Status = oldC.Status
	if !registry.Semantic.DeepEqual(c.Spec, oldC.Spec) {
		c.Generation = oldC.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.Cluster(obj.(*convoyv1alpha1.Cluster))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ClusterUpdate(obj.(*convoyv1alpha1.Cluster), old.(*convoyv1alpha1.Cluster))
}

// statusStrategy: a /status write changes only status.
type statusStrategy struct {
	strategy
}

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return registry.ResetFields("spec", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*convoyv1alpha1.Cluster), old.(*convoyv1alpha1.Cluster)
	c.Spec = oldC.Spec
	metav1.ResetObjectMetaForStatus(&c.ObjectMeta, &oldC.ObjectMeta)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c := obj.(*convoyv1alpha1.Cluster)
	errs := validation.ObjectMetaUpdate(&c.ObjectMeta, &old.(*convoyv1alpha1.Cluster).ObjectMeta)
	return append(errs, metav1validation.ValidateConditions(c.Status.Conditions, field.NewPath("status", "conditions"))...)
}

var tableConvertor = registry.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "True, or the reason of the Ready condition."},
		{Name: "Version", Type: "string", Description: "The cluster's Kubernetes version."},
		registry.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		c, ok := obj.(*convoyv1alpha1.Cluster)
		if !ok {
			return nil, fmt.Errorf("not a Cluster: %T", obj)
		}
		ready := ""
		if cond := meta.FindStatusCondition(c.Status.Conditions, convoyv1alpha1.ConditionReady); cond != nil {
			ready = string(cond.Status)
			if cond.Status != metav1.ConditionTrue && cond.Reason != "" {
				ready = cond.Reason
			}
		}
		return []interface{}{ready, c.Status.KubernetesVersion, registry.Age(c.CreationTimestamp)}, nil
	},
}
