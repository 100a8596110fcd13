package hostmanager

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kumodo.io/convoy/internal/policy"
)

// Namespace reads the namespace name from reader (the manager's cache, or the API
// server) as the decision core knows a namespace: not found, or found with its UID,
// creation time and whether it is being deleted.
func Namespace(ctx context.Context, reader client.Reader, name string) (policy.Namespace, error) {
	ns := &corev1.Namespace{}
	err := reader.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		return policy.Namespace{}, nil
	case err != nil:
		return policy.Namespace{}, err
	}
	return policy.Namespace{Found: true, UID: ns.UID, Created: ns.CreationTimestamp.Time, Terminating: ns.DeletionTimestamp != nil}, nil
}
