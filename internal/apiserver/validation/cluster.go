package validation

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// Cluster validates a Cluster.
func Cluster(c *convoyv1alpha1.Cluster) field.ErrorList {
	errs := ObjectMeta(&c.ObjectMeta, false)
	return append(errs, clusterSpec(&c.Spec, field.NewPath("spec"))...)
}

// ClusterUpdate validates an updated Cluster.
func ClusterUpdate(c, old *convoyv1alpha1.Cluster) field.ErrorList {
	errs := ObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	return append(errs, clusterSpec(&c.Spec, field.NewPath("spec"))...)
}

func clusterSpec(spec *convoyv1alpha1.ClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ref := spec.Kubeconfig.SecretRef
	refPath := path.Child("kubeconfig", "secretRef")
	if ref.Namespace == "" {
		errs = append(errs, field.Required(refPath.Child("namespace"), "the namespace of the kubeconfig Secret"))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), "the name of the kubeconfig Secret"))
	}
	if spec.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.NamespaceSelector,
			metav1validation.LabelSelectorValidationOptions{}, path.Child("namespaceSelector"))...)
	}
	return errs
}
