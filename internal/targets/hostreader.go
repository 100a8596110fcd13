package targets

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HostReader is what a Cache reads on the host: Clusters and Namespaces from
// the cache, Secrets (kubeconfigs) from the API server.
type HostReader struct {
	Cached client.Reader
	Direct client.Reader
}

func (h HostReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		return h.Direct.Get(ctx, key, obj, opts...)
	}
	return h.Cached.Get(ctx, key, obj, opts...)
}

func (h HostReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.SecretList); ok {
		return h.Direct.List(ctx, list, opts...)
	}
	return h.Cached.List(ctx, list, opts...)
}
