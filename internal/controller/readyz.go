package controller

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/store"
)

// watchedKinds are the kinds whose informers the controllers of Setup watch, as they
// watch them (Secrets as metadata only): the release controller's Releases and
// ReleaseInventories and Render metadata (indexed by Release), the Cluster status
// controller's Clusters and kubeconfig Secrets, and the Namespaces (whose creations
// and deletions reconcile the Releases in them: checkNamespace), and the ReleaseSet
// controller's ReleaseSets.
func watchedKinds() []client.Object {
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return []client.Object{&v1.Release{}, &v1.ReleaseInventory{}, &v1.Cluster{}, secret, store.RenderMetadata(), &corev1.Namespace{},
		&v1.ReleaseSet{}}
}

// informersSynced is a readiness check that passes once the informer of every kind
// of objs has synced: until then the controller reconciles nothing (and a fresh
// manager's /readyz must not say it is ready). It never blocks: an informer that is
// missing is created (as the controllers will), not waited for.
func informersSynced(c cache.Cache, objs ...client.Object) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		defer cancel()
		for _, obj := range objs {
			informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("the informer of %s: %w", kindOf(obj), err)
			}
			if !informer.HasSynced() {
				return fmt.Errorf("the informer of %s has not synced", kindOf(obj))
			}
		}
		return nil
	}
}

func kindOf(obj client.Object) string {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return m.Kind + " (metadata)"
	}
	return reflect.TypeOf(obj).Elem().Name()
}
