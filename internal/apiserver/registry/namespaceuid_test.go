package registry

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

// oneNamespace is Namespaces holding one namespace.
type oneNamespace corev1.Namespace

func (n *oneNamespace) Get(_ context.Context, name string) (*corev1.Namespace, error) {
	if name != n.Name {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	ns := corev1.Namespace(*n)
	return &ns, nil
}

// The updates of an object's namespace UID (the creates are tested against the
// local control plane, in internal/apiserver/integration, where no object without
// one can be made): a recorded value stays whatever the request says; one without
// gets it once, only as the UID of the namespace it provably belongs to.
func TestNamespaceUIDOnUpdate(t *testing.T) {
	created := time.Date(2026, 12, 6, 5, 18, 2, 0, time.UTC)
	const ownUID, otherUID = "0b7f1a52-0000-4000-8000-000000000001", "0b7f1a52-0000-4000-8000-000000000002"
	namespace := func(d time.Duration) *oneNamespace {
		return &oneNamespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", UID: ownUID, CreationTimestamp: metav1.NewTime(created.Add(d))}}
	}
	release := func(annotations map[string]string) *convoyv1alpha1.Release {
		return &convoyv1alpha1.Release{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web",
			CreationTimestamp: metav1.NewTime(created), Annotations: annotations}}
	}
	uid := func(v string) map[string]string {
		return map[string]string{convoyv1alpha1.AnnotationNamespaceUID: v, "note": "x"}
	}
	tests := map[string]struct {
		ns       *oneNamespace
		old, obj map[string]string
		want     map[string]string // the annotations after the hook; nil with invalid
		invalid  bool
	}{
		"recorded, unchanged":                       {ns: namespace(-time.Hour), old: uid(ownUID), obj: uid(ownUID), want: uid(ownUID)},
		"recorded, changed: the stored value stays": {ns: namespace(-time.Hour), old: uid(ownUID), obj: uid(otherUID), want: uid(ownUID)},
		"recorded, removed: the stored value stays": {ns: namespace(-time.Hour), old: uid(ownUID), obj: map[string]string{"note": "x"},
			want: uid(ownUID)},
		"recorded, a later namespace: the stored value stays": {ns: namespace(time.Hour), old: uid(ownUID), obj: uid(otherUID), want: uid(ownUID)},
		"none recorded, none set":                             {ns: namespace(-time.Hour), old: nil, obj: map[string]string{"note": "x"}, want: map[string]string{"note": "x"}},
		"none recorded, its namespace's UID":                  {ns: namespace(-time.Hour), old: nil, obj: uid(ownUID), want: uid(ownUID)},
		"none recorded, another UID":                          {ns: namespace(-time.Hour), old: nil, obj: uid(otherUID), invalid: true},
		"none recorded, a namespace within the margin":        {ns: namespace(-time.Second), old: nil, obj: uid(ownUID), invalid: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			store := RecordNamespaceUID(&genericregistry.Store{}, "Release", tc.ns)
			obj := release(tc.obj)
			_, err := store.BeginUpdate(context.Background(), obj, release(tc.old), nil)
			if tc.invalid {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("BeginUpdate: %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("BeginUpdate: %v", err)
			}
			if diff := cmp.Diff(tc.want, obj.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}
