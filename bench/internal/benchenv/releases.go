package benchenv

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// ListResourceVersion lists resource ("releases" or "releaseinventories") in namespace
// through the convoy API and returns the list's resourceVersion.
func (e *Env) ListResourceVersion(ctx context.Context, namespace, resource string) (string, error) {
	var out runtime.Object = &convoyv1alpha1.ReleaseInventoryList{}
	if resource == "releases" {
		out = &convoyv1alpha1.ReleaseList{}
	}
	if err := e.Convoy.Get().Namespace(namespace).Resource(resource).Do(ctx).Into(out); err != nil {
		return "", err
	}
	a, err := meta.ListAccessor(out)
	if err != nil {
		return "", err
	}
	return a.GetResourceVersion(), nil
}

// PodinfoRelease is the benchmarks' Release: the podinfo-shaped chart 6.7.1 of the
// chart repository at repoURL, in automatic mode.
func PodinfoRelease(namespace, name, repoURL string) *convoyv1alpha1.Release {
	return &convoyv1alpha1.Release{
		TypeMeta:   metav1.TypeMeta{APIVersion: convoyv1alpha1.SchemeGroupVersion.String(), Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart:      convoyv1alpha1.ChartSource{Repository: repoURL, Name: "podinfo", Version: "6.7.1"},
			SyncPolicy: convoyv1alpha1.SyncPolicy{Automatic: ptr.To(true)},
		},
	}
}
