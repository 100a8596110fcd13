package registry

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/client-go/kubernetes"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/policy"
)

// Namespaces reads a namespace of the host cluster from kube-apiserver itself (not
// from a cache, which may still hold an earlier namespace of that name).
type Namespaces interface {
	Get(ctx context.Context, name string) (*corev1.Namespace, error)
}

// LiveNamespaces is Namespaces over a client of the host cluster.
type LiveNamespaces struct {
	Client kubernetes.Interface
}

// Get reads the namespace name.
func (n LiveNamespaces) Get(ctx context.Context, name string) (*corev1.Namespace, error) {
	return n.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
}

// RecordNamespaceUID returns a copy of store, the storage of a namespaced kind's main
// resource, that records in AnnotationNamespaceUID the UID of the namespace an object
// is created in, read from kube-apiserver at the create: a value in the request (a
// copy from another cluster or namespace, a restore from a backup) is replaced. Every
// update keeps the stored value: a request that changes or removes it is not refused,
// the stored value silently stays, as metadata.uid does. On an object stored without
// one (created before convoy recorded it), an update may record it once, and only as
// the UID of the namespace the object provably belongs to (policy.NamespaceUIDToRecord):
// any other value is refused. With namespaces nil (a server without a client of the
// host cluster) store is returned as is and nothing is recorded.
//
// Only the main resource records it: the subresources (status and the like) keep the
// stored metadata whatever the request says.
func RecordNamespaceUID(store *genericregistry.Store, kind string, namespaces Namespaces) *genericregistry.Store {
	if namespaces == nil {
		return store
	}
	gk := schema.GroupKind{Group: convoyv1alpha1.GroupName, Kind: kind}
	copied := *store
	copied.BeginCreate = func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		ns, err := readNamespace(ctx, namespaces, gk, m)
		if err != nil {
			return nil, err
		}
		if ns.DeletionTimestamp != nil {
			// As NamespaceLifecycle admission, which decided on its cache.
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: gk.Group, Resource: store.DefaultQualifiedResource.Resource}, m.GetName(),
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
		}
		setNamespaceUID(m, string(ns.UID))
		return finishNothing, nil
	}
	copied.BeginUpdate = func(ctx context.Context, obj, old runtime.Object, _ *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		o, err := meta.Accessor(old)
		if err != nil {
			return nil, err
		}
		stored, had := o.GetAnnotations()[convoyv1alpha1.AnnotationNamespaceUID]
		value, has := m.GetAnnotations()[convoyv1alpha1.AnnotationNamespaceUID]
		switch {
		case had:
			if !has || value != stored {
				setNamespaceUID(m, stored)
			}
			return finishNothing, nil
		case !has:
			return finishNothing, nil
		}
		ns, err := readNamespace(ctx, namespaces, gk, m)
		if err != nil {
			return nil, err
		}
		want := policy.NamespaceUIDToRecord(policy.Stored{Created: o.GetCreationTimestamp().Time}, policy.Namespace{
			Found: true, UID: ns.UID, Created: ns.CreationTimestamp.Time, Terminating: ns.DeletionTimestamp != nil,
		})
		if want == "" || types.UID(value) != want {
			path := field.NewPath("metadata", "annotations").Key(convoyv1alpha1.AnnotationNamespaceUID)
			return nil, apierrors.NewInvalid(gk, m.GetName(), field.ErrorList{field.Invalid(path, value, fmt.Sprintf(
				"convoy apiserver records the UID of the namespace a %s is created in; on one created before it did, "+
					"the value may be set only to the UID of namespace %s (%s), once that namespace provably held the %s "+
					"(it was created more than %s before it, and is not terminating): remove the annotation from the request",
				kind, ns.Name, ns.UID, kind, policy.ClockSkewMargin))})
		}
		return finishNothing, nil
	}
	return &copied
}

// readNamespace reads the namespace of m, or returns the error to answer with.
func readNamespace(ctx context.Context, namespaces Namespaces, gk schema.GroupKind, m metav1.Object) (*corev1.Namespace, error) {
	ns, err := namespaces.Get(ctx, m.GetNamespace())
	switch {
	case apierrors.IsNotFound(err):
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), m.GetNamespace())
	case err != nil:
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf(
			"cannot read namespace %s, whose UID convoy apiserver records on the %s %s; retry: %v", m.GetNamespace(), gk.Kind, m.GetName(), err))
	}
	return ns, nil
}

// setNamespaceUID sets AnnotationNamespaceUID on m to uid, in a copy of its annotations
// (the map may be shared with the stored object).
func setNamespaceUID(m metav1.Object, uid string) {
	annotations := maps.Clone(m.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[convoyv1alpha1.AnnotationNamespaceUID] = uid
	m.SetAnnotations(annotations)
}

func finishNothing(context.Context, bool) {}
