package release

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// GetAttrs returns the labels and the selectable fields of a Release: metadata.name,
// metadata.namespace and spec.cluster.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	r, ok := obj.(*convoyv1alpha1.Release)
	if !ok {
		return nil, nil, fmt.Errorf("not a Release: %T", obj)
	}
	return labels.Set(r.Labels), selectableFields(r), nil
}

func selectableFields(r *convoyv1alpha1.Release) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{
		convoyv1alpha1.FieldReleaseCluster: r.Spec.Cluster,
	}, &r.ObjectMeta, true)
}
