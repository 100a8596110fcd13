package releaseset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// GetAttrs returns the labels and the selectable fields of a ReleaseSet:
// metadata.name and metadata.namespace.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	s, ok := obj.(*convoyv1alpha1.ReleaseSet)
	if !ok {
		return nil, nil, fmt.Errorf("not a ReleaseSet: %T", obj)
	}
	return labels.Set(s.Labels), generic.ObjectMetaFieldsSet(&s.ObjectMeta, true), nil
}
